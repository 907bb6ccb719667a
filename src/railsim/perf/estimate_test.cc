// The iteration-time and memory model against hand calculations: Megatron's
// FLOP formulas, Korthikanti et al.'s activation formulas, 18 bytes per
// parameter, and internal consistency of the breakdown.
#include "railsim/perf/estimate.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/perf/memory.h"
#include "railsim/perf/stage_load.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using testutil::MakeStrategy;

TEST(ModelStatsTest, MegatronFlopFormulas) {
  // Narayanan et al. (SC'21) count the whole attention square, which the
  // materialised softmax of 2021 Megatron-LM computes: with full
  // recomputation F = 96 B s l h^2 (1 + s / 6h + V / 16lh); without,
  // 72 B s l h^2 (1 + s / 6h) + 6 B s h V. That is the hardware count of
  // classic attention.
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::Strategy s = MakeStrategy(8, 64, 6, 1, 3072);
  double B = 3072, sq = 2048, l = 128, h = 25600, V = 51200;
  double with = 96 * B * sq * l * h * h * (1 + sq / (6 * h) + V / (16 * l * h));
  double without = 72 * B * sq * l * h * h * (1 + sq / (6 * h)) + 6 * B * sq * h * V;
  s.attention = spec::Attention::kClassic;
  s.recompute = spec::Recompute::kFull;
  EXPECT_NEAR(1, HardwareFlopsPerIteration(m, s) / with, 1e-12);
  s.recompute = spec::Recompute::kNone;
  EXPECT_NEAR(1, HardwareFlopsPerIteration(m, s) / without, 1e-12);
}

TEST(ModelStatsTest, GqaAndSwigluParameters) {
  // Llama 3 70B by hand: attention h(h + 2kv) + h^2 with kv = 8 x 128;
  // SwiGLU 3 h f; two RMSNorms h each; untied embeddings V h twice; no biases.
  spec::ModelSpec m = spec::LoadModel("llama3-70b", "--model");
  double h = 8192, kv = 1024, f = 28672, V = 128256, l = 80;
  double expected = l * (h * (h + 2 * kv) + h * h + 3 * h * f + 2 * h) + 2 * V * h + h;
  EXPECT_NEAR(expected, CountParams(m).total, 1);
  EXPECT_NEAR(70.6e9, CountParams(m).total, 0.1e9);
}

TEST(MemoryTest, EighteenBytesPerParameter) {
  spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 1024,
                                  comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(8, 8, 16, 1, 512);
  MemoryBreakdown plain = EstimateMemory(c, s);
  double params = plain.weights_bytes / 2;
  EXPECT_NEAR(4 * params, plain.gradients_bytes, 1);
  EXPECT_NEAR(12 * params, plain.optimizer_bytes, 1);
  s.dp_sharding = spec::DpSharding::kOptimizer;
  EXPECT_NEAR(12 * params / 16, EstimateMemory(c, s).optimizer_bytes, 1);
}

TEST(MemoryTest, InterleavedWarmUpAsMegatronCoreSchedules) {
  // Megatron-Core (schedules.py, group size pp): rank r runs 2 (pp - r - 1) +
  // (vp - 1) pp warm-up chunks plus one, each 1/vp of the stage's layers,
  // capped at m vp. pp 4, vp 2, m 8: first (6 + 4 + 1)/2 = 5.5 = 4 + 3/2,
  // busiest middle (4 + 4 + 1)/2 = 4.5, last (0 + 4 + 1)/2 = 2.5 = 4 - 3/2.
  spec::Strategy s = MakeStrategy(1, 4, 1, 1, 8);
  s.vp = 2;
  EXPECT_EQ(5.5, MicrobatchesInFlight(s, Stage::kFirst));
  EXPECT_EQ(4.5, MicrobatchesInFlight(s, Stage::kMiddle));
  EXPECT_EQ(2.5, MicrobatchesInFlight(s, Stage::kLast));
  s.global_batch = 4;  // m 4: at most m vp = 8 chunks, 4 stage-equivalents
  EXPECT_EQ(4, MicrobatchesInFlight(s, Stage::kFirst));
  s.vp = 1;  // 1F1B: pp - r
  s.global_batch = 8;
  EXPECT_EQ(4, MicrobatchesInFlight(s, Stage::kFirst));
  EXPECT_EQ(3, MicrobatchesInFlight(s, Stage::kMiddle));
  EXPECT_EQ(1, MicrobatchesInFlight(s, Stage::kLast));
}

