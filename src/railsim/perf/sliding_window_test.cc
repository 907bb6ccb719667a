// Sliding-window attention (spec::ModelSpec::window_size, window_layers) in
// time, FLOPs, memory, pipeline stages and context-parallel traffic, against
// hand calculations: a windowed query attends to min(W, position + 1) keys,
// s W - W^2 / 2 per head instead of the causal s^2 / 2.
#include <algorithm>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "railsim/comm/collective.h"
#include "railsim/perf/compute.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/iteration_comm.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"
#include "railsim/perf/stage_load.h"
#include "railsim/perf/model_stats.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using testutil::MakeStrategy;

// gpt-oss-120b's attention (64 heads of 64, 8 KV heads, hidden 2880) on a
// dense toy of `layers` layers at 4096 tokens; `window` is the JSON's
// window keys ("" for none).
spec::ModelSpec SwaModel(const std::string& window, int layers = 8) {
  return spec::ParseModelJson(R"({"name": "swa", "num_layers": )" + std::to_string(layers) +
                              R"(, "hidden_size": 2880, "num_attention_heads": 64, "num_query_groups": 8,
      "kv_channels": 64, "ffn_hidden_size": 2880, "swiglu": true, "vocab_size": 201088, "seq_length": 4096,
      "position_embedding_type": "rope", "normalization": "RMSNorm", "add_bias_linear": false,
      "untie_embeddings_and_output_weights": true, "hidden_dropout": 0, "attention_dropout": 0)" +
                              window + "}");
}

PerfContext H100(const spec::ModelSpec& m, int64_t gpus) {
  return MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), gpus, comm::NetworkKind::kRailOptimized);
}

const char* kAlternating = R"(, "window_size": 128, "window_attn_skip_freq": 2)";

TEST(SlidingWindowTest, MeanKeysAttended) {
  EXPECT_DOUBLE_EQ(2048, MeanKeysAttended(4096, 0));
  EXPECT_DOUBLE_EQ(2048, MeanKeysAttended(4096, 4096));
  EXPECT_DOUBLE_EQ(2048, MeanKeysAttended(4096, 100000));
  // Queries 0..127 see 1..128 keys, the other 3968 see 128 each:
  // (128 x 129 / 2 + 3968 x 128) / 4096 = 126.0156; the continuous form
  // W - W^2 / 2s = 126 drops the half key per query of the diagonal.
  EXPECT_DOUBLE_EQ(126, MeanKeysAttended(4096, 128));
  EXPECT_NEAR(2048, MeanKeysAttended(4096, 4095), 1e-3);  // continuous at W = s
}

// One layer of the toy on one H100, micro-batch 1, tp 1: forward and
// backward of FlashAttention over the band, minus the causal half, by hand
// from the GPU's fitted constants (docs/MODEL.md: factor = [d/(d+d0)] /
// [128/(128+d0)] x useful / (visited + L0)).
TEST(SlidingWindowTest, NarrowWindowTimeByHand) {
  spec::ModelSpec m = SwaModel(kAlternating);
  PerfContext c = H100(m, 8);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 8);
  spec::ValidateStrategy(m, 8, s);
  const LayerCosts costs = ComputeLayerCosts(c, s);
  const GpuModel& g = c.gpu;
  auto factor = [&](double useful, double visited) {
    return (64 / (64 + g.flash_fixed_dim)) / (128 / (128 + g.flash_fixed_dim)) * useful /
           (visited + g.flash_fixed_keys);
  };
  auto time = [&](double flops, double f) { return flops / std::min(g.peak_flops, g.flash_flops * f) + g.kernel_s; };
  // Causal: 4096 queries x 2048 keys on average, each visiting 2048 + 64
  // (the diagonal 128-key block runs whole); QK^T and PV, d = 64 each.
  const double full_flops = 2.0 * 64 * 4096 * 2048 * (64 + 64);
  const double full_fwd = time(full_flops, factor(2048, 2112));
  const double full_bwd = time(2.5 * full_flops, factor(2048, 2112) * g.flash_bwd_ratio);
  // Window 128: 126 keys on average (MeanKeysAttended), visiting 126 + 64
  // on the diagonal + 64 x (4096 - 128) / 4096 = 62 at the window's far edge.
  const double band_flops = 2.0 * 64 * 4096 * 126 * (64 + 64);
  const double band_fwd = time(band_flops, factor(126, 252));
  const double band_bwd = time(2.5 * band_flops, factor(126, 252) * g.flash_bwd_ratio);
  std::printf("  attention forward: causal %.1f us, window 128 %.1f us (%.1f%%)\n", 1e6 * full_fwd,
              1e6 * band_fwd, 100 * band_fwd / full_fwd);
  EXPECT_NEAR(band_fwd - full_fwd, costs.window_change.fwd, 1e-9 * full_fwd);
  EXPECT_NEAR(band_bwd - full_bwd, costs.window_change.bwd, 1e-9 * full_bwd);
  EXPECT_NEAR(band_fwd - full_fwd, costs.window_change.recompute_selective, 1e-9 * full_fwd);
  // Attention is the only part that changes: no TP, and no CP without cp.
  EXPECT_EQ(0, costs.window_change.tp_fwd + costs.window_change.tp_bwd);
  EXPECT_EQ(0, costs.window_change.cp_fwd + costs.window_change.cp_bwd);
  EXPECT_EQ(0, costs.cp_window_gather_bytes);
}

