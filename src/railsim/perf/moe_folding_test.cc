// MoE parallel folding in time and memory: the routed experts' tensor
// parallelism (etp) and expert parallelism over tp x cp x dp, as Megatron-Core
// lays them out (spec/placement.h), against hand counts.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/iteration_comm.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"
#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

spec::Strategy Folded(int tp, int pp, int64_t dp, int ep, int etp, int64_t global_batch) {
  spec::Strategy s;
  s.tp = tp;
  s.pp = pp;
  s.dp = dp;
  s.ep = ep;
  s.etp = etp;
  s.sequence_parallel = tp > 1;
  s.global_batch = global_batch;
  return s;
}

std::string ErrorOf(const spec::ModelSpec& m, int64_t gpus, const spec::Strategy& s) {
  try {
    spec::ValidateStrategy(m, gpus, s);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MoeFoldingTest, ExpertParallelismNeedNotDivideDataParallelism) {
  // --tp 2 --pp 8 --ep 32 on 256 GPUs: dp 16, which ep 32 does not divide.
  // The experts fold onto the stage's tp x dp = 32 GPUs: with etp 1 they
  // fill it (expert-dp 1); with Megatron-Core's default etp = tp = 2 they
  // would need 64, which Megatron-Core refuses too.
  const spec::ModelSpec m = spec::LoadModel("deepseek-v3", "--model");
  EXPECT_EQ("no error", ErrorOf(m, 256, Folded(2, 8, 16, 32, 1, 1024)));
  EXPECT_EQ(1, Folded(2, 8, 16, 32, 1, 1024).expert_dp());
  EXPECT_EQ("--ep: expected ep x expert tensor-parallel size to divide tp x cp x dp = 32 (the expert layers fold "
            "onto the attention's GPUs, as in Megatron-Core), got 32 x 2 = 64; --expert-tensor-parallel-size 1 fits",
            ErrorOf(m, 256, Folded(2, 8, 16, 32, 0, 1024)));
  EXPECT_EQ("--expert-tensor-parallel-size: expected ep x expert tensor-parallel size to divide tp x cp x dp = 32 "
            "(the expert layers fold onto the attention's GPUs, as in Megatron-Core), got 16 x 4 = 64; "
            "--expert-tensor-parallel-size 1 fits",
            ErrorOf(m, 256, Folded(2, 8, 16, 16, 4, 1024)));
  EXPECT_EQ("--expert-tensor-parallel-size: expected a divisor of moe_ffn_hidden_size 2048 (the experts' GEMMs "
            "split over it), got 3",
            ErrorOf(m, 256, Folded(2, 8, 16, 8, 3, 1024)));
  EXPECT_EQ("--expert-tensor-parallel-size: expected a positive integer, got -1",
            ErrorOf(m, 256, Folded(2, 8, 16, 8, -1, 1024)));
  EXPECT_EQ("--expert-tensor-parallel-size: applies to MoE models only (num_experts is 0)",
            ErrorOf(spec::LoadModel("gpt3-175b", "--model"), 256, Folded(8, 8, 4, 1, 1, 1024)));
  // Dense models keep Megatron-Core's default (etp = tp), given or not.
  EXPECT_EQ("no error", ErrorOf(spec::LoadModel("gpt3-175b", "--model"), 256, Folded(8, 8, 4, 1, 8, 1024)));
}

TEST(MoeFoldingTest, ExpertWeightsSplitByExpertTp) {
  // DeepSeek-V3: a routed expert is SwiGLU, 3 x 7168 x 2048 = 44,040,192
  // parameters; 256 experts over ep 8 leave 32 on a GPU. tp 2, dp 8 (16
  // GPUs a stage, pp 4): with etp 2 a GPU holds half of each, 32 x
  // 44,040,192 / 2 = 704,643,072 per MoE layer, and each expert lives on one
  // GPU of the stage (expert-dp 16 / (8 x 2) = 1); with etp 1 it holds them
  // whole, 1,409,286,144, and two GPUs hold each (expert-dp 2). The
  // distributed optimizer's expert shard is the same either way: what one GPU
  // holds over expert-dp.
  const PerfContext c = MakePerfContext(spec::LoadModel("deepseek-v3", "--model"),
                                        spec::LoadSystem("dgx-h100", "--system"), 64,
                                        comm::NetworkKind::kRailOptimized);
  spec::Strategy tp = Folded(2, 4, 8, 8, 0, 64), one = Folded(2, 4, 8, 8, 1, 64);
  tp.dp_sharding = one.dp_sharding = spec::DpSharding::kOptimizer;
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 64, tp));
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 64, one));
  const LayerMemory lm_tp = ComputeLayerMemory(c, tp), lm_one = ComputeLayerMemory(c, one);
  EXPECT_EQ(704'643'072.0, lm_tp.params_layer_expert);
  EXPECT_EQ(1'409'286'144.0, lm_one.params_layer_expert);
  EXPECT_EQ(lm_tp.params_layer_dense, lm_one.params_layer_dense);  // attention and shared experts: tp 2
  EXPECT_EQ(lm_tp.act_layer, lm_one.act_layer);  // etp x the rows at 1 / etp of the width
  const StageLoad middle = StageLoads(c.model, tp)[1];
  const StageParams p_tp = ParamsOnGpu(c, lm_tp, middle);
  const StageParams p_one = ParamsOnGpu(c, lm_one, StageLoads(c.model, one)[1]);
  EXPECT_EQ(2 * p_tp.expert, p_one.expert);
  EXPECT_DOUBLE_EQ(ShardParams(p_tp, tp), ShardParams(p_one, one));
  // The middle stage's 16 layers (61 over 4 stages; the 3 dense ones are on
  // the first) are all MoE.
  EXPECT_EQ(16, middle.moe_layers);
  EXPECT_EQ(16 * 704'643'072.0, p_tp.expert);
  // The 16-bit weights and the fp32 gradient buffer (unsharded under
  // ZeRO-1) grow with what a GPU holds, the optimizer states do not.
  const MemoryBreakdown m_tp = EstimateMemory(c, tp), m_one = EstimateMemory(c, one);
  EXPECT_GT(m_one.weights_bytes, m_tp.weights_bytes);
  EXPECT_GT(m_one.gradients_bytes, m_tp.gradients_bytes);
}

