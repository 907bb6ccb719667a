// The traffic analysis against hand counts: a 16-GPU job pair by pair, where
// GPT-1T's partners sit on 32,768 GPUs, a misaligned placement, and an MoE
// all-to-all's cross-rail share.
#include "railsim/study/traffic.h"

#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "railsim/perf/estimate.h"
#include "railsim/spec/model.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"
#include "railsim/study/design_setup.h"

namespace railsim::study {
namespace {

using perf::Parallelism;

using testutil::MakeStrategy;

perf::PerfContext Context(const spec::ModelSpec& m, const std::string& system, int64_t gpus, net::Design d,
                          int64_t hb = 0, int radix = 0) {
  perf::NetworkOptions o;
  o.radix = radix;
  perf::PerfContext c = perf::MakePerfContext(m, spec::LoadSystem(system, "--system"), gpus, NetworkKindOf(d), hb, o);
  if (d == net::Design::kFatTree) c.fabrics.rail_leaves = false;
  return c;
}

TrafficResult Analyze(const perf::PerfContext& c, const spec::Strategy& s, net::Design d) {
  TrafficOptions o;
  o.design = d;
  return AnalyzeTraffic(c, s, o);
}

// 16 GPUs, K = 4, TP 4, PP 2, DP 2, a tiny GPT written out so every byte can
// be counted by hand: h 256, 4 heads, ffn 1024, 4 layers (2 per stage), no
// biases, RMSNorm, rotary positions, vocabulary 1000 (padded to 1024 for TP
// 4), sequence 128, micro-batch 1, global batch 4 (2 micro-batches), fp32
// gradients, no in-switch reduction (DGX A100).
TEST(TrafficTest, SixteenGpusPairByPair) {
  spec::ModelSpec m = spec::ParseModelJson(R"({"name": "tiny-gpt", "num_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_query_groups": 4, "ffn_hidden_size": 1024, "vocab_size": 1000,
      "seq_length": 128, "position_embedding_type": "rope", "normalization": "RMSNorm",
      "add_bias_linear": false, "hidden_dropout": 0, "attention_dropout": 0})");
  perf::PerfContext c = Context(m, "dgx-a100", 16, net::Design::kRailOptimized, 4);
  TrafficResult r = Analyze(c, MakeStrategy(4, 2, 2, 1, 4), net::Design::kRailOptimized);

  // TP: per stage 2 micro-batches x (2 layers x 4 all-reduces + 1 for the
  // embedding or the output layer) = 18 all-reduces of the activation
  // 2 B x 128 x 256 = 65,536 B; a ring of 4 sends 2 (4 - 1) / 4 of it along
  // each edge: 18 x 1.5 x 65,536.
  const double tp = 18 * 1.5 * 65536;
  // PP: the activation slice 65,536 / 4 forward and its gradient back, once
  // per micro-batch.
  const double pp = 2 * 16384;
  // DP: a ring of 2 sends the whole fp32 gradient each way. Per GPU, a layer
  // holds (256 x 768 + 256 x 256) / 4 attention + 2 x 256 norm + 2 x 256 x
  // 1024 / 4 MLP = 197,120 parameters; stage 0 adds the word embedding
  // 1024 x 256 / 4 = 65,536, stage 1 the final norm 256 and the tied copy
  // of the word embedding 65,536.
  const double dp0 = 4.0 * (2 * 197120 + 65536), dp1 = 4.0 * (2 * 197120 + 256 + 65536);
  // Embedding: fp32 gradient of the 65,536-parameter shard, each way.
  const double emb = 4.0 * 65536;