// A window at least the sequence long is full causal attention: the same
// layer costs, FLOPs and iteration time as the model without window keys.
TEST(SlidingWindowTest, WindowCoveringTheSequenceIsFullAttention) {
  const spec::ModelSpec full = SwaModel("");
  spec::Strategy s = MakeStrategy(1, 2, 4, 1, 32);
  for (const char* window : {R"(, "window_size": 4096)", R"(, "window_size": 8192, "window_attn_skip_freq": 2)"}) {
    SCOPED_TRACE(window);
    const spec::ModelSpec m = SwaModel(window);
    ASSERT_GT(m.window_layer_count(), 0);
    PerfContext c = H100(m, 8);
    const LayerCosts costs = ComputeLayerCosts(c, s);
    const BlockCost& w = costs.window_change;
    EXPECT_EQ(0, w.fwd + w.bwd + w.recompute_selective + w.cp_fwd + w.cp_bwd);
    EXPECT_EQ(EstimateIteration(H100(full, 8), s).iteration_time_s, EstimateIteration(c, s).iteration_time_s);
    EXPECT_EQ(ModelFlopsPerIteration(full, s), ModelFlopsPerIteration(m, s));
    EXPECT_EQ(HardwareFlopsPerIteration(full, s), HardwareFlopsPerIteration(m, s));
  }
}

// Stages hold consecutive layers: gpt-oss's alternation (windowed layers
// 0, 2, 4, ...) over 36 layers in 4 stages of 9 gives ranks 0-3 layers
// 0-8 (5 windowed), 9-17 (4), 18-26 (5) and 27-35 (4); a list puts its
// windowed layers where it says.
TEST(SlidingWindowTest, StagesCountTheirWindowedLayers) {
  auto windowed = [](const spec::ModelSpec& m, const spec::Strategy& s) {
    std::vector<int> counts;
    for (const StageLoad& load : StageLoads(m, s)) counts.push_back(load.window_layers);
    return counts;
  };
  spec::ModelSpec m = SwaModel(kAlternating, 36);
  EXPECT_EQ(18, m.window_layer_count());
  EXPECT_EQ((std::vector<int>{5, 4, 5, 4}), windowed(m, MakeStrategy(1, 4, 2, 1, 64)));
  EXPECT_EQ((std::vector<int>{18}), windowed(m, MakeStrategy(1, 1, 8, 1, 64)));
  m = SwaModel(R"(, "window_size": 128, "window_attn_skip_freq": [1, 1, 1, 0, 0, 0, 0, 0])");
  EXPECT_EQ((std::vector<int>{2, 1, 0, 0}), windowed(m, MakeStrategy(1, 4, 2, 1, 64)));
  EXPECT_EQ((std::vector<int>{3}), windowed(m, MakeStrategy(1, 1, 8, 1, 64)));
}

// On one stage the iteration's compute is m micro-batches x (every layer's
// full cost + each windowed layer's change), and selective recomputation
// redoes each layer's attention as it attends.
TEST(SlidingWindowTest, IterationAddsEachWindowedLayersChange) {
  const spec::ModelSpec full = SwaModel("");
  const spec::ModelSpec m = SwaModel(kAlternating);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 32);  // 4 micro-batches
  s.recompute = spec::Recompute::kSelective;
  PerfContext c = H100(m, 8);
  const BlockCost w = ComputeLayerCosts(c, s).window_change;
  const Estimate with = EstimateIteration(c, s);
  const Estimate without = EstimateIteration(H100(full, 8), s);
  EXPECT_NEAR(without.breakdown.compute_s + 4 * 4 * (w.fwd + w.bwd), with.breakdown.compute_s,
              1e-12 * without.breakdown.compute_s);
  EXPECT_NEAR(without.breakdown.recompute_s + 4 * 4 * w.recompute_selective, with.breakdown.recompute_s,
              1e-12 * without.breakdown.recompute_s);
  EXPECT_LT(with.iteration_time_s, without.iteration_time_s);
}

