// How soon the long loops stop once a stop is asked for (core/interrupt.h):
// the seconds from the request to Interrupted coming out of a search, a flow
// simulation, the failure Monte Carlo and a comparison. The work is the same
// as in interrupt_test.cc; the request comes 200 ms in, from the poll hook
// an embedder (Python's Ctrl-C) installs.
#include <benchmark/benchmark.h>

#include <chrono>

#include "railsim/core/interrupt.h"
#include "railsim/search/search.h"
#include "railsim/spec/presets.h"
#include "railsim/request/collective_flags.h"
#include "railsim/request/failure_flags.h"
#include "railsim/request/network_flags.h"

namespace railsim::request {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point g_stop_at;
bool StopAtDeadline() { return Clock::now() >= g_stop_at; }

// Times, per iteration, from the moment the hook starts saying stop to the
// moment Interrupted is caught. Work that runs to its end is an error.
template <typename Work>
void TimeStop(benchmark::State& state, Work work) {
  for (auto _ : state) {
    ClearInterrupt();
    g_stop_at = Clock::now() + std::chrono::milliseconds(200);
    SetInterruptPoll(&StopAtDeadline);
    bool stopped = false;
    try {
      work();
    } catch (const Interrupted&) {
      stopped = true;
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - g_stop_at).count();
    SetInterruptPoll(nullptr);
    ClearInterrupt();
    if (!stopped) {
      state.SkipWithError("ran to its end without stopping");
      break;
    }
    state.SetIterationTime(seconds);
  }
}

void BM_StopSearch(benchmark::State& state) {
  search::SearchOptions o;
  o.global_batch = 15360;
  o.moe.moe_max_domains = 4;
  o.moe.moe_overlap = true;
  o.threads = 1;
  const perf::PerfContext c = perf::MakePerfContext(spec::LoadModel("deepseek-v3", "--model"),
                                                    spec::LoadSystem("dgx-h100", "--system"), 32768,
                                                    comm::NetworkKind::kRailOptimized, 256);
  TimeStop(state, [&] { search::Search(c, o); });
}
BENCHMARK(BM_StopSearch)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_StopSimulation(benchmark::State& state) {
  AllToAllFlags f;
  f.cluster.system = "dgx-h100";
  f.cluster.gpus = "2048";
  f.cluster.network = "rail-only";
  f.cluster.simulate = true;
  f.bytes_per_pair = "1MB";
  TimeStop(state, [&] { RunAllToAllFlags(f); });
}
BENCHMARK(BM_StopSimulation)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_StopMonteCarlo(benchmark::State& state) {
  FailureFlags f;
  f.network = "rail-only";
  f.gpus = "4096";
  f.radix = "64";
  f.trials = "500000";
  f.days = "30";
  TimeStop(state, [&] { RunFailureFlags(f); });
}
BENCHMARK(BM_StopMonteCarlo)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_StopComparison(benchmark::State& state) {
  CompareFlags f;
  TimeStop(state, [&] { RunCompareFlags(f); });
}
BENCHMARK(BM_StopComparison)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace railsim::request