  std::map<std::pair<int, int>, std::array<double, perf::kParallelisms>> expected;
  for (int g = 0; g < 16; ++g) {
    int domain = g / 4, local = g % 4;
    expected[{g, domain * 4 + (local + 1) % 4}][int(Parallelism::kTp)] = tp;
    int dp_peer = (g / 4) % 2 == 0 ? g + 4 : g - 4;
    expected[{g, dp_peer}][int(Parallelism::kDp)] = g < 8 ? dp0 : dp1;
    int pp_peer = g < 8 ? g + 8 : g - 8;
    expected[{g, pp_peer}][int(Parallelism::kPp)] = pp;
    expected[{g, pp_peer}][int(Parallelism::kEmbedding)] = emb;
  }
  ASSERT_EQ(r.pairs.size(), expected.size());
  for (const PairTraffic& p : r.pairs) {
    auto it = expected.find({p.src, p.dst});
    ASSERT_NE(it, expected.end()) << p.src << " -> " << p.dst;
    for (int i = 0; i < perf::kParallelisms; ++i) {
      EXPECT_DOUBLE_EQ(p.bytes[size_t(i)], it->second[size_t(i)])
          << p.src << " -> " << p.dst << " " << perf::ParallelismName(Parallelism(i));
    }
    EXPECT_EQ(p.traffic_class, p.src / 4 == p.dst / 4 ? TrafficClass::kHbDomain : TrafficClass::kSameRail);
  }
  EXPECT_EQ(r.gpu_pairs(), 240);
  EXPECT_EQ(r.pairs_communicating, 48);
  EXPECT_DOUBLE_EQ(r.bytes_total, 16 * (tp + pp + emb) + 8 * (dp0 + dp1));
  EXPECT_DOUBLE_EQ(r.bytes_by_class[int(TrafficClass::kCrossRail)], 0);
}

// The same job fully sharded (ZeRO-3 / FSDP) with bf16 gradients: per
// micro-batch each stage reduce-scatters its 2-byte gradients and all-gathers
// its 2-byte weights twice (forward, backward); a ring of 2 sends half of each
// buffer to the peer: 3 x 2 B x P / 2 per micro-batch, 2 micro-batches.
TEST(TrafficTest, FullShardingGathersWeightsTwicePerMicrobatch) {
  spec::ModelSpec m = spec::ParseModelJson(R"({"name": "tiny-gpt", "num_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_query_groups": 4, "ffn_hidden_size": 1024, "vocab_size": 1000,
      "seq_length": 128, "position_embedding_type": "rope", "normalization": "RMSNorm",
      "add_bias_linear": false, "hidden_dropout": 0, "attention_dropout": 0})");
  perf::PerfContext c = Context(m, "dgx-a100", 16, net::Design::kRailOptimized, 4);
  spec::Strategy s = MakeStrategy(4, 2, 2, 1, 4);
  s.dp_sharding = spec::DpSharding::kFull;
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  TrafficResult r = Analyze(c, s, net::Design::kRailOptimized);
  const double p0 = 2 * 197120 + 65536, p1 = 2 * 197120 + 256 + 65536;  // parameters per GPU (above)
  for (const PairTraffic& p : r.pairs) {
    const double dp = p.bytes[size_t(Parallelism::kDp)];
    if (dp == 0) continue;
    EXPECT_DOUBLE_EQ(2 * 3 * 2.0 * (p.src < 8 ? p0 : p1) / 2, dp) << p.src << " -> " << p.dst;
  }
  EXPECT_DOUBLE_EQ(8 * 6 * (p0 + p1), r.bytes_by_parallelism[int(Parallelism::kDp)]);
}

// Which leaf a GPU's NIC hangs from at radix 256 (128 down-ports): rail
// leaves hold one rail's GPUs of 128 consecutive HB domains; fat-tree
// leaves 128 consecutive GPUs.
int64_t LeafAtRadix256(int64_t gpu, net::Design d) {
  if (d == net::Design::kFatTree) return gpu / 128;
  return (gpu % 8) * 1000 + (gpu / 8) / 128;
}

