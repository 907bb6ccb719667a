// MoE at scale: a DeepSeek-V3 layer's dispatch on 2,048 H100, analytic
// against flow-by-flow simulation on both networks and both algorithms; the
// estimate with EP inside one HB domain and across domains on each network.
#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/perf/estimate.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/sim/simulator.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"
#include "railsim/study/design_setup.h"
#include "railsim/study/traffic.h"

namespace railsim::study {
namespace {

spec::Strategy DeepSeekStrategy(spec::MoeAllToAll a) {
  spec::Strategy s = testutil::MakeStrategy(1, 16, 128, 1, 4096);
  s.ep = 64;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  s.moe_alltoall = a;
  s.moe_max_domains = 4;
  return s;
}

TEST(MoeAtScaleTest, DeepSeekV3DispatchOn2048H100IsSimulatedWithinFivePercent) {
  ClusterSetup setup;
  setup.system = spec::LoadSystem("dgx-h100", "--system");
  setup.gpus = 2048;
  setup.model = spec::LoadModel("deepseek-v3", "--model");
  for (net::Design design : {net::Design::kRailOnly, net::Design::kRailOptimized}) {
    setup.strategy = DeepSeekStrategy(spec::MoeAllToAll::kAuto);
    DesignSetup d = SetUpDesign(setup, design);
    for (spec::MoeAllToAll a : {spec::MoeAllToAll::kForwarded, spec::MoeAllToAll::kDirect}) {
      spec::Strategy s = DeepSeekStrategy(a);
      perf::LayerCosts costs = perf::ComputeLayerCosts(d.context, s);
      const comm::GroupLayout ep = perf::PlaceGroups(d.context, s)[perf::GroupKind::kEp];
      double analytic = 0;
      comm::Plan plan = comm::MoeDispatchPlan(costs.moe_dispatch, s.moe_alltoall, ep, d.context.fabrics,
                                              &analytic);
      sim::SimOptions o;
      o.route = {net::Routing::kDModK, 0};
      o.hb_efficiency = d.context.fabrics.hb.efficiency;
      o.nic_efficiency = d.context.fabrics.nic.efficiency;
      sim::SimResult r = sim::Simulate(d.topology, plan, o);
      std::printf("  %s, %s: analytic %.3f ms, simulated %.3f ms (%+.2f%%), %lld flows\n", net::DesignName(design),
                  plan.algorithm, 1e3 * analytic, 1e3 * r.time_s, 100 * (r.time_s / analytic - 1),
                  static_cast<long long>(r.flows_simulated));
      EXPECT_NEAR(analytic, r.time_s, 0.05 * analytic);
    }
  }
}

perf::Estimate Estimate(const char* model, comm::NetworkKind network, spec::Strategy s, int64_t gpus) {
  perf::PerfContext c = perf::MakePerfContext(spec::LoadModel(model, "--model"),
                                              spec::LoadSystem("dgx-h100", "--system"), gpus, network);
  return perf::EstimateIteration(c, s);
}

TEST(MoeAtScaleTest, ExpertParallelismInsideOneHbDomainCostsTheSameOnBothNetworks) {
  // Mixtral 8x22B, EP 8 = one DGX H100 (tp 1): dispatch never leaves the domain.
  spec::Strategy s = testutil::MakeStrategy(1, 8, 32, 1, 1024);
  s.ep = 8;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  const perf::Estimate ro = Estimate("mixtral-8x22b", comm::NetworkKind::kRailOnly, s, 256);
  const perf::Estimate opt = Estimate("mixtral-8x22b", comm::NetworkKind::kRailOptimized, s, 256);
  std::printf("  Mixtral EP 8 in one domain: Rail-only %.6f s, rail-optimized %.6f s\n", ro.iteration_time_s,
              opt.iteration_time_s);
  EXPECT_DOUBLE_EQ(opt.breakdown.ep_comm_s, ro.breakdown.ep_comm_s);
  // The only difference in the iteration: the gradient-norm all-reduce over
  // every GPU, which crosses rails (hierarchical on Rail-only): 24 us.
  EXPECT_NEAR(opt.iteration_time_s, ro.iteration_time_s, 50e-6);
  EXPECT_NEAR(opt.iteration_time_s - opt.breakdown.optimizer_s, ro.iteration_time_s - ro.breakdown.optimizer_s, 1e-9);
}

// DeepSeek-V3 with EP 64 over 8 domains. Rail-only runs forwarded (it must:
// no spine); against rail-optimized running direct its cost is the
// algorithm's, which here is a gain (a token crosses the NIC once per domain
// reached, 3.6 domains, instead of once per remote expert, 7 of 8 copies).
// Against rail-optimized running forwarded too the difference is zero: the
// forwarded dispatch is rail-aligned and never needs the spine.
TEST(MoeAtScaleTest, DeepSeekV3AcrossDomainsOnEachNetworkAndAlgorithm) {
  const perf::Estimate ro =
      Estimate("deepseek-v3", comm::NetworkKind::kRailOnly, DeepSeekStrategy(spec::MoeAllToAll::kAuto), 2048);
  const perf::Estimate opt =
      Estimate("deepseek-v3", comm::NetworkKind::kRailOptimized, DeepSeekStrategy(spec::MoeAllToAll::kAuto), 2048);
  const perf::Estimate opt_fwd = Estimate("deepseek-v3", comm::NetworkKind::kRailOptimized,
                                          DeepSeekStrategy(spec::MoeAllToAll::kForwarded), 2048);
  const double ro_forwarded = ro.iteration_time_s, opt_direct = opt.iteration_time_s;
  const double opt_forwarded = opt_fwd.iteration_time_s;
  std::printf("  DeepSeek-V3 on 2,048 H100: Rail-only forwarded %.3f s, rail-optimized direct %.3f s (%+.1f%%), "
              "rail-optimized forwarded %.3f s\n",
              ro_forwarded, opt_direct, 100 * (ro_forwarded / opt_direct - 1), opt_forwarded);
  EXPECT_LT(ro_forwarded, opt_direct);
  EXPECT_DOUBLE_EQ(opt_fwd.breakdown.ep_comm_s, ro.breakdown.ep_comm_s);
  // Again only the all-GPU gradient-norm all-reduce differs.
  EXPECT_NEAR(opt_forwarded, ro_forwarded, 50e-6);
}

// The traffic analysis sees the dispatch's flows: forwarded, no EP byte
// travels between two rails (NIC flows stay on their rail, the rest is
// inside HB domains); direct, 7 of every 8 remote copies change rail.
TEST(MoeAtScaleTest, ForwardedDispatchSendsNoCrossRailBytes) {
  perf::PerfContext c = perf::MakePerfContext(spec::LoadModel("deepseek-v3", "--model"),
                                              spec::LoadSystem("dgx-h100", "--system"), 2048,
                                              comm::NetworkKind::kRailOptimized);
  const int ep = int(perf::Parallelism::kEp);
  const int cross = int(TrafficClass::kCrossRail);
  TrafficOptions o;
  o.design = net::Design::kRailOptimized;
  TrafficResult forwarded = AnalyzeTraffic(c, DeepSeekStrategy(spec::MoeAllToAll::kForwarded), o);
  TrafficResult direct = AnalyzeTraffic(c, DeepSeekStrategy(spec::MoeAllToAll::kDirect), o);
  const double fwd_ep = forwarded.bytes_by_parallelism[size_t(ep)];
  const double dir_ep = direct.bytes_by_parallelism[size_t(ep)];
  const double dir_cross = direct.bytes_by_parallelism_and_class[size_t(ep)][size_t(cross)];
  std::printf("  DeepSeek-V3 EP bytes per iteration: forwarded %.3g (cross-rail 0), direct %.3g (cross-rail %.1f%%)\n",
              fwd_ep, dir_ep, 100 * dir_cross / dir_ep);
  ASSERT_GT(fwd_ep, 0);
  EXPECT_EQ(0, forwarded.bytes_by_parallelism_and_class[size_t(ep)][size_t(cross)]);
  // Direct: of a GPU's 63 peers, 7 share its domain, 7 its rail elsewhere,
  // 49 are on other rails in other domains.
  EXPECT_NEAR(49.0 / 63, dir_cross / dir_ep, 1e-9);
}

// --moe-dispatch-precision fp8 (DeepEP, DeepSeek-V3): the dispatch carries
// 7,392 bytes per token (hidden 7168 in fp8 plus 56 fp32 scales) instead of
// 14,336; the combine stays bf16 and costs what the bf16 dispatch costs. The
// forwarded dispatch's NIC stage is the slower one and is byte-bound (its
// fixed part: one NIC latency), so the fp8 dispatch takes about 7392/14336
// of the bf16 one; per layer and micro-batch the EP time is 2 x (dispatch +
// combine), 0.759 of bf16's.
TEST(MoeAtScaleTest, Fp8DispatchHalvesTheDispatchNotTheCombine) {
  spec::Strategy s = DeepSeekStrategy(spec::MoeAllToAll::kAuto);
  const perf::Estimate bf16 = Estimate("deepseek-v3", comm::NetworkKind::kRailOnly, s, 2048);
  s.moe_dispatch_precision = spec::MoeDispatchPrecision::kFp8;
  const perf::Estimate fp8 = Estimate("deepseek-v3", comm::NetworkKind::kRailOnly, s, 2048);
  std::printf("  DeepSeek-V3 dispatch: bf16 %.3f ms, fp8 %.3f ms (ratio %.3f, bytes 0.516); combine %.3f ms; "
              "EP comm %.3f s -> %.3f s\n",
              1e3 * bf16.moe.dispatch_s, 1e3 * fp8.moe.dispatch_s, fp8.moe.dispatch_s / bf16.moe.dispatch_s,
              1e3 * fp8.moe.combine_s, bf16.breakdown.ep_comm_s, fp8.breakdown.ep_comm_s);
  EXPECT_DOUBLE_EQ(bf16.moe.dispatch_s, bf16.moe.combine_s);
  EXPECT_DOUBLE_EQ(bf16.moe.dispatch_s, fp8.moe.combine_s);
  EXPECT_NEAR(7392.0 / 14336, fp8.moe.dispatch_s / bf16.moe.dispatch_s, 0.02);
  // The iteration's EP time falls (by more than the per-layer pair's 24%
  // here, as the slowest pipeline stage changes from one with more MoE
  // layers to another).
  EXPECT_LT(fp8.breakdown.ep_comm_s, 0.76 * bf16.breakdown.ep_comm_s);
}

}  // namespace
}  // namespace railsim::study