// MFU's model FLOPs count the band on windowed layers: 3 passes x 32
// sequences x 4 windowed layers x 2 (QK^T, PV) x 4096 queries x (2048 -
// 126) fewer keys x 64 heads x (64 + 64). Classic attention executes the
// whole masked square either way (Megatron-Core's unfused attention masks
// the band out of an s x s score matrix: get_sliding_window_causal_mask).
TEST(SlidingWindowTest, ModelFlopsCountTheBand) {
  const spec::ModelSpec full = SwaModel("");
  const spec::ModelSpec m = SwaModel(kAlternating);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 32);
  const double saved = 3.0 * 32 * 4 * 2 * 4096 * (2048 - 126) * 64 * 128;
  EXPECT_NEAR(ModelFlopsPerIteration(full, s) - saved, ModelFlopsPerIteration(m, s), 1e-9 * saved);
  EXPECT_NEAR(HardwareFlopsPerIteration(full, s) - saved, HardwareFlopsPerIteration(m, s), 1e-9 * saved);
  s.attention = spec::Attention::kClassic;
  EXPECT_EQ(HardwareFlopsPerIteration(full, s), HardwareFlopsPerIteration(m, s));
  const BlockCost w = ComputeLayerCosts(H100(m, 8), s).window_change;
  EXPECT_EQ(0, w.fwd + w.bwd + w.recompute_selective);
}

// FlashAttention keeps one fp32 log-sum-exp per query row whatever the
// window, and the materialised softmax holds the whole s x s square (the
// band masked inside it): a windowed layer's activations are a full one's.
TEST(SlidingWindowTest, MemoryIsTheSameForBothLayerTypes) {
  const spec::ModelSpec full = SwaModel("");
  const spec::ModelSpec m = SwaModel(kAlternating);
  for (spec::Attention a : {spec::Attention::kFlash, spec::Attention::kClassic}) {
    spec::Strategy s = MakeStrategy(1, 2, 4, 1, 32);
    s.attention = a;
    EXPECT_EQ(EstimateMemory(H100(full, 8), s).total_bytes, EstimateMemory(H100(m, 8), s).total_bytes);
  }
}

// With cp 2 a windowed layer all-gathers K and V (Transformer Engine's
// all_gather, the only context parallelism it runs sliding windows with):
// 2 ranks x 2 (K, V) x 2 bytes x 2048 local tokens x 512 (8 KV heads of
// 64) = 8 MiB gathered, forward and again backward, with the gradients
// reduce-scattered; none of it hidden. Full layers keep the ring.
TEST(SlidingWindowTest, ContextParallelGathersKeysAndValues) {
  const spec::ModelSpec m = SwaModel(kAlternating);
  spec::Strategy s = MakeStrategy(1, 1, 4, 1, 32);
  s.cp = 2;
  spec::ValidateStrategy(m, 8, s);
  PerfContext c = H100(m, 8);
  const LayerCosts costs = ComputeLayerCosts(c, s);
  EXPECT_DOUBLE_EQ(2.0 * 2 * 2 * 2048 * 512, costs.cp_window_gather_bytes);
  const comm::GroupLayout cp = PlaceGroups(c, s)[GroupKind::kCp];
  const double gather = comm::AllGatherTime(8 * 1024 * 1024, cp, c.fabrics);
  const double scatter = comm::ReduceScatterTime(8 * 1024 * 1024, cp, c.fabrics);
  EXPECT_NEAR(gather, costs.layer.cp_fwd + costs.window_change.cp_fwd, 1e-15);
  EXPECT_NEAR(gather + scatter, costs.layer.cp_bwd + costs.window_change.cp_bwd, 1e-15);
  // The traffic: 8 micro-batches x 4 full layers x 3 ring passes (forward
  // K/V, backward K/V and their gradients) x (cp - 1) steps; 8 x 4
  // windowed layers x 2 gathers and x 1 reduce-scatter.
  int ring = 0, gathers = 0, scatters = 0;
  for (const CommCall& call : IterationComm(c, s)) {
    if (call.group != GroupKind::kCp) continue;
    if (call.op == comm::Op::kSendRecv) {
      EXPECT_EQ(8.0 * 4 * 3, call.times[0]);
      ++ring;
    } else if (call.op == comm::Op::kAllGather) {
      EXPECT_EQ(8.0 * 4 * 2, call.times[0]);
      EXPECT_DOUBLE_EQ(costs.cp_window_gather_bytes, call.bytes);
      ++gathers;
    } else if (call.op == comm::Op::kReduceScatter) {
      EXPECT_EQ(8.0 * 4, call.times[0]);
      ++scatters;
    }
  }
  EXPECT_EQ(1, ring);
  EXPECT_EQ(1, gathers);
  EXPECT_EQ(1, scatters);
}

}  // namespace
}  // namespace railsim::perf