TEST(TrafficTest, Gpt1tOn32768GpusStaysOnRails) {
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::Strategy s = MakeStrategy(8, 64, 64, 1, 4096);
  s.sequence_parallel = true;
  for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree}) {
    SCOPED_TRACE(net::DesignName(d));
    perf::PerfContext c = Context(m, "dgx-h100", 32768, d, 0, 256);
    TrafficResult r = Analyze(c, s, d);
    ASSERT_EQ(r.tiers, 2);
    const double silent = 1 - double(r.pairs_communicating) / double(r.gpu_pairs());
    std::printf("%s: %lld of %lld pairs communicate (%.4f%% silent), %.3g bytes\n", net::DesignName(d),
                static_cast<long long>(r.pairs_communicating), static_cast<long long>(r.gpu_pairs()), 100 * silent,
                r.bytes_total);
    EXPECT_GT(silent, 0.99);
    EXPECT_EQ(r.bytes_by_class[int(TrafficClass::kCrossRail)], 0);
    const auto& tp = r.bytes_by_parallelism_and_class[int(Parallelism::kTp)];
    EXPECT_GT(tp[int(TrafficClass::kHbDomain)], 0);
    EXPECT_EQ(tp[int(TrafficClass::kSameRail)] + tp[int(TrafficClass::kCrossRail)], 0);
    // Per tier, by where each pair's partners sit: NVLink up and down inside
    // a domain; otherwise NIC to leaf and back, and leaf to spine and back
    // when the two leaves differ.
    std::array<double, kTrafficTiers> hand{};
    for (const PairTraffic& p : r.pairs) {
      const double b = p.total();
      if (p.src / 8 == p.dst / 8) {
        hand[int(TrafficTier::kNvlink)] += 2 * b;
        continue;
      }
      hand[int(TrafficTier::kNicToLeaf)] += 2 * b;
      if (LeafAtRadix256(p.src, d) != LeafAtRadix256(p.dst, d)) hand[int(TrafficTier::kLeafToSpine)] += 2 * b;
    }
    for (int t = 0; t < kTrafficTiers; ++t) {
      EXPECT_NEAR(r.bytes_by_tier[size_t(t)], hand[size_t(t)], 1e-9 * hand[size_t(t)] + 1)
          << TrafficTierName(TrafficTier(t));
    }
    // On rail leaves the DP ring of a stage stays under one leaf, and only
    // the 31 odd pipeline boundaries and the embedding pair leave theirs; on
    // the fat tree every pipeline partner is 512 GPUs away, on another leaf.
    const double pp = r.bytes_by_parallelism[int(Parallelism::kPp)];
    const double emb = r.bytes_by_parallelism[int(Parallelism::kEmbedding)];
    if (d != net::Design::kFatTree) {
      EXPECT_NEAR(r.bytes_by_tier[int(TrafficTier::kLeafToSpine)], 2 * (pp * 31 / 63 + emb), 1e-6 * pp);
    } else {
      EXPECT_GT(r.bytes_by_tier[int(TrafficTier::kLeafToSpine)], 2 * (pp + emb));
    }
  }
}

TEST(TrafficTest, MisalignedPlacementCrossesRailsAndCostsRailOnlyTime) {
  // tp-pp-dp: stages of one pipeline alternate between the two halves of a
  // domain (stride 4 on K = 8), so every other stage boundary moves to another
  // rail in the next domain.
  spec::ModelSpec m = spec::LoadModel("megatron-18.4b", "--model");
  spec::Strategy s = MakeStrategy(4, 4, 4, 1, 256);
  double time[2];
  int i = 0;
  for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly}) {
    perf::PerfContext c = Context(m, "dgx-h100", 64, d);
    c.placement = spec::LoadPlacement("tp-pp-dp", "--placement");
    TrafficResult r = Analyze(c, s, d);
    EXPECT_GT(r.bytes_by_class[int(TrafficClass::kCrossRail)], 0);
    EXPECT_GT(r.bytes_by_parallelism_and_class[int(Parallelism::kPp)][int(TrafficClass::kCrossRail)], 0);
    time[i++] = perf::EstimateIteration(c, s).iteration_time_s;
    perf::PerfContext aligned = Context(m, "dgx-h100", 64, d);
    EXPECT_EQ(Analyze(aligned, s, d).bytes_by_class[int(TrafficClass::kCrossRail)], 0);
  }
  std::printf("misaligned tp-pp-dp: rail-optimized %.6f s, rail-only %.6f s (+%.3f ms)\n", time[0], time[1],
              1e3 * (time[1] - time[0]));
  EXPECT_GT(time[1], time[0]);
}