TEST(MemoryTest, KorthikantiActivationsWithoutRecomputation) {
  // One stage, one micro-batch, TP t without SP: per layer
  // s b h (10 + 24/t + 5 a s / (h t)) bytes (Korthikanti et al. 2022, eq. 2),
  // plus the embedding output and its dropout mask (3 s b h) and the logits
  // (6 s b V / t: 16-bit and fp32).
  spec::ModelSpec m = spec::LoadModel("megatron-18.4b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 8,
                                  comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(8, 1, 1, 2, 2);
  s.attention = spec::Attention::kClassic;
  double sq = 2048, b = 2, h = 6144, a = 48, t = 8, l = 40, V = 51200;
  double per_layer = sq * b * h * (10 + 24 / t + 5 * a * sq / (h * t));
  double expected = l * per_layer + 3 * sq * b * h + 6 * sq * b * V / t;
  EXPECT_NEAR(1, EstimateMemory(c, s).activations_bytes / expected, 1e-9);
  // Sequence parallelism with selective recomputation: 34 s b h / t per layer.
  s.sequence_parallel = true;
  s.recompute = spec::Recompute::kSelective;
  double selective = l * 34 * sq * b * h / t + 3 * sq * b * h / t + 6 * sq * b * V / t;
  EXPECT_NEAR(1, EstimateMemory(c, s).activations_bytes / selective, 1e-9);
}

TEST(EstimateTest, BreakdownAddsUpAndMetricsAgree) {
  spec::ModelSpec m = spec::LoadModel("llama3-70b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), 1024,
                                  comm::NetworkKind::kRailOnly);
  spec::Strategy s = MakeStrategy(8, 4, 32, 1, 512);
  s.vp = 5;
  s.sequence_parallel = true;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  s.recompute = spec::Recompute::kSelective;
  spec::ValidateStrategy(m, 1024, s);
  Estimate e = EstimateIteration(c, s);
  EXPECT_NEAR(e.iteration_time_s, e.breakdown.total(), 1e-12);
  EXPECT_GT(e.breakdown.bubble_s, 0);
  EXPECT_GT(e.breakdown.tp_comm_s, 0);
  EXPECT_NEAR(e.mfu, e.model_flops_per_iteration / (e.iteration_time_s * 1024 * 989e12), 1e-12);
  EXPECT_GE(e.hfu, e.mfu);
  EXPECT_GT(e.mfu, 0.2);
  EXPECT_LT(e.mfu, 0.7);
}

TEST(EstimateTest, MoreMicrobatchesShrinkTheBubbleShare) {
  spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 512,
                                  comm::NetworkKind::kRailOptimized);
  Estimate small = EstimateIteration(c, MakeStrategy(8, 8, 8, 1, 64));
  Estimate large = EstimateIteration(c, MakeStrategy(8, 8, 8, 1, 1024));
  EXPECT_GT(small.breakdown.bubble_s / small.iteration_time_s, large.breakdown.bubble_s / large.iteration_time_s);
  // 1F1B bubble: (p - 1) micro-batch times; with 8 micro-batches and 8
  // stages the bubble is 7/8 of the steady-state time, up to stage imbalance.
  double steady = small.iteration_time_s - small.breakdown.bubble_s - small.breakdown.pp_comm_s -
                  small.breakdown.dp_comm_s - small.breakdown.optimizer_s;
  EXPECT_NEAR(7.0 / 8, small.breakdown.bubble_s / steady, 0.05);
}

