// Search and estimate speed: strategies per second on one core, and the
// latency of one full estimate (targets: >= 1M strategies/s/core,
// microseconds per estimate).
#include <benchmark/benchmark.h>

#include "railsim/perf/estimate.h"
#include "railsim/search/search.h"
#include "railsim/spec/presets.h"

namespace railsim::search {
namespace {

perf::PerfContext Llama405B(int64_t gpus) {
  return perf::MakePerfContext(spec::LoadModel("llama3-405b", "--model"), spec::LoadSystem("dgx-h100", "--system"),
                               gpus, comm::NetworkKind::kRailOnly);
}

perf::PerfContext Gpt1T(int64_t gpus) {
  return perf::MakePerfContext(spec::LoadModel("megatron-1t", "--model"), spec::LoadSystem("dgx-h100", "--system"),
                               gpus, comm::NetworkKind::kRailOnly);
}

// Strategies enumerated (memory-checked, and timed when they fit) per second
// on one thread.
void RunOneThreadSearch(benchmark::State& state, const perf::PerfContext& c, int64_t batch,
                        std::vector<spec::Precision> precisions = {spec::Precision::kBf16},
                        bool explore_optimizer = false) {
  SearchOptions o;
  o.global_batch = batch;
  o.explore_optimizer = explore_optimizer;
  o.precisions = precisions;
  o.threads = 1;
  int64_t candidates = 0, timed = 0;
  for (auto _ : state) {
    SearchResult r = Search(c, o);
    candidates += r.candidates;
    timed += r.evaluated;
  }
  state.SetItemsProcessed(candidates);
  state.counters["timed_per_s"] = benchmark::Counter(double(timed), benchmark::Counter::kIsRate);
  state.counters["strategies"] = double(candidates) / double(state.iterations());
}

void BM_SearchOneThread(benchmark::State& state) {
  RunOneThreadSearch(state, Gpt1T(state.range(0)), state.range(1));
}
BENCHMARK(BM_SearchOneThread)->Args({32768, 4096})->Args({4096, 2048})->Unit(benchmark::kMillisecond);

// `search --explore-optimizer`: every data-parallel sharding and optimizer precision.
void BM_SearchExploreOptimizerOneThread(benchmark::State& state) {
  RunOneThreadSearch(state, Gpt1T(state.range(0)), state.range(1), {spec::Precision::kBf16}, true);
}
BENCHMARK(BM_SearchExploreOptimizerOneThread)->Args({32768, 4096})->Args({4096, 2048})->Unit(benchmark::kMillisecond);

// `search --precision any`: BF16 and FP8 GEMMs both explored.
void BM_SearchBothPrecisionsOneThread(benchmark::State& state) {
  RunOneThreadSearch(state, Gpt1T(32768), 4096, {spec::Precision::kBf16, spec::Precision::kFp8});
}
BENCHMARK(BM_SearchBothPrecisionsOneThread)->Unit(benchmark::kMillisecond);

void BM_SearchTwoThreads(benchmark::State& state) {
  perf::PerfContext c = Gpt1T(32768);
  SearchOptions o;
  o.global_batch = 4096;
  o.threads = 2;
  int64_t candidates = 0;
  for (auto _ : state) candidates += Search(c, o).candidates;
  state.SetItemsProcessed(candidates);
}
// A larger space: 126 layers split unevenly over many pipeline depths.
void BM_SearchLlama405BOneThread(benchmark::State& state) { RunOneThreadSearch(state, Llama405B(16384), 2048); }
BENCHMARK(BM_SearchLlama405BOneThread)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_SearchTwoThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EstimateOne(benchmark::State& state) {
  perf::PerfContext c = Gpt1T(32768);
  spec::Strategy s;
  s.tp = 8, s.pp = 16, s.dp = 256, s.vp = 8, s.micro_batch = 1, s.global_batch = 4096;
  s.sequence_parallel = true, s.dp_sharding = spec::DpSharding::kOptimizer;
  for (auto _ : state) benchmark::DoNotOptimize(perf::EstimateIteration(c, s).iteration_time_s);
}
BENCHMARK(BM_EstimateOne)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace railsim::search
