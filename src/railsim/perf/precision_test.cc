// The GEMM formats (bf16, fp8, mxfp8, NVFP4): their rates, their casts, the
// weight copies and saved inputs they keep, the layers kept in bf16, and the
// peak MFU is measured against. Expected figures are worked out by hand here.
#include <gtest/gtest.h>

#include "railsim/perf/compute.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"
#include "railsim/perf/model_stats.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using spec::Precision;
using testutil::MakeStrategy;

PerfContext B200Context(const char* model, int64_t gpus) {
  return MakePerfContext(spec::LoadModel(model, "--model"), spec::LoadSystem("dgx-b200", "--system"), gpus,
                         comm::NetworkKind::kRailOptimized);
}

TEST(PrecisionTest, FormatsCountTheirScales) {
  // mxfp8: one E8M0 byte per 32 values; NVFP4: half a byte per value and one
  // E4M3 byte per 16.
  EXPECT_DOUBLE_EQ(2, GemmFormatOf(Precision::kBf16).value_bytes);
  EXPECT_DOUBLE_EQ(1, GemmFormatOf(Precision::kFp8).value_bytes);
  EXPECT_DOUBLE_EQ(1.03125, GemmFormatOf(Precision::kMxfp8).value_bytes);
  EXPECT_DOUBLE_EQ(0.5625, GemmFormatOf(Precision::kFp4).value_bytes);
  // Casts: read 2, write 1 (fp8); read 2, write a row- and a column-wise copy
  // (mxfp8: 2 + 2.0625); NVFP4 also reads once for its per-tensor amax
  // (2 + 2 + 1.125).
  EXPECT_DOUBLE_EQ(3, GemmFormatOf(Precision::kFp8).cast_bytes);
  EXPECT_DOUBLE_EQ(4.0625, GemmFormatOf(Precision::kMxfp8).cast_bytes);
  EXPECT_DOUBLE_EQ(5.125, GemmFormatOf(Precision::kFp4).cast_bytes);
}

TEST(PrecisionTest, BlockScaledFormatsNeedBlackwell) {
  const GpuModel h100 = GpuModel::From(spec::LoadSystem("dgx-h100", "--system").gpu);
  const GpuModel b200 = GpuModel::From(spec::LoadSystem("dgx-b200", "--system").gpu);
  EXPECT_TRUE(h100.Supports(Precision::kFp8));
  EXPECT_FALSE(h100.Supports(Precision::kMxfp8));
  EXPECT_FALSE(h100.Supports(Precision::kFp4));
  EXPECT_TRUE(b200.Supports(Precision::kMxfp8));
  EXPECT_TRUE(b200.Supports(Precision::kFp4));
  // MFU's denominators: B200's dense 2.25 / 4.5 / 9 PFLOP/s.
  EXPECT_DOUBLE_EQ(2.25e15, b200.PeakFlopsFor(Precision::kBf16));
  EXPECT_DOUBLE_EQ(4.5e15, b200.PeakFlopsFor(Precision::kMxfp8));
  EXPECT_DOUBLE_EQ(9e15, b200.PeakFlopsFor(Precision::kFp4));
}

TEST(PrecisionTest, LargeGemmsRunAtTheirFormatsRate) {
  // A compute-bound 8192^3 GEMM: the same wave and tile terms in every
  // format, so the time (less the launch) scales as the achieved rates.
  const GpuModel g = GpuModel::From(spec::LoadSystem("dgx-b200", "--system").gpu);
  const double n = 8192;
  const double fp8 = GemmTime(g.WithGemmPrecision(Precision::kFp8), n, n, n) - g.kernel_s;
  const double fp4 = GemmTime(g.WithGemmPrecision(Precision::kFp4), n, n, n) - g.kernel_s;
  const double mx = GemmTime(g.WithGemmPrecision(Precision::kMxfp8), n, n, n) - g.kernel_s;
  EXPECT_NEAR(g.fp8_gemm_flops / g.fp4_gemm_flops, fp4 / fp8, 1e-9);
  EXPECT_NEAR(1, mx / fp8, 1e-9);
}

TEST(PrecisionTest, Bf16LayersSitOnTheStagesThatHoldThem) {
  // Llama 3 70B: 80 layers on 4 stages of 20. By default no layer stays in
  // bf16 (Megatron-Core's default); NVIDIA's NVFP4 recipe's 15%, 12 at the
  // end, all sit on the last stage.
  PerfContext c = B200Context("llama3-70b", 64);
  spec::Strategy s = MakeStrategy(2, 4, 8, 1, 256);
  s.sequence_parallel = true;
  s.precision = Precision::kFp4;
  EXPECT_EQ(0, s.Bf16LayersAtStart(80));
  EXPECT_EQ(0, s.Bf16LayersAtEnd(80));
  s.bf16_layers_at_end = 12;
  EXPECT_EQ(12, StageLoads(c.model, s)[3].bf16_layers);
  EXPECT_EQ(0, StageLoads(c.model, s)[0].bf16_layers);
  EXPECT_EQ(0, StageLoads(c.model, s)[1].bf16_layers);
  // 2 at the start, 30 at the end reach into the third stage (layers 50-59).
  s.bf16_layers_at_start = 2;
  s.bf16_layers_at_end = 30;
  EXPECT_EQ(2, StageLoads(c.model, s)[0].bf16_layers);
  EXPECT_EQ(20, StageLoads(c.model, s)[3].bf16_layers);
  // bf16 has no low-precision layers to keep.
  s.precision = Precision::kBf16;
  s.bf16_layers_at_start = s.bf16_layers_at_end = -1;
  EXPECT_EQ(0, StageLoads(c.model, s)[3].bf16_layers);
}