// The search's pruning test: the whole breakdown when every stage fits
// (GPT-3 175B, tp 8 pp 8 on 80 GB A100s: 18 bytes per parameter of a
// 2.7B-parameter stage and its activations), nothing when one does not
// (GPT-1T on 64 H100s).
TEST(MemoryTest, MemoryIfFitsIsTheBreakdownOrNothing) {
  spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 1024,
                                  comm::NetworkKind::kRailOptimized);
  const spec::Strategy s = MakeStrategy(8, 8, 16, 1, 512);
  const LayerMemory lm = ComputeLayerMemory(c, s);
  const std::vector<StageLoad> folded = FoldedStageLoads(c.model, s);
  const MemoryBreakdown whole = EstimateMemory(c, s, lm, folded);
  ASSERT_TRUE(whole.fits);
  const std::optional<MemoryBreakdown> fits = MemoryIfFits(c, s, lm, folded);
  ASSERT_TRUE(fits.has_value());
  EXPECT_EQ(whole.total_bytes, fits->total_bytes);
  EXPECT_EQ(whole.activations_bytes, fits->activations_bytes);

  spec::ModelSpec big = spec::LoadModel("megatron-1t", "--model");
  PerfContext h100 = MakePerfContext(big, spec::LoadSystem("dgx-h100", "--system"), 64,
                                     comm::NetworkKind::kRailOptimized);
  const spec::Strategy over = MakeStrategy(8, 8, 1, 1, 8);
  const std::vector<StageLoad> over_loads = FoldedStageLoads(h100.model, over);
  const LayerMemory over_lm = ComputeLayerMemory(h100, over);
  ASSERT_FALSE(EstimateMemory(h100, over, over_lm, over_loads).fits);
  EXPECT_FALSE(MemoryIfFits(h100, over, over_lm, over_loads).has_value());
}

// The search's pruning parts add up to the breakdown exactly. By hand for
// one rank: GPT-3 175B, tp 8, pp 1 would be 175e9 / 8 parameters per GPU; a
// plain Adam (no sharding) keeps 2 (bf16 weights) + 4 (fp32 gradients) + 12
// (fp32 master and two moments) = 18 bytes each.
TEST(MemoryTest, StateBytesByHand) {
  spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), 1024,
                                  comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(8, 1, 128, 1, 1024);
  s.dp_sharding = spec::DpSharding::kNone;
  const LayerMemory lm = ComputeLayerMemory(c, s);
  const std::vector<StageLoad> loads = FoldedStageLoads(c.model, s);
  ASSERT_EQ(1u, loads.size());
  const double params = ParamsOnGpu(c, lm, loads[0]).total();
  EXPECT_NEAR(175e9 / 8, params, 0.01 * 175e9 / 8);
  EXPECT_NEAR(18 * params, StageStateBytes(c, s, lm, loads[0]), 4);
}

