// Benchmarks of the failure Monte Carlo at the scale (100,000 trials
// of a 30-day run on 32,768 GPUs, one core) and of one explicit failure with
// its simulated check.
#include <benchmark/benchmark.h>

#include "railsim/spec/presets.h"
#include "railsim/study/failures.h"

namespace railsim::study {
namespace {

ClusterSetup Cluster32k() {
  ClusterSetup setup;
  setup.system = spec::LoadSystem("dgx-h100", "--system");
  setup.gpus = 32768;
  setup.network.radix = 128;
  return setup;
}

void BM_MonteCarlo32k(benchmark::State& state) {
  const auto design = static_cast<net::Design>(state.range(0));
  ClusterSetup setup = Cluster32k();
  DesignSetup d = SetUpDesign(setup, design);
  MonteCarloOptions o;
  o.trials = state.range(1);
  o.catalog = spec::LoadFailureCatalog("h100-fleet", "--failure-catalog");
  std::vector<ComponentEffect> components = ComponentEffects(setup, d, o.catalog, o.days);
  for (auto _ : state) {
    MonteCarloResult r = RunMonteCarlo(d, components, DefaultSparePolicy(design), o);
    benchmark::DoNotOptimize(r.goodput);
  }
  state.counters["trials/s"] = benchmark::Counter(double(o.trials), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(net::DesignName(design)) + ", " + SparePolicyName(DefaultSparePolicy(design)));
}
BENCHMARK(BM_MonteCarlo32k)
    ->Args({static_cast<int>(net::Design::kRailOptimized), 100000})
    ->Args({static_cast<int>(net::Design::kRailOnly), 100000})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

void BM_ExplicitLeafFailure32k(benchmark::State& state) {
  ClusterSetup setup = Cluster32k();
  DesignSetup d = SetUpDesign(setup, net::Design::kRailOnly);
  for (auto _ : state) {
    FailureImpact r = AnalyzeFailures(setup, d, net::ResolveFailures(d.topology, {"switch:rail2/leaf5"}, "--fail"),
                                      SparePolicy::kSameRail, true);
    benchmark::DoNotOptimize(r.check);
  }
}
BENCHMARK(BM_ExplicitLeafFailure32k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railsim::study
