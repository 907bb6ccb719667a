// Optimizer precision and data-parallel sharding: bytes per parameter against
// the table of tests/data/optimizer-memory.md (Megatron-LM's distributed
// optimizer, Megatron-Core's precision-aware optimizer, the ZeRO paper),
// ZeRO-3 memory and traffic against the ZeRO paper's formulas, and a layout
// that ran on 80 GB judged to fit only with the sharding it ran with.
#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/perf/estimate.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/iteration_comm.h"
#include "railsim/perf/memory.h"
#include "railsim/perf/model_stats.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using testutil::MakeStrategy;

// Unsharded bytes (weights + gradients) and sharded bytes (optimizer) per parameter.
std::pair<double, double> Split(const spec::Strategy& s) {
  BytesPerParam b = OptimizerBytesPerParam(s);
  return {b.weights + b.gradients, b.optimizer()};
}

TEST(OptimizerMemoryTest, BytesPerParameterMatchTheTable) {
  spec::Strategy s;
  // Megatron's distributed optimizer, bf16 params and fp32 grads: 6 + 12/d (18).
  EXPECT_EQ(std::make_pair(6.0, 12.0), Split(s));
  // 16-bit grads (--grad-reduce-in-bf16): 4 + 16/d (20): the optimizer keeps
  // an fp32 copy of its gradient shard.
  s.grad_reduce_16bit = true;
  EXPECT_EQ(std::make_pair(4.0, 16.0), Split(s));
  // Precision-aware optimizer, bf16 grads + bf16 moments + remainders: 4 + 6/d.
  s = {};
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  s.main_params_dtype = spec::MainParamsDtype::kFp16;
  s.exp_avg_dtype = s.exp_avg_sq_dtype = spec::MomentDtype::kBf16;
  EXPECT_EQ(std::make_pair(4.0, 6.0), Split(s));
  // Precision-aware defaults with remainders (fp32 grads and moments): 6 + 10/d.
  s = {};
  s.main_params_dtype = spec::MainParamsDtype::kFp16;
  EXPECT_EQ(std::make_pair(6.0, 10.0), Split(s));
  // No master copy, bf16 everything: 4 + 4/d.
  s.main_params_dtype = spec::MainParamsDtype::kNone;
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  s.exp_avg_dtype = s.exp_avg_sq_dtype = spec::MomentDtype::kBf16;
  EXPECT_EQ(std::make_pair(4.0, 4.0), Split(s));
  // ZeRO's accounting (2 + 2 + K, K = 12): 16-bit grads fed straight to an
  // fp32 optimizer: Megatron-Core's bf16 main grads.
  s = {};
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  EXPECT_EQ(std::make_pair(4.0, 12.0), Split(s));
}

// The model states (weights + gradients + optimizer) of one GPU, less the
// gathered layers of ZeRO-3 (checked separately).
double ModelStateBytes(const MemoryBreakdown& m) { return m.weights_bytes + m.gradients_bytes + m.optimizer_bytes; }