// For every rank of many layouts (dense and MoE, bf16 and fp8, each
// sharding, each recomputation, pp 1 to 4 with and without interleaving):
// the rank's state + activations + reserve is at most the breakdown's total
// and the largest of them is it; the limit is the breakdown's; and what the
// search's caches assume holds: the state does not move with the
// recomputation or the interleaving, the activations do not move with the
// optimizer choice.
TEST(MemoryTest, StateAndActivationsAreTheBreakdownsParts) {
  const spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  int checked = 0;
  for (const char* model : {"gpt3-175b", "mixtral-8x22b"}) {
    PerfContext c = MakePerfContext(spec::LoadModel(model, "--model"), h100, 1024,
                                    comm::NetworkKind::kRailOptimized);
    const MemoryLimit limit(c);
    for (spec::Precision precision : {spec::Precision::kBf16, spec::Precision::kFp8}) {
      for (int pp : {1, 2, 4}) {
        for (spec::DpSharding sharding : {spec::DpSharding::kNone, spec::DpSharding::kOptimizer,
                                          spec::DpSharding::kGradients, spec::DpSharding::kFull}) {
          double state_without_recompute = -1, state_without_interleaving = -1;
          for (int vp : {1, 2}) {
            for (spec::Recompute r : {spec::Recompute::kNone, spec::Recompute::kSelective, spec::Recompute::kFull}) {
              spec::Strategy s = MakeStrategy(8, pp, 1024 / (8 * pp), 1, 1024);
              s.precision = precision;
              s.recompute = r;
              s.dp_sharding = sharding;
              s.vp = pp > 1 ? vp : 1;
              if (c.model.is_moe()) {
                s.ep = 8;
                s.sequence_parallel = true;
              }
              spec::ValidateStrategy(c.model, c.gpus, s);
              const LayerMemory lm = ComputeLayerMemory(c, s);
              const std::vector<StageLoad> loads = FoldedStageLoads(c.model, s);
              const MemoryBreakdown whole = EstimateMemory(c, s, lm, loads);
              EXPECT_EQ(whole.reserved_bytes, limit.reserved_bytes);
              EXPECT_EQ(whole.capacity_bytes, limit.capacity_bytes);
              double largest = 0;
              for (const StageLoad& load : loads) {
                const double state = StageStateBytes(c, s, lm, load);
                const double activations = StageActivationBytesRounded(s, lm, load);
                largest = std::max(largest, state + activations + whole.reserved_bytes);
              }
              EXPECT_EQ(whole.total_bytes, largest) << model << " pp " << pp << " vp " << s.vp;
              const double first_state = StageStateBytes(c, s, lm, loads[0]);
              const double first_activations = StageActivationBytesRounded(s, lm, loads[0]);
              if (loads.size() == 1) {
                EXPECT_EQ(!whole.fits, limit.Over(first_state, first_activations));
              }
              // The caches' assumptions.
              if (r == spec::Recompute::kNone) state_without_recompute = first_state;
              EXPECT_EQ(state_without_recompute, first_state);
              if (vp == 1) state_without_interleaving = first_state;
              EXPECT_EQ(state_without_interleaving, first_state);
              spec::Strategy other_optimizer = s;
              other_optimizer.dp_sharding = spec::DpSharding::kFull;
              other_optimizer.main_grads_dtype = spec::MainGradsDtype::kBf16;
              other_optimizer.exp_avg_dtype = other_optimizer.exp_avg_sq_dtype = spec::MomentDtype::kBf16;
              EXPECT_EQ(first_activations, StageActivationBytesRounded(other_optimizer, lm, loads[0]));
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(2 * 2 * 3 * 4 * 2 * 3, checked);
}

// GPUs that share a NIC (4 HDR NICs per 8 A100s): every GPU of a node sends
// at once in training's collectives, so each gets half its NIC; a leaf's 32
// down-ports (radix 64) hold 32 NICs, 64 GPUs. Data parallelism across
// nodes then takes longer, and an HB domain size the NICs do not divide is
// refused.
TEST(EstimateTest, GpusSharingANicEachGetTheirShare) {
  const spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  const spec::SystemSpec own = spec::LoadSystem("dgx-a100", "--system");
  spec::SystemSpec shared = own;
  shared.gpus_per_nic = 2;
  const PerfContext a = MakePerfContext(m, own, 4096, comm::NetworkKind::kRailOptimized);
  const PerfContext b = MakePerfContext(m, shared, 4096, comm::NetworkKind::kRailOptimized);
  EXPECT_DOUBLE_EQ(own.nic_bw_Bps / 2, b.fabrics.nic.bw_Bps);
  EXPECT_DOUBLE_EQ(own.nic_bw_Bps, a.fabrics.nic.bw_Bps);
  EXPECT_EQ(32, a.fabrics.leaf_gpus);
  EXPECT_EQ(64, b.fabrics.leaf_gpus);
  const spec::Strategy s = MakeStrategy(8, 8, 64, 1, 1536);
  const Estimate ea = EstimateIteration(a, s), eb = EstimateIteration(b, s);
  EXPECT_GT(eb.breakdown.dp_comm_s, ea.breakdown.dp_comm_s);
  EXPECT_EQ(ea.breakdown.compute_s, eb.breakdown.compute_s);
  std::printf("  GPT-3 175B tp 8 pp 8 dp 64 on 4,096 A100: DP comm %.3f s with a NIC per GPU, %.3f s with 2 per NIC\n",
              ea.breakdown.dp_comm_s, eb.breakdown.dp_comm_s);
  try {
    MakePerfContext(m, shared, 4095, comm::NetworkKind::kRailOptimized, 3, {0, 1, 0});
    ADD_FAILURE() << "HB domains of 3 with 2 GPUs per NIC were accepted";
  } catch (const Error& e) {
    EXPECT_EQ("--hb-size", e.where());
  }
}

TEST(EstimateTest, MemoryThatDoesNotFitIsReportedNotRejected) {
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), 64,
                                  comm::NetworkKind::kRailOptimized);
  Estimate e = EstimateIteration(c, MakeStrategy(8, 8, 1, 1, 8));
  EXPECT_FALSE(e.memory.fits);
  EXPECT_GT(e.memory.total_bytes, e.memory.capacity_bytes);
  EXPECT_GT(e.iteration_time_s, 0);
}

}  // namespace
}  // namespace railsim::perf

namespace railsim::perf {
namespace {

// A rail-optimized network with 2:1 leaves slows only traffic that leaves
// its leaves. NCCL keeps every ring hop between domains on one rail, so a
// data-parallel all-reduce stays under its rail's leaf with tp 1 (8 DP
// members per domain, one rail-local ring per local rank) as with tp 8 (DP
// members on one rail in consecutive domains): 2:1 leaves cost neither
// anything. Rings that changed rail at every domain boundary would pay the
// spine (over 20% slower at 2:1).
TEST(NetworkAwareTest, OversubscribedLeavesSlowOnlyTrafficThatLeavesThem) {
  spec::ModelSpec m = spec::LoadModel("megatron-1.7b", "--model");
  spec::SystemSpec a100 = spec::LoadSystem("dgx-a100", "--system");
  auto time = [&](int tp, double r) {
    NetworkOptions o;
    o.radix = 16;  // 64 GPUs need two tiers at radix 16
    o.oversubscription = r;
    PerfContext c = MakePerfContext(m, a100, 64, comm::NetworkKind::kRailOptimized, 0, o);
    EXPECT_EQ(2, c.shape.tiers);
    spec::Strategy s = MakeStrategy(tp, 1, 64 / tp, 4, 512);
    s.overlap_dp_comm = false;
    return EstimateIteration(c, s).breakdown.dp_comm_s;
  };
  std::printf("  tp 1: DP %.4f s at 1:1, %.4f s at 2:1; tp 8: %.4f s, %.4f s\n", time(1, 1), time(1, 2),
              time(8, 1), time(8, 2));
  EXPECT_DOUBLE_EQ(time(1, 1), time(1, 2));
  EXPECT_DOUBLE_EQ(time(8, 1), time(8, 2));
}

// With the default network (radix 64, full bisection) the network-aware
// fabrics change nothing: the same estimate as fabrics without leaf
// structure and with the system's own NIC latency.
TEST(NetworkAwareTest, DefaultNetworkKeepsTodaysResults) {
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  for (comm::NetworkKind kind : {comm::NetworkKind::kRailOnly, comm::NetworkKind::kRailOptimized}) {
    PerfContext c = MakePerfContext(m, h100, 32768, kind);
    EXPECT_EQ(64, c.shape.radix);
    EXPECT_DOUBLE_EQ(h100.nic_latency_s, c.fabrics.nic.latency_s);
    PerfContext plain = c;
    plain.fabrics.leaf_gpus = 0;
    plain.fabrics.leaf_uplink_ratio = 1;
    spec::Strategy s = MakeStrategy(8, 64, 64, 1, 4096);
    s.vp = 2;
    EXPECT_DOUBLE_EQ(EstimateIteration(plain, s).iteration_time_s, EstimateIteration(c, s).iteration_time_s);
  }
}

// A radix that needs more switch tiers adds two switch hops per tier to the
// NIC latency; a larger one takes them off.
TEST(NetworkAwareTest, TiersAddSwitchLatency) {
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  NetworkOptions o;
  o.radix = 256;  // 32,768 GPUs: 2 tiers instead of 3
  PerfContext c = MakePerfContext(m, h100, 32768, comm::NetworkKind::kRailOptimized, 0, o);
  EXPECT_EQ(2, c.shape.tiers);
  EXPECT_EQ(3, c.shape.reference_tiers);
  EXPECT_NEAR(h100.nic_latency_s - 2 * h100.switch_latency_s, c.fabrics.nic.latency_s, 1e-15);
}

TEST(NetworkAwareTest, RadixAndOversubscriptionAreValidated) {
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  NetworkOptions o;
  o.radix = 8;
  try {
    MakePerfContext(m, h100, 32768, comm::NetworkKind::kRailOptimized, 0, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string("--radix: 32768 GPUs need more than three switch tiers at radix 8; use a larger "
                          "radix (at least 64)"),
              e.what());
  }
  o.radix = 64;
  o.oversubscription = 64;
  EXPECT_THROW(MakePerfContext(m, h100, 32768, comm::NetworkKind::kRailOptimized, 0, o), Error);
}

TEST(ModelStatsTest, ModelFlopsCountTheCausalHalf) {
  // A causal query attends to the keys before it: s^2 / 2 of the square, so
  // Megatron's s / 6h term becomes s / 12h in the model count, whatever the
  // kernel. FlashAttention executes that half (hardware = model without
  // recomputation); the materialised softmax the whole square.
  spec::ModelSpec m = spec::LoadModel("megatron-1t", "--model");
  spec::Strategy s = MakeStrategy(8, 64, 6, 1, 3072);
  double B = 3072, sq = 2048, l = 128, h = 25600, V = 51200;
  double model = 72 * B * sq * l * h * h * (1 + sq / (12 * h)) + 6 * B * sq * h * V;
  double classic = 72 * B * sq * l * h * h * (1 + sq / (6 * h)) + 6 * B * sq * h * V;
  s.attention = spec::Attention::kFlash;
  EXPECT_NEAR(1, ModelFlopsPerIteration(m, s) / model, 1e-12);
  EXPECT_NEAR(1, HardwareFlopsPerIteration(m, s) / model, 1e-12);
  s.attention = spec::Attention::kClassic;
  EXPECT_NEAR(1, ModelFlopsPerIteration(m, s) / model, 1e-12);
  EXPECT_NEAR(1, HardwareFlopsPerIteration(m, s) / classic, 1e-12);
  // Selective recomputation redoes the attention scores forward: per layer
  // and sequence 4 s^2 h over the square, 2 s^2 h over its causal half.
  s.attention = spec::Attention::kFlash;
  s.recompute = spec::Recompute::kSelective;
  EXPECT_NEAR(1, RecomputeFlopsPerIteration(m, s) / (B * l * 2 * sq * sq * h), 1e-12);
  EXPECT_NEAR(1, HardwareFlopsPerIteration(m, s) / (model + B * l * 2 * sq * sq * h), 1e-12);
}

}  // namespace
}  // namespace railsim::perf
