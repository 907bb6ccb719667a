// Every pipeline rank's load from the split, and time and memory read from
// the rank that sets them: uneven splits (Megatron-Core's flags), MoE layers
// on some middle ranks only, and the micro-batches in flight through each
// virtual stage, each against a hand calculation.
#include "railsim/perf/stage_load.h"

#include <cmath>

#include <gtest/gtest.h>

#include "railsim/perf/estimate.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using testutil::MakeStrategy;

PerfContext H100Context(const spec::ModelSpec& model, int64_t gpus) {
  return MakePerfContext(model, spec::LoadSystem("dgx-h100", "--system"), gpus, comm::NetworkKind::kRailOptimized);
}

double PerMicrobatch(const BlockCost& b) { return b.fwd + b.bwd; }

TEST(StageLoadTest, UnevenSplitIsTimedOnItsBusiestStage) {
  // Llama 3.1 8B's 32 layers on 4 stages with 2 on the first and the last:
  // 14 on each middle stage. One GPU per stage and two data-parallel
  // replicas (no TP or CP), so a stage's time per micro-batch is its compute: the middle's 14 layers set
  // the pace, and the bubble is the other three stages' time per micro-batch,
  // (2 L + E) + 14 L + (2 L + O).
  const spec::ModelSpec m = spec::LoadModel("llama3.1-8b", "--model");
  const PerfContext c = H100Context(m, 8);
  spec::Strategy s = MakeStrategy(1, 4, 2, 1, 16);
  s.decoder_first_pipeline_num_layers = s.decoder_last_pipeline_num_layers = 2;
  spec::ValidateStrategy(m, 8, s);
  const LayerCosts costs = ComputeLayerCosts(c, s);
  const double layer = PerMicrobatch(costs.dense_layer), embedding = PerMicrobatch(costs.embedding);
  const double output = PerMicrobatch(costs.output);
  const Estimate e = EstimateIteration(c, s);
  EXPECT_NEAR(8 * 14 * layer, e.breakdown.compute_s, 1e-12 * e.breakdown.compute_s);
  EXPECT_NEAR((2 * layer + embedding) + 14 * layer + (2 * layer + output), e.breakdown.bubble_s,
              1e-12 * e.breakdown.bubble_s);
}

TEST(StageLoadTest, TheSlowestMiddleRankNeedNotBeTheFirstMiddleOne) {
  // Mixtral 8x22B's 56 layers, 14 per stage, with MoE layers only on the
  // third stage (layers 28-41): that middle rank, not the first middle one,
  // sets the pace, and only it holds expert weights.
  spec::ModelSpec m = spec::LoadModel("mixtral-8x22b", "--model");
  for (int i = 0; i < 56; ++i) m.moe_layers[size_t(i)] = i >= 28 && i < 42 ? 1 : 0;
  const PerfContext c = H100Context(m, 8);
  const spec::Strategy s = MakeStrategy(1, 4, 2, 1, 16);
  spec::ValidateStrategy(m, 8, s);
  const std::vector<StageLoad> loads = StageLoads(m, s);
  ASSERT_EQ(4u, loads.size());
  EXPECT_EQ(0, loads[1].moe_layers);
  EXPECT_EQ(14, loads[2].moe_layers);
  const LayerCosts costs = ComputeLayerCosts(c, s);
  ASSERT_GT(PerMicrobatch(costs.layer), PerMicrobatch(costs.dense_layer) + PerMicrobatch(costs.output));
  const Estimate e = EstimateIteration(c, s);
  EXPECT_NEAR(8 * 14 * PerMicrobatch(costs.layer), e.breakdown.compute_s, 1e-12 * e.breakdown.compute_s);
  EXPECT_EQ(0, ParamsOnGpu(c, costs.memory, loads[1]).expert);
  const StageParams third = ParamsOnGpu(c, costs.memory, loads[2]);
  EXPECT_NEAR(14 * costs.memory.params_layer_expert, third.expert, 1);
  // Its expert weights make it the fullest GPU too: 2 bytes per parameter
  // of 16-bit weights (no data-parallel sharding).
  EXPECT_EQ(std::ceil(2 * third.total()), EstimateMemory(c, s).weights_bytes);
}

