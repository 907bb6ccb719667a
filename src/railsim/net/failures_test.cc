// Tests of failure specs on the built graph: names, what each failure cuts,
// forwarders, and routes around failures, against hand counts of small
// networks.
#include "railsim/net/failures.h"

#include <string>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "testutil/topology.h"

namespace railsim::net {
namespace {

Topology Build(Design design, int64_t gpus, int k, int radix) {
  TopologyParams p = testutil::TopologyOf(design, gpus, k, radix);
  ValidateTopologyParams(p);
  return BuildTopology(p);
}

std::string ErrorOf(const Topology& t, const std::vector<std::string>& names) {
  try {
    ResolveFailures(t, names, "--fail");
  } catch (const Error& e) {
    EXPECT_EQ("--fail", e.where());
    return e.message();
  }
  return "";
}

std::vector<int64_t> Disconnected(const Topology& t, const FailureSet& f) {
  std::vector<int64_t> out;
  for (int64_t g = 0; g < t.gpus(); ++g) {
    if (f.disconnected(g)) out.push_back(g);
  }
  return out;
}

TEST(FailuresTest, RailOnlyLeafCutsExactlyItsGpusAndTheyAreForwarded) {
  // 64 GPUs, K = 8: eight rails of 8 GPUs; radix 4 gives each rail 4 leaves
  // of 2 GPUs (domains 0-1, 2-3, 4-5, 6-7) under 2 spines.
  Topology t = Build(Design::kRailOnly, 64, 8, 4);
  FailureSet f = ResolveFailures(t, {"switch:rail3/leaf1"}, "--fail");
  // Leaf 1 of rail 3 holds rail 3 of domains 2 and 3: GPUs 2*8+3 and 3*8+3.
  EXPECT_EQ((std::vector<int64_t>{19, 27}), Disconnected(t, f));
  // Each is forwarded by the first healthy GPU of its domain (local rank 0).
  EXPECT_EQ(16, f.forwarder[19]);
  EXPECT_EQ(24, f.forwarder[27]);
  EXPECT_EQ(1, f.forwarded_for[16]);
  EXPECT_EQ(0, f.gpu_removed[19]);
  // 19 -> 3 (rail 3 of domain 0): over NVLink to 16, along rail 0 to GPU 0,
  // over NVLink to 3.
  Hop hops[kMaxRouteHops];
  int n = RouteAroundFailures(t, f, 19, 3, {}, hops);
  ASSERT_GT(n, 4);
  EXPECT_EQ(t.hb_link(19), hops[0].link);
  EXPECT_EQ(t.hb_link(16), hops[1].link);
  EXPECT_EQ(t.pcie_link(16), hops[2].link);
  EXPECT_EQ(t.hb_link(0), hops[n - 2].link);
  EXPECT_EQ(t.hb_link(3), hops[n - 1].link);
  for (int i = 0; i < n; ++i) EXPECT_FALSE(f.link_down[hops[i].link]);
  // Unaffected pairs keep the healthy route.
  Hop healthy[kMaxRouteHops];
  int m = t.RouteInto(18, 2, {}, healthy);
  ASSERT_EQ(m, RouteAroundFailures(t, f, 18, 2, {}, hops));
  for (int i = 0; i < m; ++i) EXPECT_EQ(healthy[i].link, hops[i].link);
}

TEST(FailuresTest, NicFailureForwardsThroughTheHbDomain) {
  Topology t = Build(Design::kRailOnly, 64, 8, 4);
  FailureSet f = ResolveFailures(t, {"nic5"}, "--fail");
  EXPECT_EQ((std::vector<int64_t>{5}), Disconnected(t, f));
  EXPECT_EQ(0, f.forwarder[5]);
  // Two NICs failed in one domain share out over the 6 healthy ones.
  FailureSet two = ResolveFailures(t, {"nic5", "nic6"}, "--fail");
  EXPECT_EQ(0, two.forwarder[5]);
  EXPECT_EQ(1, two.forwarder[6]);
  // The NIC-to-leaf cable, named by its ends, does the same.
  FailureSet cable = ResolveFailures(t, {"link:nic5-rail5/leaf0"}, "--fail");
  EXPECT_EQ((std::vector<int64_t>{5}), Disconnected(t, cable));
  // Seven of eight NICs down: the last one forwards for all seven.
  FailureSet seven = ResolveFailures(t, {"nic0", "nic1", "nic2", "nic3", "nic4", "nic5", "nic6"}, "--fail");
  EXPECT_EQ(7, seven.forwarded_for[7]);
}

// With two GPUs behind each NIC, a NIC (or its cable) cuts both, and both
// are forwarded by GPUs on the domain's other NICs; the NICs are numbered
// 0 to N/2 - 1, and a domain failure still takes its 8 GPUs.
TEST(FailuresTest, ASharedNicCutsBothItsGpus) {
  TopologyParams p = testutil::TopologyOf(Design::kRailOnly, 64, 8, 4);
  p.gpus_per_nic = 2;
  const Topology t = BuildTopology(p);
  FailureSet f = ResolveFailures(t, {"nic2"}, "--fail");
  EXPECT_EQ((std::vector<int64_t>{4, 5}), Disconnected(t, f));
  // The forwarders sit on two different NICs (gpu0 on nic0, gpu2 on nic1),
  // not on the two GPUs of nic0.
  EXPECT_EQ(0, f.forwarder[4]);
  EXPECT_EQ(2, f.forwarder[5]);
  FailureSet cable = ResolveFailures(t, {"link:nic2-rail2/leaf0"}, "--fail");
  EXPECT_EQ((std::vector<int64_t>{4, 5}), Disconnected(t, cable));
  EXPECT_EQ("\"nic32\": no such device; this network has nic0 to nic31", ErrorOf(t, {"nic32"}));
  FailureSet domain = ResolveFailures(t, {"hb1"}, "--fail");
  int removed = 0;
  for (int64_t g = 0; g < 64; ++g) removed += domain.gpu_removed[g];
  EXPECT_EQ(8, removed);
}

TEST(FailuresTest, HbDomainFailureRemovesItsGpus) {
  Topology t = Build(Design::kRailOptimized, 64, 8, 16);
  FailureSet f = ResolveFailures(t, {"hb2"}, "--fail");
  int removed = 0;
  for (int64_t g = 0; g < 64; ++g) {
    EXPECT_EQ(g >= 16 && g < 24, f.gpu_removed[g] != 0) << g;
    removed += f.gpu_removed[g];
  }
  EXPECT_EQ(8, removed);
  EXPECT_TRUE(Disconnected(t, f).empty());
}

TEST(FailuresTest, SpineFailureDisconnectsNobodyAndReroutes) {
  // 64 GPUs at radix 16: 8 leaves of 8 GPUs, 4 spines (two tiers).
  Topology t = Build(Design::kRailOptimized, 64, 8, 16);
  ASSERT_EQ(2, t.tiers());
  FailureSet f = ResolveFailures(t, {"switch:spine0"}, "--fail");
  EXPECT_TRUE(Disconnected(t, f).empty());
  int64_t down = 0, total = 0;
  for (LinkId l = 0; l < static_cast<LinkId>(t.links().size()); ++l) {
    if (t.links()[l].kind != LinkKind::kLeafToSpine) continue;
    ++total;
    down += f.link_down[l];
  }
  EXPECT_EQ(total / 4, down);  // one spine of four
  // Every pair across leaves still has a live path, none through spine0.
  Hop hops[kMaxRouteHops];
  for (int64_t src = 0; src < 64; src += 3) {
    for (int64_t dst = 1; dst < 64; dst += 5) {
      int n = RouteAroundFailures(t, f, src, dst, {}, hops);
      ASSERT_GE(n, 0) << src << " " << dst;
      for (int i = 0; i < n; ++i) EXPECT_FALSE(f.link_down[hops[i].link]);
    }
  }
}

TEST(FailuresTest, NamesAreCheckedWithTheValidRangeOrASuggestion) {
  Topology t = Build(Design::kRailOnly, 64, 8, 4);
  EXPECT_NE(std::string::npos, ErrorOf(t, {"gpu64"}).find("gpu0 to gpu63")) << ErrorOf(t, {"gpu64"});
  EXPECT_NE(std::string::npos, ErrorOf(t, {"hb8"}).find("hb0 to hb7"));
  EXPECT_NE(std::string::npos, ErrorOf(t, {"switch:rail3/leaf9"}).find("did you mean 'switch:rail3/leaf"))
      << ErrorOf(t, {"switch:rail3/leaf9"});
  EXPECT_NE(std::string::npos, ErrorOf(t, {"swtch:spine0"}).find("did you mean 'switch:'"))
      << ErrorOf(t, {"swtch:spine0"});
  EXPECT_NE(std::string::npos, ErrorOf(t, {"switch:gpu3"}).find("not a switch"));
  EXPECT_NE(std::string::npos, ErrorOf(t, {"link:gpu0-gpu1"}).find("not linked"));
  EXPECT_NE(std::string::npos, ErrorOf(t, {"link:rail0/leaf0"}).find("two ends"));
  EXPECT_NE(std::string::npos, ErrorOf(t, {"gpu-1"}).find("not a device name"));
  // Rail-only has no shared spine.
  EXPECT_NE(std::string::npos, ErrorOf(t, {"switch:spine0"}).find("no such device in the rail-only network"));
}

TEST(FailuresTest, ParallelCablesAreNumbered) {
  // 32 GPUs, K = 8, on rail-optimized radix 16: rails of 4 GPUs, two to a
  // leaf of 8 down-ports, so 4 leaves of 8 GPUs with 8 uplinks each over 2
  // spines: 4 parallel cables per leaf-spine pair.
  Topology t = Build(Design::kRailOptimized, 32, 8, 16);
  FailureSet f = ResolveFailures(t, {"link:leaf0-spine0#1"}, "--fail");
  int down = 0;
  for (uint8_t d : f.link_down) down += d;
  EXPECT_EQ(1, down);
  LinkId l = -1;
  for (LinkId i = 0; i < static_cast<LinkId>(f.link_down.size()); ++i) {
    if (f.link_down[i]) l = i;
  }
  EXPECT_EQ("link:leaf0-spine0#1", LinkName(t, l));
  EXPECT_NE(std::string::npos, ErrorOf(t, {"link:leaf0-spine0#4"}).find("#0 to #3")) << ErrorOf(t, {"link:leaf0-spine0#4"});
}

TEST(FailuresTest, EverySpineDownCutsTheFabricApart) {
  // 256 GPUs, K = 8, rail-optimized radix 16: 32 leaves of 8 GPUs in 4 pods
  // of 8 with 8 "spine" (aggregation) switches each, 32 in all, under a
  // core. With every spine down, a leaf reaches only itself:
  // HB domain 0's NICs sit on the leaves of GPUs 0-63 (one leaf per rail),
  // domain 8's on those of GPUs 64-127, and no leaf holds both, so no
  // domain can reach every other, even by forwarding.
  Topology t = Build(Design::kRailOptimized, 256, 8, 16);
  std::vector<std::string> spines;
  for (const Node& n : t.nodes()) {
    if (n.kind == NodeKind::kSwitch && n.tier == Tier::kSpine) spines.push_back("switch:spine" + std::to_string(n.index));
  }
  ASSERT_EQ(32u, spines.size());
  EXPECT_EQ(32, PartitionedDomains(t, ResolveFailures(t, spines, "--fail")));
  // One spine down leaves every domain joined; so does a NIC (forwarded).
  EXPECT_EQ(0, PartitionedDomains(t, ResolveFailures(t, {spines[0]}, "--fail")));
  EXPECT_EQ(0, PartitionedDomains(t, ResolveFailures(t, {"nic5"}, "--fail")));
  // Rail-only's rails are separate fabrics by design, joined through every
  // HB domain: nothing is cut.
  Topology only = Build(Design::kRailOnly, 256, 8, 16);
  EXPECT_EQ(0, PartitionedDomains(only, ResolveFailures(only, {"switch:rail0/spine0"}, "--fail")));
}

TEST(FailuresTest, ListsAndFilesParse) {
  EXPECT_EQ((std::vector<std::string>{"gpu1", "switch:spine0"}), SplitFailureList("gpu1, switch:spine0", "--fail"));
  EXPECT_THROW(SplitFailureList("gpu1,,gpu2", "--fail"), Error);
  EXPECT_THROW(SplitFailureList("", "--fail"), Error);
  EXPECT_EQ((std::vector<std::string>{"nic3", "hb1"}), ParseFailureFile(R"(["nic3", "hb1"])", "--fail-file"));
  try {
    ParseFailureFile(R"(["nic3", 4])", "--fail-file");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string::npos, e.message().find("/1:")) << e.message();
  }
  EXPECT_THROW(ParseFailureFile("{}", "--fail-file"), Error);
  EXPECT_THROW(ParseFailureFile("[]", "--fail-file"), Error);
  EXPECT_THROW(ParseFailureFile("[\"gpu1\"", "--fail-file"), Error);
}

}  // namespace
}  // namespace railsim::net
