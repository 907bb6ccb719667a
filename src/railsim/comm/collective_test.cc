// Collective times against hand calculations and the Rail-only paper's
// all-to-all forwarding overheads (Wang et al., arXiv 2307.12169: 8.2%-11.2%,
// 4.1%-5.6% in an earlier version; the (K, M) cases are our fit, see
// tests/data/README.md).
#include "railsim/comm/collective.h"
#include "railsim/comm/algorithms.h"

#include <cstdio>

#include <gtest/gtest.h>

namespace railsim::comm {
namespace {

// Ideal fabrics (efficiency 1, no latency) so that results are the formulas.
ClusterFabrics Fabrics(NetworkKind kind, int64_t k, double hb_Bps, double nic_Bps) {
  ClusterFabrics c;
  c.network = kind;
  c.hb_domain_size = k;
  c.hb = {hb_Bps, 1, 0};
  c.nic = {nic_Bps, 1, 0};
  return c;
}

TEST(CollectiveTest, LayoutOfMegatronGroups) {
  // TP of 8 in K = 8: one domain.
  GroupLayout tp = LayoutOf(8, 1, 8);
  EXPECT_EQ(8, tp.local);
  EXPECT_EQ(1, tp.domains);
  // DP of 32 with stride 8 (tp = 8): one member per domain, all on one rail.
  GroupLayout dp = LayoutOf(32, 8, 8);
  EXPECT_EQ(1, dp.local);
  EXPECT_EQ(32, dp.domains);
  EXPECT_TRUE(dp.rail_aligned);
  // DP of 32 with stride 2 (tp = 2): 4 per domain over 8 domains.
  GroupLayout mixed = LayoutOf(32, 2, 8);
  EXPECT_EQ(4, mixed.local);
  EXPECT_EQ(8, mixed.domains);
  EXPECT_TRUE(mixed.rail_aligned);
}

TEST(CollectiveTest, RingAllReduceByHand) {
  // 8 GPUs on NVLink at 300 GB/s, 1 GB: 2 x 7/8 x 1e9 / 300e9 = 5.833 ms.
  ClusterFabrics c = Fabrics(NetworkKind::kRailOptimized, 8, 300e9, 25e9);
  EXPECT_NEAR(2.0 * 7 / 8 * 1e9 / 300e9, AllReduceTime(1e9, LayoutOf(8, 1, 8), c), 1e-12);
  // 4 GPUs on one rail at 25 GB/s: 2 x 3/4 x 1e9 / 25e9 = 60 ms.
  EXPECT_NEAR(2.0 * 3 / 4 * 1e9 / 25e9, AllReduceTime(1e9, LayoutOf(4, 8, 8), c), 1e-12);
  // Reduce-scatter is half an all-reduce.
  EXPECT_NEAR(3.0 / 4 * 1e9 / 25e9, ReduceScatterTime(1e9, LayoutOf(4, 8, 8), c), 1e-12);
}

TEST(CollectiveTest, HierarchicalAllReduceOnRailOnly) {
  // 16 GPUs = 2 domains x 8: RS in domain (7/8 S / hb), AR of S/8 on each rail
  // (2 x 1/2 x S/8 / nic), AG in domain (7/8 S / hb).
  ClusterFabrics c = Fabrics(NetworkKind::kRailOnly, 8, 300e9, 25e9);
  double s = 8e9;
  double expected = 7.0 / 8 * s / 300e9 + 2 * 0.5 * (s / 8) / 25e9 + 7.0 / 8 * s / 300e9;
  double hierarchical = 0;
  ASSERT_TRUE(MakePlan(Op::kAllReduce, Algorithm::kHierarchical, s, LayoutOf(16, 1, 8), c, {}, &hierarchical));
  EXPECT_NEAR(expected, hierarchical, 1e-12);
  // Auto takes one ring per local rank (NCCL's channels) when faster, on
  // either network: 2 x 15/16 x S / (8 x 25 GB/s) through all 8 NICs. On
  // Rail-only each channel's hop between domains changes rail and crosses
  // NVLink first (PXN): per step a GPU's NVLink carries 7 ring flows plus the
  // forwarded one, 8 b / 300 GB/s, still under b / 25 GB/s on its NIC.
  const double ring = 2.0 * 15 / 16 * s / (8 * 25e9);
  ASSERT_LT(ring, expected);
  EXPECT_NEAR(ring, AllReduceTime(s, LayoutOf(16, 1, 8), c), 1e-12);
  ClusterFabrics opt = Fabrics(NetworkKind::kRailOptimized, 8, 300e9, 25e9);
  EXPECT_NEAR(ring, AllReduceTime(s, LayoutOf(16, 1, 8), opt), 1e-12);
  // With NVLink only 4x the NIC the forwarded hop makes NVLink the bottleneck
  // on Rail-only (8 b / 100 GB/s per step): 2 x 15 x 8 x S / (16 x 8) / 100 GB/s,
  // still under hierarchical's 2 x 7/8 S / 100 GB/s + S/8 / 25 GB/s.
  ClusterFabrics slow = Fabrics(NetworkKind::kRailOnly, 8, 100e9, 25e9);
  const double slow_ring = 2.0 * 15 * 8 * (s / 16 / 8) / 100e9;
  ASSERT_LT(slow_ring, 2 * 7.0 / 8 * s / 100e9 + (s / 8) / 25e9);
  EXPECT_NEAR(slow_ring, AllReduceTime(s, LayoutOf(16, 1, 8), slow), 1e-12);
}

// Reference section 4: overhead of forwarded all-to-all = (K-1) M / (K (M-1)) x C_S / C_F.
TEST(CollectiveTest, ForwardedAllToAllOverheadMatchesPaper) {
  struct Case {
    const char* name;
    int64_t k, m;
    double nic, hb, paper_percent;
  } cases[] = {{"A100, K 8, M 9", 8, 9, 25e9, 300e9, 8.2},
               {"H100, K 256, M 128", 256, 128, 50e9, 450e9, 11.2},
               {"A100 bidirectional NVLink", 8, 9, 25e9, 600e9, 4.1},
               {"H100 bidirectional NVLink", 256, 128, 50e9, 900e9, 5.6}};
  for (const Case& x : cases) {
    ClusterFabrics only = Fabrics(NetworkKind::kRailOnly, x.k, x.hb, x.nic);
    ClusterFabrics opt = Fabrics(NetworkKind::kRailOptimized, x.k, x.hb, x.nic);
    GroupLayout all = LayoutOf(x.k * x.m, 1, x.k);
    double bytes = 1e6 * double(x.k * x.m);  // 1 MB to every peer
    double overhead = AllToAllTime(bytes, all, only, false) / AllToAllTime(bytes, all, opt, false) - 1;
    std::printf("  %-28s forwarding overhead %.2f%% (paper %.1f%%)\n", x.name, 100 * overhead, x.paper_percent);
    EXPECT_NEAR(x.paper_percent, 100 * overhead, 0.05) << x.name;
    // Pipelined in 16 chunks, only the first chunk's NVLink hop is exposed:
    // the overhead falls to the sequential one over 16.
    EXPECT_NEAR(overhead / kDefaultForwardChunks,
                AllToAllTime(bytes, all, only, true) / AllToAllTime(bytes, all, opt, true) - 1, 1e-12);
  }
}

TEST(CollectiveTest, PipelineNeighbours) {
  ClusterFabrics only = Fabrics(NetworkKind::kRailOnly, 8, 300e9, 25e9);
  // Stages 8 ranks apart: same rail, NIC time.
  EXPECT_NEAR(1e9 / 25e9, SendRecvTime(1e9, 8, 4, only), 1e-12);
  // Two stages 4 ranks apart fit in one domain: NVLink.
  EXPECT_NEAR(1e9 / 300e9, SendRecvTime(1e9, 4, 2, only), 1e-12);
  // Four stages 4 ranks apart cross domains on different rails: forwarded,
  // pipelined, so the NIC still bounds it.
  EXPECT_NEAR(1e9 / 25e9, SendRecvTime(1e9, 4, 4, only), 1e-12);
}

}  // namespace
}  // namespace railsim::comm