TEST(MoeFoldingTest, ExpertGemmsAndTheirCollectivesFollowExpertTp) {
  // Mixtral 8x22B (56 layers, all MoE) on 32 GPUs: tp 4, dp 8, ep 8.
  // Per layer and micro-batch the tp groups run 4 all-gathers (2 forward, 2
  // backward) and 4 reduce-scatters, plus one all-gather on the last stage
  // (the output layer) and one reduce-scatter on each end (embedding,
  // output). Half of a layer's, its MLP's, move to the etp groups when they
  // are not the tp groups: with etp 2 (ep 8 x 2 = 16 divides 32) they carry
  // 2 / 4 of the activation; with etp 1 they vanish.
  const PerfContext c = MakePerfContext(spec::LoadModel("mixtral-8x22b", "--model"),
                                        spec::LoadSystem("dgx-h100", "--system"), 32,
                                        comm::NetworkKind::kRailOptimized);
  const double m = 2;  // micro-batches: 16 / (8 x 1)
  auto count = [&](const spec::Strategy& s, GroupKind g, comm::Op op, double* bytes) {
    double times = 0;
    for (const CommCall& call : IterationComm(c, s)) {
      if (call.group != g || call.op != op || call.p2p != PointToPoint::kNone) continue;
      times += call.times[0];
      *bytes = call.bytes;
    }
    return times;
  };
  const double act = 2.0 * 4096 * 6144;  // 16-bit, sequence 4096, hidden 6144
  double bytes = 0;
  const spec::Strategy tp = Folded(4, 1, 8, 8, 0, 16), etp2 = Folded(4, 1, 8, 8, 2, 16);
  const spec::Strategy etp1 = Folded(4, 1, 8, 8, 1, 16);
  for (const spec::Strategy& s : {tp, etp2, etp1}) ASSERT_TRUE(spec::IsValidStrategy(c.model, 32, s));
  EXPECT_EQ(m * (4 * 56 + 1), count(tp, GroupKind::kTp, comm::Op::kAllGather, &bytes));
  EXPECT_EQ(act, bytes);
  EXPECT_EQ(0, count(tp, GroupKind::kEtp, comm::Op::kAllGather, &bytes));
  EXPECT_EQ(m * (2 * 56 + 1), count(etp2, GroupKind::kTp, comm::Op::kAllGather, &bytes));
  EXPECT_EQ(m * (2 * 56 + 2), count(etp2, GroupKind::kTp, comm::Op::kReduceScatter, &bytes));
  EXPECT_EQ(m * 2 * 56, count(etp2, GroupKind::kEtp, comm::Op::kAllGather, &bytes));
  EXPECT_EQ(act / 2, bytes);
  EXPECT_EQ(0, count(etp1, GroupKind::kEtp, comm::Op::kAllGather, &bytes));
  EXPECT_EQ(m * (2 * 56 + 1), count(etp1, GroupKind::kTp, comm::Op::kAllGather, &bytes));

  // The dispatch takes each GPU's sequence-parallel shard whatever etp:
  // 4096 / 4 tokens. The experts' GEMMs do the same work split other ways,
  // and with etp 1 there is no all-gather or reduce-scatter around them:
  // less TP time per layer than with etp = tp.
  const LayerCosts c_tp = ComputeLayerCosts(c, tp), c_one = ComputeLayerCosts(c, etp1);
  EXPECT_EQ(1024, c_tp.moe_dispatch.tokens);
  EXPECT_EQ(1024, c_one.moe_dispatch.tokens);
  EXPECT_LT(c_one.layer.tp_fwd, c_tp.layer.tp_fwd);
  EXPECT_EQ(c_tp.dense_layer.tp_fwd, c_one.dense_layer.tp_fwd);
  EXPECT_NEAR(c_tp.layer.tp_fwd / 2, c_one.layer.tp_fwd, 1e-15);  // the attention's half is left

  // Expert gradients: reduced over expert-dp = 32 / (8 x etp) ranks; one
  // rank (etp 4) has nothing to reduce.
  double unused = 0;
  EXPECT_EQ(0, count(tp, GroupKind::kExpertDp, comm::Op::kAllReduce, &unused));
  EXPECT_EQ(1, count(etp1, GroupKind::kExpertDp, comm::Op::kAllReduce, &unused));
  EXPECT_EQ(4, MembersOf(c, etp1, GroupKind::kExpertDp).size);
  const Estimate e = EstimateIteration(c, etp1);
  EXPECT_TRUE(std::isfinite(e.iteration_time_s));
  EXPECT_EQ(1, e.moe.domains);  // EP 8 with etp 1: one DGX
  EXPECT_EQ(4, EstimateIteration(c, tp).moe.domains);  // EP 8, 4 apart: all four DGX
}

}  // namespace
}  // namespace railsim::perf