TEST(StageLoadTest, ActivationsCountEachVirtualStagesMicrobatchesInFlight) {
  // Llama 3.1 405B, 16 stages of 8 virtual stages, the embedding and the
  // loss counted: one layer per virtual stage, none on rank 0's first and
  // rank 15's last. 32 micro-batches through groups of N = 16: rank r holds
  // 2 (15 - r) + 7 x 16 + 1 chunks at its peak, in the order 16 through
  // virtual stage 0, 16 through stage 1, ..., 16 through stage 7, then the
  // next group's through stage 0.
  const spec::ModelSpec m = spec::LoadModel("llama3-405b", "--model");
  spec::Strategy s = MakeStrategy(1, 16, 1, 1, 32);
  s.vp = 8;
  s.account_for_embedding_in_pipeline_split = s.account_for_loss_in_pipeline_split = true;
  spec::ValidateStrategy(m, 16, s);
  const std::vector<StageLoad> loads = StageLoads(m, s);
  // Rank 0: 143 chunks, 31 through the empty virtual stage 0, 16 through
  // each of the seven others: 112 layer-activations (an even share of the
  // chunks would be 143 / 8 x 7 = 125.1).
  EXPECT_EQ(143, ChunksInFlight(s, 0));
  EXPECT_EQ(7, loads[0].layers);
  EXPECT_DOUBLE_EQ(112, loads[0].in_flight_layers);
  // Rank 1: 141 chunks of one layer each.
  EXPECT_DOUBLE_EQ(141, loads[1].in_flight_layers);
  // Rank 15: 113 chunks, 16 through each of virtual stages 0-6 and one
  // through the last, which holds the loss alone: 112.
  EXPECT_EQ(113, ChunksInFlight(s, 15));
  EXPECT_DOUBLE_EQ(112, loads[15].in_flight_layers);
  // Equal virtual stages give the even share: 32 layers on 4 stages of 2,
  // 4 layers each; rank 0 holds 2 x 3 + 4 + 1 = 11 chunks, 44 layers.
  spec::Strategy even = MakeStrategy(1, 4, 1, 1, 8);
  even.vp = 2;
  EXPECT_DOUBLE_EQ(44, StageLoads(spec::LoadModel("llama3.1-8b", "--model"), even)[0].in_flight_layers);
  EXPECT_DOUBLE_EQ(44, MicrobatchesInFlight(even, Stage::kFirst) * 8);
}

TEST(StageLoadTest, Llama405bOnSixteenStagesOfEightVirtualStagesIsTimedOnAMiddleStage) {
  // The layout NVIDIA and Meta run (tp 8, pp 16, vp 8, the embedding and
  // loss counted): 7, 8, ..., 8, 7 layers. A middle stage's 8 layers take
  // longer than the last's 7 and the output layer, so the compute is 8
  // layers per micro-batch: m = 256 / 8 = 32 micro-batches.
  const spec::ModelSpec m = spec::LoadModel("llama3-405b", "--model");
  const PerfContext c = H100Context(m, 1024);
  spec::Strategy s = MakeStrategy(8, 16, 8, 1, 256);
  s.sequence_parallel = true;
  s.vp = 8;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  s.account_for_embedding_in_pipeline_split = s.account_for_loss_in_pipeline_split = true;
  spec::ValidateStrategy(m, 1024, s);
  const LayerCosts costs = ComputeLayerCosts(c, s);
  const Estimate e = EstimateIteration(c, s);
  EXPECT_NEAR(32 * 8 * PerMicrobatch(costs.dense_layer), e.breakdown.compute_s, 1e-12 * e.breakdown.compute_s);
  EXPECT_GT(e.mfu, 0.2);
  EXPECT_LT(e.mfu, 0.6);
}

TEST(StageLoadTest, FoldedLoadsStandForEveryRankAndKeepTheFullestOfEachRun) {
  // Folding runs of equal middle ranks keeps, for each rank, its layers, and
  // for each run the most micro-batches in flight: checked rank by rank
  // against StageLoads on an even dense split (folds to three), an uneven
  // split, MoE layers on one stage, bf16 edge layers and interleaving.
  spec::ModelSpec mixtral = spec::LoadModel("mixtral-8x22b", "--model");
  for (int i = 0; i < 56; ++i) mixtral.moe_layers[size_t(i)] = i >= 28 && i < 42 ? 1 : 0;
  const spec::ModelSpec llama = spec::LoadModel("llama3.1-8b", "--model");
  spec::Strategy even = MakeStrategy(1, 8, 1, 1, 32);
  spec::Strategy uneven = MakeStrategy(1, 4, 2, 1, 16);
  uneven.decoder_first_pipeline_num_layers = uneven.decoder_last_pipeline_num_layers = 2;
  spec::Strategy interleaved = MakeStrategy(1, 4, 1, 1, 16);
  interleaved.vp = 2;
  interleaved.precision = spec::Precision::kFp8;
  interleaved.bf16_layers_at_end = 3;
  struct Case {
    const spec::ModelSpec* model;
    spec::Strategy s;
    size_t folded;
  };
  for (const Case& k : {Case{&llama, even, 3}, Case{&llama, uneven, 3}, Case{&mixtral, MakeStrategy(1, 4, 2, 1, 16), 4},
                        Case{&llama, interleaved, 3}}) {
    const std::vector<StageLoad> all = StageLoads(*k.model, k.s), folded = FoldedStageLoads(*k.model, k.s);
    EXPECT_EQ(k.folded, folded.size()) << "pp " << k.s.pp;
    int rank = 0;
    for (const StageLoad& run : folded) {
      EXPECT_EQ(rank, run.rank);
      for (int r = run.rank; r < run.rank + run.ranks; ++r, ++rank) {
        const StageLoad& one = all[size_t(r)];
        EXPECT_EQ(one.stage, run.stage);
        EXPECT_EQ(one.layers, run.layers);
        EXPECT_EQ(one.moe_layers, run.moe_layers);
        EXPECT_EQ(one.bf16_layers, run.bf16_layers);
        EXPECT_GE(run.in_flight_layers, one.in_flight_layers) << "rank " << r;
      }
    }
    EXPECT_EQ(k.s.pp, rank);
  }
}

}  // namespace
}  // namespace railsim::perf