namespace railsim::comm {
namespace {

// The memo answers what the functions answer, call for call, whether it
// remembers the call or not. The calls come as the search makes them: one
// strategy's few calls, repeated (hits), the same kind and group with other
// bytes, the same bytes and group with another kind, the same bytes and kind
// on a group spread differently, and more distinct calls than it keeps
// (misses after eviction).
TEST(CollectiveTimeMemoTest, EveryAnswerIsTheFunctions) {
  ClusterFabrics c = Fabrics(NetworkKind::kRailOnly, 8, 450e9, 50e9);
  c.hb.latency_s = 2e-6;
  c.nic.latency_s = 5e-6;
  CollectiveTimeMemo memo(c);
  const GroupLayout packed = LayoutOf(16, 2, 8);  // 4 per domain, 4 domains
  const GroupLayout spread = LayoutOf(16, 4, 8);  // 2 per domain, 8 domains
  // Each pair of calls below differs in one key field and in its answer, so
  // a memo that left that field out of its key would answer one of them
  // with the other's time.
  ASSERT_NE(AllReduceTime(1e6, packed, c), AllReduceTime(1e6, spread, c));
  ASSERT_NE(AllReduceTime(1e6, packed, c), AllReduceTime(2e6, packed, c));
  ASSERT_NE(AllReduceTime(1e6, packed, c), AllGatherTime(1e6, packed, c));
  ASSERT_NE(ReduceScatterTime(1e6, packed, c), SendRecvTime(1e6, packed, c));
  int compared = 0;
  auto check = [&](double bytes, const GroupLayout& g) {
    EXPECT_EQ(AllReduceTime(bytes, g, c), memo.AllReduce(bytes, g)) << bytes;
    EXPECT_EQ(ReduceScatterTime(bytes, g, c), memo.ReduceScatter(bytes, g)) << bytes;
    EXPECT_EQ(AllGatherTime(bytes, g, c), memo.AllGather(bytes, g)) << bytes;
    EXPECT_EQ(SendRecvTime(bytes, g, c), memo.SendRecv(bytes, g)) << bytes;
    compared += 4;
  };
  // Eight distinct calls, then the same eight twice more: all hits.
  for (int round = 0; round < 3; ++round) {
    check(1e6, packed);
    check(2e6, packed);
  }
  // The same bytes on the other layout, then back: a memo keyed without the
  // layout would return packed's times for spread.
  for (int round = 0; round < 3; ++round) {
    check(1e6, spread);
    check(1e6, packed);
  }
  // Many distinct calls: every one evicts, and answers stay right.
  for (double bytes : {1e3, 1e4, 1e5, 3e8, 1e9}) {
    for (const GroupLayout& g : {packed, spread, LayoutOf(16, 1, 8), LayoutOf(4, 2, 8)}) check(bytes, g);
  }
  EXPECT_EQ(4 * (6 + 6 + 20), compared);
  EXPECT_EQ(0, memo.SendRecv(0, packed));
  EXPECT_EQ(&c, &memo.fabrics());
}

}  // namespace
}  // namespace railsim::comm