TEST(TrafficTest, MixtralAllToAllCrossRailShare) {
  // EP 8 over TP 2: each expert-parallel group spans two HB domains, four
  // members in each, on rails {0, 2, 4, 6} or {1, 3, 5, 7}.
  spec::ModelSpec m = spec::LoadModel("mixtral-8x22b", "--model");
  spec::Strategy s = MakeStrategy(2, 8, 16, 1, 256);
  s.ep = 8;
  s.sequence_parallel = true;
  double share[2];
  int i = 0;
  for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly}) {
    perf::PerfContext c = Context(m, "dgx-h100", 256, d);
    TrafficResult r = Analyze(c, s, d);
    const auto& ep = r.bytes_by_parallelism_and_class[int(Parallelism::kEp)];
    const double total = ep[0] + ep[1] + ep[2];
    ASSERT_GT(total, 0);
    share[i++] = ep[int(TrafficClass::kCrossRail)] / total;
  }
  std::printf("mixtral-8x22b EP 8 across 2 domains: all-to-all cross-rail share %.1f%% direct "
              "(rail-optimized), %.1f%% forwarded (rail-only)\n",
              100 * share[0], 100 * share[1]);
  // Direct: a member talks to 7 others, 4 in the other domain, one of them on
  // its own rail: 3/7 of its bytes cross rails. Forwarded: the NVLink hop
  // first, then the rail: none.
  EXPECT_NEAR(share[0], 3.0 / 7.0, 1e-12);
  EXPECT_EQ(share[1], 0);
}

TEST(TrafficTest, FoldedExpertGroupStaysInTheNvlinkDomain) {
  // DeepSeek-V3 with tp 2, dp 64, ep 64 and etp 1 on 128 GPUs: ep x etp
  // folds over tp x dp, so an EP group is 64 consecutive GPUs (the expert
  // rank generator's etp-ep-edp order), the attention's tp and dp ranks of
  // half the job. On 64-GPU NVLink domains
  // (the 16 trays of an NVL72 rack a job uses) a group is one domain: every
  // dispatch and combine byte stays on NVLink. On DGX B200's 8-GPU nodes the
  // same group spans 8 nodes.
  spec::ModelSpec m = spec::LoadModel("deepseek-v3", "--model");
  spec::Strategy s = MakeStrategy(2, 1, 64, 1, 64);
  s.ep = 64;
  s.etp = 1;
  s.sequence_parallel = true;
  ASSERT_TRUE(spec::IsValidStrategy(m, 128, s));
  auto ep_bytes = [&](const std::string& system, int64_t gpus, int64_t hb, const spec::Strategy& strategy) {
    perf::PerfContext c = Context(m, system, gpus, net::Design::kRailOptimized, hb);
    return Analyze(c, strategy, net::Design::kRailOptimized).bytes_by_parallelism_and_class[int(Parallelism::kEp)];
  };
  const auto rack = ep_bytes("gb200-nvl72", 128, 64, s);
  EXPECT_GT(rack[int(TrafficClass::kHbDomain)], 0);
  EXPECT_EQ(0, rack[int(TrafficClass::kSameRail)]);
  EXPECT_EQ(0, rack[int(TrafficClass::kCrossRail)]);
  // Direct all-to-all on 8-GPU nodes: a member sends the same bytes to each
  // of the other 63, 7 of them in its node.
  const auto nodes = ep_bytes("dgx-b200", 128, 0, s);
  const double total = nodes[0] + nodes[1] + nodes[2];
  EXPECT_NEAR(56.0 / 63.0, (total - nodes[int(TrafficClass::kHbDomain)]) / total, 1e-12);
  // With etp = tp = 2 (Megatron-Core's default) the EP group is every other
  // GPU: 64 members over 128 GPUs, 32 in each of the two domains, so 32 of a
  // member's 63 peers are across the NIC even on the rack.
  spec::Strategy strided = s;
  strided.etp = 0;
  ASSERT_TRUE(spec::IsValidStrategy(m, 128, strided));
  const auto spread = ep_bytes("gb200-nvl72", 128, 64, strided);
  const double spread_total = spread[0] + spread[1] + spread[2];
  EXPECT_NEAR(32.0 / 63.0, (spread_total - spread[int(TrafficClass::kHbDomain)]) / spread_total, 1e-12);

  // A whole NVL72 domain (K = 72, 144 GPUs): a variant with 144 experts and
  // EP 72 (tp 1) fills each rack with one EP group.
  m.num_experts = 144;
  spec::Strategy whole = MakeStrategy(1, 1, 144, 1, 144);
  whole.ep = 72;
  ASSERT_TRUE(spec::IsValidStrategy(m, 144, whole));
  const auto nvl72 = ep_bytes("gb200-nvl72", 144, 0, whole);
  EXPECT_GT(nvl72[int(TrafficClass::kHbDomain)], 0);
  EXPECT_EQ(0, nvl72[int(TrafficClass::kSameRail)] + nvl72[int(TrafficClass::kCrossRail)]);
}

}  // namespace
}  // namespace railsim::study