TEST(PrecisionTest, Bf16LayersSlowTheStagesThatHoldThem) {
  PerfContext c = B200Context("llama3-70b", 64);
  spec::Strategy s = MakeStrategy(2, 4, 8, 1, 256);
  s.sequence_parallel = true;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  s.precision = Precision::kFp4;
  s.bf16_layers_at_end = 0;
  const LayerCosts all_fp4 = ComputeLayerCosts(c, s);
  const double fp4_time = EstimateIteration(c, s).iteration_time_s;
  s.bf16_layers_at_end = 12;  // NVIDIA's NVFP4 recipe's 15%
  const LayerCosts costs = ComputeLayerCosts(c, s);
  // A bf16 layer is a bf16 strategy's layer, slower than an NVFP4 one.
  spec::Strategy bf16 = s;
  bf16.precision = Precision::kBf16;
  bf16.bf16_layers_at_end = -1;
  EXPECT_DOUBLE_EQ(ComputeLayerCosts(c, bf16).layer.fwd, costs.bf16_layer.fwd);
  EXPECT_GT(costs.bf16_layer.fwd, 1.3 * all_fp4.layer.fwd);
  EXPECT_GT(EstimateIteration(c, s).iteration_time_s, fp4_time);
}

TEST(PrecisionTest, Fp8ParamsDropTheSixteenBitCopyOfTheLinearWeights) {
  // Llama 3.1 8B on 8 GPUs, tp 1 pp 1, no sharding: the 16-bit weights lose
  // 2 bytes per linear parameter of the 32 layers; the FP8 copies (weight
  // and transpose, 2 bytes) stay.
  PerfContext c = B200Context("llama3.1-8b", 8);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 64);
  s.precision = Precision::kFp8;
  const LayerMemory lm = ComputeLayerMemory(c, s);
  const double linear = 32 * lm.params_dense_layer_linear;
  const MemoryBreakdown with_copy = EstimateMemory(c, s);
  EXPECT_NEAR(2 * linear, with_copy.fp8_weights_bytes, 1);
  s.low_precision_params = true;
  const MemoryBreakdown fp8_only = EstimateMemory(c, s);
  EXPECT_NEAR(2 * linear, with_copy.weights_bytes - fp8_only.weights_bytes, 1);
  EXPECT_NEAR(with_copy.fp8_weights_bytes, fp8_only.fp8_weights_bytes, 1);
}

TEST(PrecisionTest, SavedInputsShrinkWithTheFormat) {
  // A dense layer saves (2 - saved bytes) x (2 sbh + sbh + sbf) bytes by
  // keeping the QKV and fc1 inputs, the attention output and the fc2 input
  // in the GEMM format (tp 1, no sequence parallelism): b 1, s 8192, h 4096,
  // f 14336.
  PerfContext c = B200Context("llama3.1-8b", 8);
  spec::Strategy s = MakeStrategy(1, 1, 8, 1, 64);
  const double bf16 = ComputeLayerMemory(c, s).act_dense_layer;
  const double elements = 3.0 * 8192 * 4096 + 8192.0 * 14336;
  s.precision = Precision::kFp8;
  EXPECT_NEAR(bf16 - 1 * elements, ComputeLayerMemory(c, s).act_dense_layer, 1);
  s.precision = Precision::kFp4;
  EXPECT_NEAR(bf16 - 1.4375 * elements, ComputeLayerMemory(c, s).act_dense_layer, 1);
}

TEST(PrecisionTest, MfuIsAShareOfTheFormatsPeak) {
  PerfContext c = B200Context("llama3.1-8b", 8);
  spec::Strategy s = MakeStrategy(1, 1, 8, 2, 128);
  s.dp_sharding = spec::DpSharding::kOptimizer;
  for (Precision p : {Precision::kBf16, Precision::kFp8, Precision::kMxfp8, Precision::kFp4}) {
    s.precision = p;
    const Estimate e = EstimateIteration(c, s);
    EXPECT_DOUBLE_EQ(c.gpu.PeakFlopsFor(p), e.peak_flops);
    EXPECT_NEAR(e.model_flops_per_iteration / (e.iteration_time_s * 8 * e.peak_flops), e.mfu, 1e-12);
    EXPECT_LT(e.mfu, 1);
  }
}

}  // namespace
}  // namespace railsim::perf
