// MoE dispatch plans against hand counts: domain reach with and without
// node-limited routing, pair-by-pair bytes of a small case, no cross-rail
// NIC bytes when forwarded, and top-1 forwarding against the paper's
// forwarded all-to-all.
#include "railsim/comm/moe.h"

#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "railsim/comm/collective.h"

namespace railsim::comm {
namespace {

ClusterFabrics Fabrics(NetworkKind kind, int64_t k) {
  ClusterFabrics c;
  c.network = kind;
  c.hb_domain_size = k;
  c.hb = {450e9, 1, 0};
  c.nic = {50e9, 1, 0};
  return c;
}

MoeDispatch Dispatch(int experts, int topk, int max_domains = 0) {
  MoeDispatch d;
  d.tokens = 4096;
  d.bytes_per_token = 2 * 1024;
  d.experts = experts;
  d.topk = topk;
  d.max_domains = max_domains;
  return d;
}

TEST(MoeDispatchTest, DomainReachByHand) {
  // 8 experts over 4 domains (2 each), top-2: a domain is missed when both
  // picks fall among the other 6 experts: 1 - C(6, 2) / C(8, 2) = 13 / 28.
  EXPECT_DOUBLE_EQ(13.0 / 28, DomainReachProbability(Dispatch(8, 2), 4));
  // At most 2 domains: a domain is one of the 2 picked with chance 1/2, and
  // then reached unless both experts are in the other: (1/2)(1 - C(2,2)/C(4,2)).
  EXPECT_DOUBLE_EQ(0.5 * (1 - 1.0 / 6), DomainReachProbability(Dispatch(8, 2, 2), 4));
  // One domain only: exactly one is reached.
  EXPECT_DOUBLE_EQ(0.25, DomainReachProbability(Dispatch(8, 2, 1), 4));
  // DeepSeek-V3 on EP 64 over 8 domains, top-8 of 256, at most 4 domains.
  const double deepseek = DomainReachProbability(Dispatch(256, 8, 4), 8);
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (96.0 - i) / (128.0 - i);
  EXPECT_NEAR(0.5 * (1 - miss), deepseek, 1e-12);
}

TEST(MoeDispatchTest, NodeLimitedRoutingCapsTheDomainsReached) {
  for (int m : {1, 2, 3, 4, 8}) {
    MoeDispatch d = Dispatch(256, 8, m);
    const double reached = 8 * DomainReachProbability(d, 8);  // expected domains per token
    std::printf("  top-8 of 256 over 8 domains, at most %d: %.3f domains reached per token\n", m, reached);
    EXPECT_LE(reached, double(m) + 1e-12);
  }
  EXPECT_DOUBLE_EQ(1.0, 8 * DomainReachProbability(Dispatch(256, 8, 1), 8));
}

// 8 GPUs in 4 domains of 2 (K = 2), one EP group of 8, top-2 of 8 experts.
TEST(MoeDispatchTest, SmallCasePairByPair) {
  const ClusterFabrics c = Fabrics(NetworkKind::kRailOptimized, 2);
  const GroupLayout g = LayoutOf(8, 1, 2);
  const MoeDispatch d = Dispatch(8, 2);
  const double row = d.tokens * d.bytes_per_token;
  // Direct: each copy to its expert's GPU: tokens x top-2 / 8 to every other GPU.
  Plan direct = MoeDispatchPlan(d, MoeAllToAll::kDirect, g, c);
  std::map<std::pair<int64_t, int64_t>, double> bytes;
  for (int i = 0; i < direct.count; ++i) {
    ForEachFlow(direct.phases[i], 8, 2, [&](int64_t s, int64_t t, double b) { bytes[{s, t}] += b; });
  }
  EXPECT_EQ(56u, bytes.size());
  for (const auto& [pair, b] : bytes) EXPECT_DOUBLE_EQ(row * 2 / 8, b);
  // Forwarded: GPU 0 sends to the GPU of local rank 0 in each other domain
  // (2, 4, 6) the rows that reach that domain (13/28 of them), and gives its
  // domain peer 1 the copies of 1's experts: tokens x top-2 / 2.
  Plan forwarded = MoeDispatchPlan(d, MoeAllToAll::kForwarded, g, Fabrics(NetworkKind::kRailOnly, 2));
  ASSERT_STREQ("forwarded", forwarded.algorithm);
  bytes.clear();
  for (int i = 0; i < forwarded.count; ++i) {
    // A pipelined phase's flows are one chunk's: the pair carries `chunks` of them.
    const double chunks = forwarded.phases[i].chunks;
    ForEachFlow(forwarded.phases[i], 8, 2, [&](int64_t s, int64_t t, double b) { bytes[{s, t}] += chunks * b; });
  }
  for (int64_t dst : {2, 4, 6}) EXPECT_DOUBLE_EQ(row * 13.0 / 28, (bytes[{0, dst}])) << dst;
  EXPECT_DOUBLE_EQ(row * 2 / 2, (bytes[{0, 1}]));
  EXPECT_EQ(0u, bytes.count({0, 3}));
  // No NIC flow changes rail.
  for (const auto& [pair, b] : bytes) {
    if (pair.first / 2 != pair.second / 2) {
      EXPECT_EQ(pair.first % 2, pair.second % 2);
    }
  }
}

// With top-1 routing no token reaches two domains, so the forwarded dispatch
// moves what the uniform all-to-all of the paper moves, in the other order
// (NIC then NVLink): the same time as comm's forwarded all-to-all, the
// paper's formula, on the same bandwidths; and direct is the paper's direct.
TEST(MoeDispatchTest, TopOneForwardingIsThePapersForwardedAllToAll) {
  const int64_t k = 8;
  const GroupLayout g = LayoutOf(64, 1, k);  // 8 domains of 8
  MoeDispatch d = Dispatch(64, 1);
  d.chunks = 1;  // the stages in sequence, as the paper's forwarded all-to-all
  const double bytes = d.tokens * d.bytes_per_token;  // what each member sends
  for (NetworkKind kind : {NetworkKind::kRailOnly, NetworkKind::kRailOptimized}) {
    const ClusterFabrics c = Fabrics(kind, k);
    const double forwarded = MoeDispatchTime(d, MoeAllToAll::kForwarded, g, c);
    const double direct = MoeDispatchTime(d, MoeAllToAll::kDirect, g, c);
    EXPECT_NEAR(AllToAllTime(bytes, g, Fabrics(NetworkKind::kRailOnly, k), false), forwarded, 1e-12 * forwarded);
    EXPECT_NEAR(AllToAllTime(bytes, g, Fabrics(NetworkKind::kRailOptimized, k), false), direct, 1e-12 * direct);
  }
  const double overhead = MoeDispatchTime(d, MoeAllToAll::kForwarded, g, Fabrics(NetworkKind::kRailOnly, k)) /
                              MoeDispatchTime(d, MoeAllToAll::kDirect, g, Fabrics(NetworkKind::kRailOptimized, k)) -
                          1;
  // The paper's formula (reference section 4): the NVLink phase over the
  // NIC phase, (K - 1)/K x B / hb over (D - 1)/D x B / nic = (7/8 / 450) / (7/8 / 50).
  std::printf("  top-1, 8 domains of 8: Rail-only forwarded over rail-optimized direct %+.2f%% (formula %+.2f%%)\n",
              100 * overhead, 100 * (50.0 / 450));
  EXPECT_NEAR(50.0 / 450, overhead, 1e-9);
}

// DeepEP's normal kernels pipeline the NIC and NVLink stages. 16 GPUs in 2
// domains of 8, top-2 of 16 experts (8 per domain), 4096 rows of 2 KiB
// (row = 8 MiB): a token reaches the other domain with 1 - C(8,2)/C(16,2) =
// 23/30, so the NIC stage sends 23/30 row = 6.43 MB at 50 GB/s (128.6 us);
// the NVLink stage sends top-2 / 8 of the row to each of 7 peers, 1.75 row =
// 14.68 MB at 450 GB/s (32.6 us). In 16 chunks: NIC stage + 1/16 of NVLink's.
TEST(MoeDispatchTest, PipelinedForwardingIsTheSlowerStagePlusOneChunk) {
  const ClusterFabrics c = Fabrics(NetworkKind::kRailOnly, 8);
  const GroupLayout g = LayoutOf(16, 1, 8);
  MoeDispatch d = Dispatch(16, 2);
  const double row = 4096.0 * 2048;
  const double nic = row * 23 / 30 / 50e9, hb = 1.75 * row / 450e9;
  d.chunks = 1;
  const double sequential = MoeDispatchTime(d, MoeAllToAll::kForwarded, g, c);
  d.chunks = 16;
  const double pipelined = MoeDispatchTime(d, MoeAllToAll::kForwarded, g, c);
  std::printf("  16 GPUs, top-2 of 16: NIC %.1f us, NVLink %.1f us; sequential %.1f us, pipelined %.1f us "
              "(hand: %.1f us)\n", 1e6 * nic, 1e6 * hb, 1e6 * sequential, 1e6 * pipelined, 1e6 * (nic + hb / 16));
  EXPECT_NEAR(nic + hb, sequential, 1e-12 * sequential);
  EXPECT_NEAR(nic + hb / 16, pipelined, 1e-12 * pipelined);
  // When NVLink is the slower stage (a 60 GB/s HB fabric) it sets the pace
  // and the NIC stage adds one chunk: 1.75 row / 60 GB/s + NIC / 16.
  ClusterFabrics slow = c;
  slow.hb = {60e9, 1, 0};
  EXPECT_NEAR(1.75 * row / 60e9 + nic / 16, MoeDispatchTime(d, MoeAllToAll::kForwarded, g, slow), 1e-9);
}

// DeepEP's FP8 dispatch sends 1 byte per value and one fp32 scale per 128:
// DeepSeek-V3's hidden 7168 is 7168 + 56 x 4 = 7392 bytes per token, 51.6%
// of bf16's 14,336.
TEST(MoeDispatchTest, Fp8DispatchBytesPerTokenByHand) {
  EXPECT_DOUBLE_EQ(14336, DispatchBytesPerToken(7168, spec::MoeDispatchPrecision::kBf16));
  EXPECT_DOUBLE_EQ(7392, DispatchBytesPerToken(7168, spec::MoeDispatchPrecision::kFp8));
  EXPECT_DOUBLE_EQ(100 + 4, DispatchBytesPerToken(100, spec::MoeDispatchPrecision::kFp8));  // a partial block
}

}  // namespace
}  // namespace railsim::comm
