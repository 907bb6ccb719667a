// The host's issue floor (spec::GpuSpec::host_launch_s): an eager run's
// layer pass takes at least its kernels' issue time; a run with CUDA graphs,
// or one that does not say, is timed as if the host kept up. Kernel counts
// and expected times are worked out by hand here.
#include <gtest/gtest.h>

#include "railsim/perf/context.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using spec::CudaGraphImpl;

// GPT-3 175B's layer (learned positions, GELU MLP, dropout) on 8 GPUs,
// tp 1: no collectives inside the layer.
PerfContext Gpt3On(const char* system, double host_launch_s) {
  spec::SystemSpec sys = spec::LoadSystem(system, "--system");
  sys.gpu.host_launch_s = host_launch_s;
  return MakePerfContext(spec::LoadModel("gpt3-175b", "--model"), sys, 8, comm::NetworkKind::kRailOptimized,
                         sys.hb_domain_size > 8 ? 8 : 0);  // an NVL72 rack's 8 GPUs as one domain
}

TEST(HostLaunchTest, AnEagerPassTakesAtLeastItsKernelsIssueTime) {
  // A host so slow (1 s a kernel) that it binds whatever the GPU does.
  // Forward kernels: QKV, projection, fc1, fc2 (4 GEMMs), the attention
  // core, 2 norms + 2 bias-dropout-adds, the GELU: 10. Backward: each GEMM
  // twice (data and weight gradients) and the same 6 others: 14.
  spec::Strategy s = testutil::MakeStrategy(1, 1, 8, 1, 8);
  s.cuda_graph_impl = CudaGraphImpl::kNone;
  const LayerCosts eager = ComputeLayerCosts(Gpt3On("dgx-h100", 1.0), s);
  EXPECT_DOUBLE_EQ(10.0, eager.layer.fwd);
  EXPECT_DOUBLE_EQ(14.0, eager.layer.bwd);
}

TEST(HostLaunchTest, SequenceParallelCollectivesAreIssuedToo) {
  // tp 8 with sequence parallelism adds an all-gather and a reduce-scatter
  // around attention and around the MLP: 4 launches a pass, whose time the
  // floor counts with the GPU's.
  spec::Strategy s = testutil::MakeStrategy(8, 1, 1, 1, 1);
  s.sequence_parallel = true;
  s.cuda_graph_impl = CudaGraphImpl::kNone;
  const LayerCosts eager = ComputeLayerCosts(Gpt3On("dgx-h100", 1.0), s);
  EXPECT_DOUBLE_EQ(14.0, eager.layer.fwd + eager.layer.tp_fwd);
  EXPECT_DOUBLE_EQ(18.0, eager.layer.bwd + eager.layer.tp_bwd);
}

TEST(HostLaunchTest, GraphsOrAnUnstatedRunAreNotHostBound) {
  spec::Strategy s = testutil::MakeStrategy(1, 1, 8, 1, 8);
  const LayerCosts free_host = ComputeLayerCosts(Gpt3On("dgx-h100", 0), s);
  for (std::optional<CudaGraphImpl> graphs :
       {std::optional<CudaGraphImpl>{}, std::optional{CudaGraphImpl::kLocal},
        std::optional{CudaGraphImpl::kTransformerEngine}}) {
    s.cuda_graph_impl = graphs;
    const LayerCosts c = ComputeLayerCosts(Gpt3On("dgx-h100", 1.0), s);
    EXPECT_DOUBLE_EQ(free_host.layer.fwd, c.layer.fwd);
    EXPECT_DOUBLE_EQ(free_host.layer.bwd, c.layer.bwd);
  }
}

TEST(HostLaunchTest, AFloorBelowTheGpusTimeChangesNothing) {
  // GB200's fitted 265 us a kernel: GPT-3 175B's layer at tp 1 with one
  // 2,048-token sequence takes tens of ms on the GPU, far above 10 x 265 us.
  spec::Strategy s = testutil::MakeStrategy(1, 1, 8, 1, 8);
  const LayerCosts free_host = ComputeLayerCosts(Gpt3On("gb200-nvl72", 0), s);
  s.cuda_graph_impl = CudaGraphImpl::kNone;
  const LayerCosts eager = ComputeLayerCosts(Gpt3On("gb200-nvl72", 265e-6), s);
  EXPECT_GT(free_host.layer.fwd, 10 * 265e-6);
  EXPECT_DOUBLE_EQ(free_host.layer.fwd, eager.layer.fwd);
  EXPECT_DOUBLE_EQ(free_host.layer.bwd, eager.layer.bwd);
}

TEST(HostLaunchTest, TheGraceHostedPresetsCarryTheFittedValue) {
  // Fitted on the GB200 Megatron-LM functional test (tp 4, eager); GB300
  // has the same host. The x86-hosted presets state none.
  EXPECT_DOUBLE_EQ(265e-6, spec::LoadSystem("gb200-nvl72", "--system").gpu.host_launch_s);
  EXPECT_DOUBLE_EQ(265e-6, spec::LoadSystem("gb300-nvl72", "--system").gpu.host_launch_s);
  EXPECT_DOUBLE_EQ(0, spec::LoadSystem("dgx-h100", "--system").gpu.host_launch_s);
}

}  // namespace
}  // namespace railsim::perf