TEST(OptimizerMemoryTest, ZeroStagesMatchThePaper) {
  // ZeRO (Rajbhandari et al., arXiv 1910.02054, Fig. 1): Psi = 7.5B, N_d = 64,
  // K = 12: baseline 120 GB, P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
  spec::ModelSpec m = spec::LoadModel("megatron-7.5b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 64, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(1, 1, 64, 1, 64);
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  const double psi = ParamsOnGpu(c, ComputeLayerMemory(c, s), StageLoads(c.model, s)[0]).total();
  ASSERT_NEAR(7.5e9, psi, 0.05e9);
  const double nd = 64;
  struct Case {
    spec::DpSharding sharding;
    double formula, paper_GB;
  } cases[] = {{spec::DpSharding::kNone, 16 * psi, 120},
               {spec::DpSharding::kOptimizer, 4 * psi + 12 * psi / nd, 31.4},
               {spec::DpSharding::kGradients, 2 * psi + 14 * psi / nd, 16.6},
               {spec::DpSharding::kFull, 16 * psi / nd, 1.9}};
  const LayerMemory lm = ComputeLayerMemory(c, s);
  for (const Case& k : cases) {
    s.dp_sharding = k.sharding;
    double bytes = ModelStateBytes(EstimateMemory(c, s));
    if (k.sharding == spec::DpSharding::kFull) {
      // Gathered: the largest unit (the word embedding here, 51200 x 4096,
      // over one layer's 12 h^2) twice in bf16, and its bf16 gradient once.
      const double unit = std::max(lm.params_dense_layer, lm.params_word);
      EXPECT_NEAR(51200.0 * 4096, unit, 1);
      bytes -= (2 * 2 + 2) * unit;
    }
    std::printf("%-9s model states %.2f GB, paper %.1f GB\n", spec::DpShardingName(k.sharding), bytes / 1e9,
                k.paper_GB);
    EXPECT_NEAR(k.formula, bytes, 1e3);
    EXPECT_NEAR(k.paper_GB, bytes / 1e9, 0.02 * k.paper_GB + 0.05);
  }
}

// Bytes one GPU sends for the data-parallel calls of an iteration, ring
// algorithms: (d - 1)/d of the buffer per all-gather or reduce-scatter, twice
// that per all-reduce.
double DataParallelVolume(const std::vector<CommCall>& calls, double d) {
  double sent = 0;
  for (const CommCall& call : calls) {
    if (call.parallelism != Parallelism::kDp) continue;
    const double factor = (call.op == comm::Op::kAllReduce ? 2 : 1) * (d - 1) / d;
    for (double t : call.times) sent += call.bytes * t * factor;
  }
  return sent;
}

TEST(OptimizerMemoryTest, FullShardingTrafficIsThreeHalvesOfDataParallel) {
  // ZeRO Sec. 7.2.2: P_os+g+p moves 3 Psi per step (all-gather for forward,
  // again for backward, reduce-scatter of the gradients) against data
  // parallelism's 2 Psi; with m micro-batches the gathers and reductions repeat
  // per micro-batch. 16-bit gradients, so a parameter's bytes are 2 either way.
  spec::ModelSpec m = spec::LoadModel("megatron-7.5b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 64, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(1, 1, 64, 1, 64);
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  const double psi = ParamsOnGpu(c, ComputeLayerMemory(c, s), StageLoads(c.model, s)[0]).total();
  const double dp = DataParallelVolume(IterationComm(c, s), 64);
  EXPECT_NEAR(2 * 2 * psi * 63 / 64, dp, 1e3);
  s.dp_sharding = spec::DpSharding::kFull;
  std::vector<CommCall> calls = IterationComm(c, s);
  EXPECT_NEAR(3 * 2 * psi * 63 / 64, DataParallelVolume(calls, 64), 1e3);
  EXPECT_NEAR(1.5, DataParallelVolume(calls, 64) / dp, 1e-9);
  // Four micro-batches: four times the traffic, gathers twice per micro-batch.
  s.global_batch = 256;
  calls = IterationComm(c, s);
  EXPECT_NEAR(4 * 3 * 2 * psi * 63 / 64, DataParallelVolume(calls, 64), 1e3);
  bool gathers = false;
  for (const CommCall& call : calls) {
    if (call.op == comm::Op::kAllGather) {
      gathers = true;
      EXPECT_EQ(8, call.times[0]);
      EXPECT_NEAR(2 * psi, call.bytes, 1);
    }
  }
  EXPECT_TRUE(gathers);
}

TEST(OptimizerMemoryTest, HybridShardingShardsInGroupsAndReducesAcrossThem) {
  // 64 DGX A100 GPUs (K = 8), dp 64, shard groups of 8: a group is one HB
  // domain, a replica group the same GPU of every domain (one rail).
  spec::ModelSpec m = spec::LoadModel("megatron-7.5b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), 64, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(1, 1, 64, 1, 64);
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  s.dp_sharding = spec::DpSharding::kFull;
  s.fsdp_shard_group_size = 8;
  ASSERT_TRUE(spec::IsValidStrategy(m, 64, s));
  GroupMembers shard = MembersOf(c, s, GroupKind::kDpShard), replica = MembersOf(c, s, GroupKind::kDpReplica);
  ASSERT_EQ(8, shard.size);
  ASSERT_EQ(8, replica.size);
  for (int64_t j = 0; j < 8; ++j) {
    EXPECT_EQ(j, shard.gpus[size_t(j)]);
    EXPECT_EQ(8 * j, replica.gpus[size_t(j)]);
  }
  // Model states: 16 Psi over the group of 8 (plus the gathered unit, as above).
  const LayerMemory lm = ComputeLayerMemory(c, s);
  const double psi = ParamsOnGpu(c, lm, StageLoads(c.model, s)[0]).total();
  EXPECT_NEAR(16 * psi / 8 + 6 * lm.params_word, ModelStateBytes(EstimateMemory(c, s)), 1e3);
  // Traffic: per micro-batch a reduce-scatter of 2 Psi in the group, an
  // all-reduce of the 2 Psi / 8 shard across the 8 replicas and two
  // all-gathers of 2 Psi in the group: 7/8 x 2 Psi x (1 + 2/8 + 2).
  EXPECT_NEAR(7.0 / 8 * 2 * psi * 3.25, DataParallelVolume(IterationComm(c, s), 8), 1e3);
}

TEST(OptimizerMemoryTest, LayoutThatRanOn80GbFitsOnlySharded) {
  // Megatron-Bridge's Llama 3 8B on 8 H100 (80 GB): TP1 PP1 DP8, MBS 1,
  // GBS 128, seq 8192, FP8, run with Megatron-FSDP over a sharding group of 8
  // (step-times-public.csv row mbridge-25.09-llama3_8b-8, tests/data/README.md).
  spec::ModelSpec m = spec::LoadModel("llama3.1-8b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), 8, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 128);
  s.precision = spec::Precision::kFp8;
  s.dp_sharding = spec::DpSharding::kOptimizer;  // 2 + 4 + 12/d
  MemoryBreakdown zero1 = EstimateMemory(c, s);
  s.main_grads_dtype = spec::MainGradsDtype::kBf16;
  s.exp_avg_dtype = s.exp_avg_sq_dtype = spec::MomentDtype::kBf16;
  MemoryBreakdown zero1_bf16 = EstimateMemory(c, s);
  s.dp_sharding = spec::DpSharding::kFull;
  MemoryBreakdown fsdp_bf16 = EstimateMemory(c, s);
  std::printf("2+4+12/d %.1f GiB, bf16 grads+moments %.1f GiB, FSDP bf16 %.1f GiB of %.0f GiB\n",
              zero1.total_bytes / 1073741824.0, zero1_bf16.total_bytes / 1073741824.0,
              fsdp_bf16.total_bytes / 1073741824.0, zero1.capacity_bytes / 1073741824.0);
  EXPECT_FALSE(zero1.fits);
  EXPECT_TRUE(fsdp_bf16.fits);
  // bf16 gradients and moments save 2 + (4 + 4 - 2 - 2)/8 = 2.5 bytes per parameter.
  const double psi = zero1.weights_bytes / 2;
  EXPECT_NEAR(2.5 * psi, zero1.total_bytes - zero1_bf16.total_bytes, 1e3);
}

}  // namespace
}  // namespace railsim::perf
