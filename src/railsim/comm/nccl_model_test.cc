// NCCL's model (comm/nccl_model.h) and its choice against hand calculations
// with NCCL 2.30's constants as dgx-h100's preset carries them (8 x H100 per
// node, NVSwitch, 8 x 400 Gb/s NICs, Intel hosts), and dgx-a100's Ampere ones.
#include "railsim/comm/nccl_model.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "railsim/comm/algorithms.h"
#include "railsim/spec/presets.h"

namespace railsim::comm {
namespace {

ClusterFabrics Fabrics(const std::string& preset) {
  const spec::SystemSpec s = spec::LoadSystem(preset, "--system");
  ClusterFabrics c;
  c.network = NetworkKind::kRailOptimized;
  c.hb_domain_size = s.hb_domain_size;
  c.hb = {s.hb_bw_Bps, s.hb_efficiency, s.hb_latency_s};
  c.nic = {s.nic_bw_Bps, s.nic_efficiency, s.nic_latency_s};
  c.hb_in_network_allreduce_efficiency = s.hb_in_network_allreduce_efficiency;
  c.nccl = s.nccl;
  return c;
}

ClusterFabrics DgxH100() { return Fabrics("dgx-h100"); }

Plan Auto(Op op, double bytes, int64_t nodes, const ClusterFabrics& c, double* time_s) {
  return *MakePlan(op, Algorithm::kAuto, bytes, LayoutOf(8 * nodes, 1, 8), c, {}, time_s);
}

// Reference 2.3's worked example: Ring all-reduce Simple on N nodes of 8
// GPUs = 8.4 + 14N x 3.4 + 2(N - 1) x 14 = 75.6N - 19.6 us (before the
// plateau; a zero-byte call does not reach it); LL = 19.4N + 1.2 us.
TEST(NcclModelTest, RingLatencyGrowsWithNodeCount) {
  const ClusterFabrics c = DgxH100();
  double previous = 0;
  for (int64_t nodes : {2, 4, 8, 16}) {
    const GroupLayout g = LayoutOf(8 * nodes, 1, 8);
    const NcclChannels ch = SearchChannels(g, c);
    const double simple = NcclLatency(spec::NcclAlgo::kRing, Protocol::kSimple, 2, 0, g, c, ch);
    const double ll = NcclLatency(spec::NcclAlgo::kRing, Protocol::kLL, 2, 0, g, c, ch);
    EXPECT_NEAR((75.6 * double(nodes) - 19.6) * 1e-6, simple, 1e-12) << nodes;
    EXPECT_NEAR((19.4 * double(nodes) + 1.2) * 1e-6, ll, 1e-12) << nodes;
    EXPECT_GT(simple, previous);
    previous = simple;
  }
}

// Search channels: 400 Gb/s = 50 GB/s per NIC takes one 48 GB/s channel
// (SM90's first inter-node speed below 50); 8 of them fit 450 GB/s NVLink.
TEST(NcclModelTest, SearchFindsOneChannelPerNic) {
  const ClusterFabrics c = DgxH100();
  const NcclChannels ch = SearchChannels(LayoutOf(64, 1, 8), c);
  EXPECT_EQ(8, ch.channels);
  EXPECT_DOUBLE_EQ(48e9, ch.channel_Bps);
}

// Two nodes, 4 KiB: latency decides. Tree LL = 6.8 + 2 (7 x 0.6 + 1 x 5.0)
// = 25.2 us; Ring LL = 6.6 + 28 x max(0.6, 1.0) + 2 x 2.7 = 40.0 us; every
// LL128 and Simple latency is higher. 4 KiB adds well under a microsecond.
TEST(NcclModelTest, TwoNodeAllReduceUsesTheTree) {
  const ClusterFabrics c = DgxH100();
  double t = 0;
  const Plan p = Auto(Op::kAllReduce, 4096, 2, c, &t);
  std::printf("  2 nodes, 4 KiB all-reduce: %s %s, %.1f us\n", p.algorithm, p.protocol, 1e6 * t);
  EXPECT_STREQ("tree", p.algorithm);
  EXPECT_STREQ("ll", p.protocol);
  EXPECT_GT(t, 25.2e-6);
  EXPECT_LT(t, 27e-6);
}

// Eight nodes, 1 GiB: the tree is capped by NCCL's per-channel maximum, 8 x
// 36.0 GB/s busBw, so at least 148.4 us + 2 x 1.074 GB / 288 GB/s = 7.6 ms;
// (NVLS off, NCCL_NVLS_ENABLE=0, so that NVLSTree is not in the running)
// the ring runs at the NVLink-bound 8 GPUs' step (8 x 1/512 of the buffer per
// step over 369 GB/s): 819.3 us (75.6 x 8 - 19.6, x 1.4 plateau) + 126 steps x
// 1.074 GB / 512 x 8 / 369 GB/s = 6.55 ms. At 1 MiB the tree's 148.4 us
// latency beats the ring's 819.3 us.
TEST(NcclModelTest, RingBeyondTheSizeWhereTheTreeCapBinds) {
  ClusterFabrics c = DgxH100();
  c.hb_in_network_allreduce_efficiency = 0;
  double big = 0, small = 0;
  const Plan large = Auto(Op::kAllReduce, 1073741824.0, 8, c, &big);
  const Plan little = Auto(Op::kAllReduce, 1048576.0, 8, c, &small);
  std::printf("  8 nodes: 1 GiB %s %s %.3f ms; 1 MiB %s %s %.1f us\n", large.algorithm, large.protocol, 1e3 * big,
              little.algorithm, little.protocol, 1e6 * small);
  EXPECT_STREQ("ring", large.algorithm);
  EXPECT_STREQ("simple", large.protocol);
  EXPECT_NEAR(819.28e-6 + 126 * 1073741824.0 / 512 * 8 / 369e9, big, 1e-9);
  EXPECT_STREQ("tree", little.algorithm);
}

// NCCL runs all-gather by ring only (Tree is all-reduce only; NVLS across
// nodes needs CollNet).
TEST(NcclModelTest, AllGatherNeverUsesATree) {
  const ClusterFabrics c = DgxH100();
  for (int64_t nodes : {1, 2, 4, 16}) {
    for (double bytes : {1024.0, 1048576.0, 1073741824.0}) {
      double t = 0;
      EXPECT_STREQ("ring", Auto(Op::kAllGather, bytes, nodes, c, &t).algorithm) << nodes << " " << bytes;
    }
  }
}

// Two nodes, 1 GiB (S): NCCL's NVLSTree (reference 2.3, 2.5, 4.4). Latency
// 0 + 25 + 2 x log2(2) x 20.9 = 66.8 us. NVLS in each node: S x 9/8 through
// the switch at the in-switch rate 450 x 1.066 x 9/14 = 308.4 GB/s: 3.917 ms.
// Heads' tree on each rail with S/8: its NIC moves 2 x S/16 at 50 x 0.94 GB/s
// (2.856 ms). NCCL's estimate caps the tree at 8 channels x 57.7 GB/s busBw,
// converted as NCCL converts NVLSTree's busBw (algBw = busBw x 16 ranks / 30
// steps): 30/16 x S / 461.6 GB/s = 4.361 ms. That cap steers NCCL's choice;
// the time is the links' (dgx-h100's caps_bound_time false: on two H100
// nodes NVLSTree beats it, reference nccl-model.md). Pipelined in 16 chunks:
// 66.8 us + 3.917/16 + 2.856/16 + 15/16 x 3.917 = 4.162 ms (4.673 with the
// cap as a bound). The ring (5.64 ms: 30 steps of S/16 over NVLink at 369
// GB/s, plus 184 us) and the tree (8 x 41.4 GB/s busBw: 2S / 331 GB/s = 6.48
// ms) are slower.
TEST(NcclModelTest, TwoNodeLargeAllReduceUsesNvlsTree) {
  const ClusterFabrics c = DgxH100();
  const double s = 1073741824.0;
  double t = 0;
  const Plan p = Auto(Op::kAllReduce, s, 2, c, &t);
  const double nvls = s * 9 / 8 / (450e9 * 1.066 * 9 / 14);
  const double tree = 2 * s / 16 / (50e9 * 0.94);
  const double hand = 66.8e-6 + nvls / 16 + tree / 16 + 15 * std::max(nvls, tree) / 16;
  std::printf("  2 nodes, 1 GiB all-reduce: %s %s, %.3f ms (hand %.3f ms)\n", p.algorithm, p.protocol, 1e3 * t,
              1e3 * hand);
  EXPECT_STREQ("nvls-tree", p.algorithm);
  EXPECT_STREQ("simple", p.protocol);
  EXPECT_NEAR(hand, t, 1e-9);
  // Without NVLink SHARP (NCCL_NVLS_ENABLE=0) NVLSTree is not in the running.
  ClusterFabrics off = c;
  off.hb_in_network_allreduce_efficiency = 0;
  EXPECT_STRNE("nvls-tree", Auto(Op::kAllReduce, s, 2, off, &t).algorithm);
  // Forcing another algorithm never yields it; forcing it (NCCL_ALGO=NVLSTree) does.
  EXPECT_STREQ("tree", MakePlan(Op::kAllReduce, Algorithm::kTree, s, LayoutOf(16, 1, 8), c, {})->algorithm);
  double forced = 0;
  EXPECT_STREQ("nvls-tree",
               MakePlan(Op::kAllReduce, Algorithm::kNvlsTree, s, LayoutOf(16, 1, 8), c, {}, &forced)->algorithm);
  EXPECT_NEAR(hand, forced, 1e-9);
  EXPECT_FALSE(MakePlan(Op::kAllReduce, Algorithm::kNvlsTree, s, LayoutOf(16, 1, 8), off, {}).has_value());
  // Where the caps bound the time too (caps_bound_time, as before the Hopper
  // presets said otherwise), the tree stage takes NCCL's estimate, 4.361 ms:
  // 66.8 us + 3.917/16 + 4.361/16 + 15/16 x 4.361 = 4.673 ms.
  ClusterFabrics capped = c;
  capped.nccl.caps_bound_time = true;
  const double capped_tree = s * 30 / 16 / (8 * 57.7e9);
  const double capped_hand = 66.8e-6 + nvls / 16 + capped_tree / 16 + 15 * std::max(nvls, capped_tree) / 16;
  double capped_t = 0;
  EXPECT_STREQ("nvls-tree", Auto(Op::kAllReduce, s, 2, capped, &capped_t).algorithm);
  EXPECT_NEAR(capped_hand, capped_t, 1e-9);
  EXPECT_NEAR(4.673e-3, capped_t, 1e-6);
}

// Ampere's constants (reference 2.2-2.5) on two DGX A100 nodes (AMD EPYC
// hosts): an 8 KiB all-reduce is a tree in LL. Latency 6.8 + 2 x ((8 - 1) x
// 0.6 + log2i(2) x 5.0) = 25.2 us (the ring LL would pay 6.6 + 28 x the AMD
// host's 2.0 us network overhead + 2 x 2.7 = 68.0 us). Bandwidth: LL's cap
// on two nodes behind AMD hosts, 22.5 GB/s of busBw, halved to algBw for a
// tree and corrected by treeCorrectionFactor LL at floor(log2(8192 / 64)) =
// 7, 0.7: 7.875 GB/s, so 8192 B take 1.040 us: 26.240 us.
TEST(NcclModelTest, AmpereSmallAllReduceOnTwoDgxA100NodesByHand) {
  const ClusterFabrics c = Fabrics("dgx-a100");
  double t = 0;
  const Plan p = Auto(Op::kAllReduce, 8192, 2, c, &t);
  const double hand = (6.8 + 2 * (7 * 0.6 + 5.0)) * 1e-6 + 8192 / (22.5e9 * 0.5 * 0.7);
  std::printf("  dgx-a100, 2 nodes, 8 KiB all-reduce: %s %s, %.3f us (hand %.3f us)\n", p.algorithm, p.protocol,
              1e6 * t, 1e6 * hand);
  EXPECT_STREQ("tree", p.algorithm);
  EXPECT_STREQ("ll", p.protocol);
  EXPECT_NEAR(hand, t, 1e-12);
  // No NVLink SHARP on Ampere: nothing NVLS is in the running, at any size.
  EXPECT_STRNE("nvls-tree", Auto(Op::kAllReduce, 1 << 30, 2, c, &t).algorithm);
  EXPECT_STRNE("in-switch", Auto(Op::kAllReduce, 1 << 30, 1, c, &t).algorithm);
}

// PAT (reference 2.3, 2.5, 3): all-gather and reduce-scatter with one rank
// per node, Simple only. 64 nodes (one GPU of each, on one rail): latency 8.0
// + log2i(64) x 14 / 3.5 + 2.8 x 64 = 211.2 us (the network step is the
// Tree's, 14 us, as with any algorithm at one rank per node); bandwidth the
// buffer S over 0.75 x 47 GB/s (one 400 Gb/s NIC at 0.94). The ring's
// latency is 8.4 + 63 x 14 = 890.4 us for Simple (S x 63/64 over 47 GB/s),
// 6.6 + 63 x 5.0 = 321.6 us for LL. So PAT wins up to where the ring's
// bandwidth catches up: S x (1/0.75 - 63/64) / 47 GB/s = 679.2 us, S = 91.5 MB.
TEST(NcclModelTest, PatForOneRankPerNodeUpToTheCrossover) {
  const ClusterFabrics c = DgxH100();
  const GroupLayout g = LayoutOf(64, 8, 8);  // GPU 0, 8, 16, ...: one per node, rail 0
  ASSERT_EQ(64, g.domains);
  ASSERT_EQ(1, g.local);
  EXPECT_NEAR(211.2e-6, NcclLatency(spec::NcclAlgo::kPat, Protocol::kSimple, 1, 0, g, c, SearchChannels(g, c)),
              1e-12);
  const double bw = 50e9 * 0.94;
  const double crossover = 679.2e-6 * bw / (1 / 0.75 - 63.0 / 64.0);
  for (Op op : {Op::kAllGather, Op::kReduceScatter}) {
    double t = 0;
    const Plan small = *MakePlan(op, Algorithm::kAuto, 1048576, g, c, {}, &t);
    std::printf("  64 nodes x 1 GPU, 1 MiB %s: %s %s, %.1f us\n", OpName(op), small.algorithm, small.protocol, 1e6 * t);
    EXPECT_STREQ("pat", small.algorithm);
    EXPECT_STREQ("simple", small.protocol);
    EXPECT_NEAR(211.2e-6 + 1048576 / (0.75 * bw), t, 1e-9);
    EXPECT_STREQ("pat", MakePlan(op, Algorithm::kAuto, 0.9 * crossover, g, c, {})->algorithm);
    const Plan large = *MakePlan(op, Algorithm::kAuto, 1.1 * crossover, g, c, {}, &t);
    EXPECT_STREQ("ring", large.algorithm);
    EXPECT_STREQ("simple", large.protocol);
    EXPECT_NEAR(890.4e-6 + 1.1 * crossover * 63 / 64 / bw, t, 1e-9);
  }
  // Never with several ranks per node, never for all-reduce.
  EXPECT_STREQ("ring", Auto(Op::kAllGather, 1048576, 64, c, nullptr).algorithm);
  EXPECT_STRNE("pat", MakePlan(Op::kAllReduce, Algorithm::kAuto, 1048576, g, c, {})->algorithm);
  EXPECT_FALSE(MakePlan(Op::kAllGather, Algorithm::kPat, 1048576, LayoutOf(512, 1, 8), c, {}).has_value());
  EXPECT_FALSE(MakePlan(Op::kAllReduce, Algorithm::kPat, 1048576, g, c, {}).has_value());
  // Without the system's PAT constants there is no PAT.
  ClusterFabrics no_pat = c;
  no_pat.nccl.pat.enabled = false;
  EXPECT_STREQ("ring", MakePlan(Op::kAllGather, Algorithm::kAuto, 1048576, g, no_pat, {})->algorithm);
}

// CollNet (reference 2.3, 2.5, 3) on dgx-h100 with NIC switches that reduce
// (NCCL 2.30's constants: NVLink step 3.7 us, network step 31 us, 0.4 us
// per arity step, busBw x 0.85 on Hopper), 4 nodes of 8 GPUs, S = 1 GiB.
// CollNetDirect: latency 2 x (3.7 + 7 x 0.4) + 31 = 44.0 us; each GPU
// scatter-reduces and later gathers 7 x S/8 each way over NVLink, 2 x 7/8 S
// at 450 GB/s x hb_efficiency (A = 5.99 ms at the 0.85 factor), and sends
// S/8 up its NIC to the switch and back at 50 GB/s x 0.94 (B = 3.36 ms);
// pipelined in 16 chunks: 44 us + A + B/16 = 6.24 ms. With CollNet NCCL
// also runs NVLS across nodes (NVLink SHARP, then InfiniBand SHARP): latency
// 25 + 18 = 43 us; the in-switch stage S x 9/8 at 450 x 1.066 x 9/14 GB/s
// (3.917 ms) pipelined with B at full rate (2.856 ms): 43 us + 3.917 +
// 2.856/16 = 4.138 ms, faster than the ring (2 x 31/32 S over 8 NICs at 47
// GB/s: 5.5 ms), so auto takes it. CollNetDirect is NVLink-bound here and
// loses to the ring (6.03 ms); with 200 Gb/s NICs and no NVLink SHARP it is
// NIC-bound at B' = 6.72 ms and wins: 44 us + A/16 + B'/16 + 15/16 B'
// against the ring's 11 ms.
TEST(NcclModelTest, CollNetWhereTheNicSwitchesReduce) {
  ClusterFabrics c = DgxH100();
  c.nccl.collnet = {true, 3.7e-6, 31e-6, 0.4e-6, 0.85};
  const spec::SystemSpec s = spec::LoadSystem("dgx-h100", "--system");
  const GroupLayout g = LayoutOf(32, 1, 8);
  const NcclChannels ch = SearchChannels(g, c);
  EXPECT_NEAR(44.0e-6, NcclLatency(spec::NcclAlgo::kCollNetDirect, Protocol::kSimple, 2, 0, g, c, ch), 1e-12);
  EXPECT_NEAR(43.0e-6, NcclLatency(spec::NcclAlgo::kNvls, Protocol::kSimple, 2, 0, g, c, ch), 1e-12);
  const double bytes = 1073741824.0;
  const double a = 2 * 7 * bytes / 8 / (450e9 * s.hb_efficiency) / 0.85;
  const double b = bytes / 8 / (50e9 * 0.94);
  const double collnet = 44.0e-6 + a + b / 0.85 / 16;
  const double nvls = bytes * 9 / 8 / (450e9 * 1.066 * 9 / 14);
  const double nvls_collnet = 43.0e-6 + nvls + b / 16;
  double t = 0;
  const Plan p = Auto(Op::kAllReduce, bytes, 4, c, &t);
  std::printf("  4 nodes, 1 GiB all-reduce with SHARP: %s %s, %.3f ms (hand %.3f ms; collnet %.3f ms)\n",
              p.algorithm, p.protocol, 1e3 * t, 1e3 * nvls_collnet, 1e3 * collnet);
  EXPECT_STREQ("in-switch", p.algorithm);
  EXPECT_STREQ("simple", p.protocol);
  EXPECT_NEAR(nvls_collnet, t, 1e-9);
  double forced = 0;
  EXPECT_STREQ("collnet", MakePlan(Op::kAllReduce, Algorithm::kCollNet, bytes, g, c, {}, &forced)->algorithm);
  EXPECT_NEAR(collnet, forced, 1e-9);
  EXPECT_STREQ("ring", Auto(Op::kAllReduce, bytes, 4, [&] {
                  ClusterFabrics no_nvls = c;
                  no_nvls.hb_in_network_allreduce_efficiency = 0;
                  return no_nvls;
                }(), nullptr).algorithm);
  ClusterFabrics slow_nics = c;
  slow_nics.hb_in_network_allreduce_efficiency = 0;
  slow_nics.nic.bw_Bps = 25e9;
  const double b2 = bytes / 8 / (25e9 * 0.94) / 0.85;
  ASSERT_GT(b2, a);
  EXPECT_STREQ("collnet", Auto(Op::kAllReduce, bytes, 4, slow_nics, &t).algorithm);
  EXPECT_NEAR(44.0e-6 + a / 16 + b2 / 16 + 15 * b2 / 16, t, 1e-9);
  // Not without the NIC switches' reduction, not for all-gather, not with one member per domain.
  EXPECT_STRNE("collnet", Auto(Op::kAllReduce, bytes, 4, DgxH100(), nullptr).algorithm);
  EXPECT_STRNE("in-switch", Auto(Op::kAllReduce, bytes, 4, DgxH100(), nullptr).algorithm);
  EXPECT_FALSE(MakePlan(Op::kAllReduce, Algorithm::kCollNet, bytes, g, DgxH100(), {}).has_value());
  EXPECT_FALSE(MakePlan(Op::kAllReduce, Algorithm::kInSwitch, bytes, g, DgxH100(), {}).has_value());
  EXPECT_FALSE(MakePlan(Op::kAllGather, Algorithm::kCollNet, bytes, g, c, {}).has_value());
  EXPECT_FALSE(MakePlan(Op::kAllReduce, Algorithm::kCollNet, bytes, LayoutOf(32, 8, 8), c, {}).has_value());
}

}  // namespace
}  // namespace railsim::comm
