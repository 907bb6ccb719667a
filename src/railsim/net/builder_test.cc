// Tests of the network builders against the paper's Table II and against
// hand counts of small and non-exact topologies.
#include "railsim/net/builder.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "testutil/reference_data.h"
#include "railsim/net/bom.h"
#include "testutil/topology.h"
#include "railsim/study/network_study.h"

namespace railsim::net {
namespace {

spec::PortClass PaperPrices() {
  spec::PortClass c;
  c.port_speed_Bps = 50e9;
  c.switch_port_cost_usd = 694;
  c.transceiver_cost_usd = 199;
  c.switch_port_power_w = 17;
  c.transceiver_power_w = 9;
  return c;
}

TopologyParams Params(Design design, int64_t gpus, int k, int radix, double oversub = 1) {
  return testutil::TopologyOf(design, gpus, k, radix, oversub);
}

BillOfMaterials Count(Design design, int64_t gpus, int k, int radix, double oversub = 1) {
  TopologyParams p = Params(design, gpus, k, radix, oversub);
  ValidateTopologyParams(p);
  return CountBill(BuildTopology(p), PaperPrices());
}

struct TableRow {
  int64_t gpus;
  int radix;
  int64_t railopt_switches, railopt_transceivers, railonly_switches, railonly_transceivers;
  int cost_saving_pct, power_saving_pct;
};

std::vector<TableRow> ReadTable2() {
  std::vector<TableRow> rows;
  for (const std::vector<std::string>& cells : testutil::ReadReferenceCsv("rail-only-table2.csv")) {
    rows.push_back({std::stoll(cells[0]), std::stoi(cells[1]), std::stoll(cells[2]), std::stoll(cells[3]),
                    std::stoll(cells[4]), std::stoll(cells[5]), std::stoi(cells[6]), std::stoi(cells[7])});
  }
  return rows;
}

TEST(BuilderTest, ReproducesPaperTableTwo) {
  std::vector<TableRow> rows = ReadTable2();
  ASSERT_EQ(5u, rows.size());
  for (const TableRow& row : rows) {
    SCOPED_TRACE(testing::Message() << row.gpus << " GPUs, radix " << row.radix);
    TopologyParams p = Params(Design::kRailOnly, row.gpus, 256, row.radix);
    std::vector<study::DesignResult> r = study::CompareDesigns(p, PaperPrices());
    const BillOfMaterials& opt = r[0].bom;
    const BillOfMaterials& only = r[1].bom;
    EXPECT_EQ(row.railopt_switches, opt.switches);
    EXPECT_EQ(row.railopt_transceivers, opt.transceivers);
    EXPECT_EQ(row.railonly_switches, only.switches);
    EXPECT_EQ(row.railonly_transceivers, only.transceivers);
    EXPECT_EQ(row.cost_saving_pct, std::lround(100 * r[1].cost_saving));
    EXPECT_EQ(row.power_saving_pct, std::lround(100 * r[1].power_saving));
    std::printf("  %6lld GPUs radix %3d: cost saving %.1f%% (paper %d%%), power saving %.1f%% (paper %d%%)\n",
                static_cast<long long>(row.gpus), row.radix, 100 * r[1].cost_saving,
                row.cost_saving_pct, 100 * r[1].power_saving, row.power_saving_pct);
  }
}

TEST(BuilderTest, PaperBaselineDollarsAndWatts) {
  // Reference section 3: 32,768 GPUs at radix 64 cost $152,829,952 on
  // rail-optimized and $94,306,304 on Rail-only; 17 W/port and 9 W/transceiver
  // give a 4.55 MW baseline. By hand: 2,560 switches x 64 ports x $694 +
  // 196,608 transceivers x $199 = 113,704,960 + 39,124,992.
  BillOfMaterials opt = Count(Design::kRailOptimized, 32768, 256, 64);
  BillOfMaterials only = Count(Design::kRailOnly, 32768, 256, 64);
  EXPECT_DOUBLE_EQ(152829952.0, opt.cost_usd);
  EXPECT_DOUBLE_EQ(94306304.0, only.cost_usd);
  EXPECT_DOUBLE_EQ(2560.0 * 64 * 17 + 196608.0 * 9, opt.power_w);
  EXPECT_NEAR(4.55e6, opt.power_w, 0.005e6);
}

TEST(BuilderTest, ClosedFormsInExactCases) {
  // E endpoints, radix k: E <= k one switch; E <= k^2/2 3E/k switches and 4E
  // transceivers; E <= k^3/4 5E/k and 6E.
  BillOfMaterials one = Count(Design::kFatTree, 64, 8, 64);
  EXPECT_EQ(1, one.switches);
  EXPECT_EQ(128, one.transceivers);
  BillOfMaterials two = Count(Design::kFatTree, 2048, 8, 64);
  EXPECT_EQ(2, two.tiers);
  EXPECT_EQ(3 * 2048 / 64, two.switches);
  EXPECT_EQ(4 * 2048, two.transceivers);
  BillOfMaterials three = Count(Design::kFatTree, 65536, 8, 64);
  EXPECT_EQ(3, three.tiers);
  EXPECT_EQ(5 * 65536 / 64, three.switches);
  EXPECT_EQ(6 * 65536, three.transceivers);
  ASSERT_EQ(3u, three.switches_by_tier.size());
  EXPECT_EQ(2048, three.switches_by_tier[0]);
  EXPECT_EQ(2048, three.switches_by_tier[1]);
  EXPECT_EQ(1024, three.switches_by_tier[2]);
}

TEST(BuilderTest, NonExactSizesRoundUpHonestly) {
  // 100 GPUs, radix 16, fat tree: 8 down-ports per leaf -> 13 leaves (12 full,
  // one with 4 GPUs). Demands 8 x 12 + 4 = 100 up-links -> 7 spines of 16
  // ports; every leaf must reach every spine, so the partial leaf takes 7
  // up-links, not 4: 103 leaf-spine links. Links = 100 + 103; switches 20.
  BillOfMaterials b = Count(Design::kFatTree, 100, 4, 16);
  EXPECT_EQ(2, b.tiers);
  EXPECT_EQ(20, b.switches);
  EXPECT_EQ(13, b.switches_by_tier[0]);
  EXPECT_EQ(7, b.switches_by_tier[1]);
  EXPECT_EQ(203, b.links);
  EXPECT_EQ(406, b.transceivers);
  EXPECT_EQ(20 * 16, b.switch_ports);
  EXPECT_EQ(100 + 2 * 103, b.switch_ports_used);  // leaf side of NIC links + both ends of the rest
}

TEST(BuilderTest, RailOptimizedLeavesNeverSpanRails) {
  // 8 rails of 20 GPUs, radix 16 (8 down-ports): each rail needs 3 leaves
  // (8 + 8 + 4), so 24 leaves, where an unaligned fat tree needs 20.
  BillOfMaterials opt = Count(Design::kRailOptimized, 160, 8, 16);
  BillOfMaterials fat = Count(Design::kFatTree, 160, 8, 16);
  EXPECT_EQ(24, opt.switches_by_tier[0]);
  EXPECT_EQ(20, fat.switches_by_tier[0]);
}

TEST(BuilderTest, RailOptimizedSmallRailsShareALeaf) {
  // 256 GPUs in one HB domain of 256 at radix 64 (32 down-ports): 256 rails
  // of one GPU each. One leaf per rail would be 256 leaves and 3 tiers (268
  // switches); 32 whole rails share each leaf instead: 8 leaves, each with
  // 32 up-links over ceil(8 x 32 / 64) = 4 spines, 12 switches in 2 tiers,
  // as many as the fat tree of the same GPUs.
  BillOfMaterials opt = Count(Design::kRailOptimized, 256, 256, 64);
  BillOfMaterials fat = Count(Design::kFatTree, 256, 256, 64);
  EXPECT_EQ(2, opt.tiers);
  EXPECT_EQ(8, opt.switches_by_tier[0]);
  EXPECT_EQ(12, opt.switches);
  EXPECT_EQ(fat.switches, opt.switches);
  // Rail-only: 256 one-GPU rails, 64 to a chassis: 4 switches.
  EXPECT_EQ(4, Count(Design::kRailOnly, 256, 256, 64).switches);
  // A rail of 20 GPUs never shares a leaf of 8 down-ports (see below).
  EXPECT_EQ(24, Count(Design::kRailOptimized, 160, 8, 16).switches_by_tier[0]);
}

TEST(BuilderTest, RailOnlyPartitionsSmallRails) {
  // 8 rails of 16 GPUs at radix 64: four rails share one partitioned chassis,
  // so 2 switches (the paper's N/k), 128 links.
  BillOfMaterials b = Count(Design::kRailOnly, 128, 8, 64);
  EXPECT_EQ(2, b.switches);
  EXPECT_EQ(128, b.links);
  EXPECT_EQ(1, b.tiers);
}

TEST(BuilderTest, OversubscriptionShrinksUpperTiers) {
  // Radix 64 at 3:1: 48 down, 16 up per leaf. 3,072 GPUs -> 64 leaves, 1,024
  // up-links -> 16 spines. Links 3,072 + 1,024.
  EXPECT_EQ(48, LeafDownPorts(64, 3));
  BillOfMaterials b = Count(Design::kFatTree, 3072, 8, 64, 3);
  EXPECT_EQ(64, b.switches_by_tier[0]);
  EXPECT_EQ(16, b.switches_by_tier[1]);
  EXPECT_EQ(3072 + 1024, b.links);
}

TEST(BuilderTest, DeviceNames) {
  Topology t = BuildTopology(Params(Design::kRailOnly, 512, 8, 16));
  EXPECT_EQ("gpu0", t.NodeName(t.gpu_node(0)));
  EXPECT_EQ("nic511", t.NodeName(t.nic_node(511)));
  EXPECT_EQ("hb3", t.NodeName(t.hb_node(3)));
  // Rail 0 has 64 GPUs (0, 8, 16, ...): 8 leaves of 8, then spines. gpu64 is
  // the ninth GPU of rail 0, on rail0/leaf1.
  std::vector<NodeId> path = t.RouteNodes(0, 64);
  ASSERT_EQ(7u, path.size());  // gpu, nic, leaf, spine, leaf, nic, gpu
  EXPECT_EQ("gpu0", t.NodeName(path[0]));
  EXPECT_EQ("nic0", t.NodeName(path[1]));
  EXPECT_EQ("rail0/leaf0", t.NodeName(path[2]));
  EXPECT_EQ("rail0/spine", t.NodeName(path[3]).substr(0, 11));
  EXPECT_EQ("rail0/leaf1", t.NodeName(path[4]));
  EXPECT_EQ("gpu64", t.NodeName(path[6]));
  Topology opt = BuildTopology(Params(Design::kRailOptimized, 512, 8, 16));
  EXPECT_EQ("leaf0", opt.NodeName(opt.RouteNodes(0, 64)[2]));  // gpu0 and gpu64: rail 0, other domain
}

TEST(BuilderTest, RailOnlyForwardsCrossRailThroughHbDomain) {
  // gpu1 (domain 0, rail 1) to gpu10 (domain 1, rail 2): NVLink to gpu2, the
  // rail-2 GPU of domain 0, then rail 2's network to gpu10.
  Topology t = BuildTopology(Params(Design::kRailOnly, 64, 8, 16));
  std::vector<NodeId> path = t.RouteNodes(1, 10);
  ASSERT_GE(path.size(), 4u);
  EXPECT_EQ("gpu1", t.NodeName(path[0]));
  EXPECT_EQ("hb0", t.NodeName(path[1]));
  EXPECT_EQ("gpu2", t.NodeName(path[2]));
  EXPECT_EQ("nic2", t.NodeName(path[3]));
  EXPECT_EQ("rail2/leaf0", t.NodeName(path[4]));
  EXPECT_EQ("gpu10", t.NodeName(path.back()));
  // Same domain: NVLink only.
  std::vector<NodeId> local = t.RouteNodes(1, 5);
  ASSERT_EQ(3u, local.size());
  EXPECT_EQ("hb0", t.NodeName(local[1]));
}

// Every route is a connected walk from src to dst, in every design and tier
// count, including non-exact sizes.
TEST(BuilderTest, RoutesAreConnectedWalks) {
  for (Design d : {Design::kRailOnly, Design::kRailOptimized, Design::kFatTree}) {
    for (auto [gpus, k, radix, shared] : {std::tuple{96, 8, 8, 1}, std::tuple{200, 4, 16, 1}, std::tuple{1000, 8, 16, 1},
                                          std::tuple{1024, 8, 16, 1}, std::tuple{120, 8, 64, 1},
                                          std::tuple{1024, 8, 16, 2}, std::tuple{96, 8, 8, 4}}) {
      TopologyParams p = Params(d, gpus, k, radix);
      p.gpus_per_nic = shared;
      ValidateTopologyParams(p);
      Topology t = BuildTopology(p);
      for (int64_t s = 0; s < gpus; s += 7) {
        for (int64_t e = 0; e < gpus; e += 13) {
          std::vector<Hop> hops = t.Route(s, e);
          NodeId at = t.gpu_node(s);
          for (const Hop& h : hops) {
            const Link& l = t.links()[h.link];
            ASSERT_EQ(at, h.upward ? l.a : l.b) << DesignName(d) << " " << s << "->" << e;
            at = h.upward ? l.b : l.a;
          }
          ASSERT_EQ(t.gpu_node(e), at);
        }
      }
    }
  }
}

// Two GPUs behind each NIC (4 NICs per 8-GPU domain): the network is built
// for the NICs. By hand, 1,024 GPUs in domains of 8 at radix 64 have 512
// NICs; a two-tier Clos of E = 512 endpoints (E <= k^2 / 2) has 3E / k = 24
// switches and 4E = 2,048 transceivers (E NIC cables and E up-links, two
// each), where the 1,024 NICs of one per GPU need 48 and 4,096. Rail-only
// has 4 rails of 128 NICs: 6 switches and 512 transceivers each.
TEST(BuilderTest, GpusSharingANicAreBuiltForTheNics) {
  for (Design d : {Design::kRailOptimized, Design::kRailOnly}) {
    TopologyParams p = Params(d, 1024, 8, 64);
    p.gpus_per_nic = 2;
    ValidateTopologyParams(p);
    const Topology t = BuildTopology(p);
    const BillOfMaterials shared = CountBill(t, PaperPrices());
    EXPECT_EQ(24, shared.switches) << DesignName(d);
    EXPECT_EQ(2048, shared.transceivers) << DesignName(d);
    const BillOfMaterials own = Count(d, 1024, 8, 64);
    EXPECT_EQ(48, own.switches) << DesignName(d);
    EXPECT_EQ(4096, own.transceivers) << DesignName(d);
    int64_t nics = 0, cables = 0;
    for (const Node& n : t.nodes()) nics += n.kind == NodeKind::kNic ? 1 : 0;
    for (const Link& l : t.links()) cables += l.kind == LinkKind::kNicToLeaf ? 1 : 0;
    EXPECT_EQ(512, nics);
    EXPECT_EQ(512, cables);
    EXPECT_EQ(512, t.nics());
    EXPECT_EQ(4, t.rails());
    // gpu0 and gpu1 share nic0 and its cable, each with its own host link;
    // gpu2 is on rail 1.
    EXPECT_EQ(t.nic_node(0), t.nic_node(1));
    EXPECT_EQ(t.nic_leaf_link(0), t.nic_leaf_link(1));
    EXPECT_NE(t.pcie_link(0), t.pcie_link(1));
    EXPECT_EQ("nic0", t.NodeName(t.nic_node(1)));
    EXPECT_EQ("nic511", t.NodeName(t.nic_node(1023)));
    EXPECT_EQ("hb0", t.NodeName(t.hb_node(0)));
    EXPECT_EQ(0, t.rail_of(1));
    EXPECT_EQ(1, t.rail_of(2));
    EXPECT_EQ(3, t.rail_of(1023));
  }
  // Rail-only: gpu1 (rail 0) reaches gpu9 (domain 1, local 1, rail 0) on its
  // rail; gpu1 to gpu10 (rail 1) is forwarded to gpu2 first, the GPU of
  // domain 0 in gpu10's place.
  TopologyParams p = Params(Design::kRailOnly, 64, 8, 16);
  p.gpus_per_nic = 2;
  const Topology t = BuildTopology(p);
  std::vector<NodeId> same_rail = t.RouteNodes(1, 9);
  EXPECT_EQ("nic0", t.NodeName(same_rail[1]));
  EXPECT_EQ("rail0/leaf0", t.NodeName(same_rail[2]));
  EXPECT_EQ("nic4", t.NodeName(same_rail[same_rail.size() - 2]));
  std::vector<NodeId> forwarded = t.RouteNodes(1, 10);
  EXPECT_EQ("gpu2", t.NodeName(forwarded[2]));
  EXPECT_EQ("nic1", t.NodeName(forwarded[3]));
  EXPECT_EQ("rail1/leaf0", t.NodeName(forwarded[4]));
  // A NIC count that does not divide the domain is refused by name.
  p.gpus_per_nic = 3;
  try {
    ValidateTopologyParams(p);
    ADD_FAILURE() << "3 GPUs per NIC in domains of 8 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ("--gpus-per-nic: expected a positive divisor of the HB domain size 8, got 3", std::string(e.what()));
  }
}

TEST(BuilderTest, NoSwitchExceedsItsRadix) {
  for (Design d : {Design::kRailOnly, Design::kRailOptimized, Design::kFatTree}) {
    Topology t = BuildTopology(Params(d, 1000, 8, 16));
    for (const Node& n : t.nodes()) {
      if (n.kind == NodeKind::kSwitch) {
        EXPECT_LE(n.ports_used, 16);
      }
    }
  }
}

TEST(BuilderTest, ValidationNamesTheFlag) {
  auto message = [](TopologyParams p) {
    try {
      ValidateTopologyParams(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ("--gpus: expected an integer in [1, 1048576], got 0",
            message(Params(Design::kRailOnly, 0, 8, 64)));
  EXPECT_EQ("--hb-size: expected a positive divisor of --gpus 100, got 8",
            message(Params(Design::kRailOnly, 100, 8, 64)));
  EXPECT_EQ("--radix: expected an even integer in [2, 65536], got 63",
            message(Params(Design::kRailOnly, 64, 8, 63)));
  EXPECT_EQ("--radix: expected an even integer in [2, 65536], got 0",
            message(Params(Design::kRailOnly, 64, 8, 0)));
  EXPECT_EQ(
      "--radix: fat-tree needs more than three switch tiers at radix 8 (a three-tier "
      "full-bisection Clos holds at most k^3/4 = 128 endpoints per fabric); use a larger radix",
      message(Params(Design::kFatTree, 256, 8, 8)));
}

}  // namespace
}  // namespace railsim::net
