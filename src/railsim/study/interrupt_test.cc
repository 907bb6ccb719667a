// The long loops stop at a stop request (core/interrupt.h): a search, a
// flow simulation, the Monte Carlo of failures and a comparison each take
// seconds here and end with Interrupted when the hook says stop. How soon
// they stop is a speed, measured by study/interrupt_bench.cc (BENCHMARKS.md),
// not asserted here: under the sanitizers a comparison's setup alone takes
// over a second.
#include "railsim/core/interrupt.h"

#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/search/search.h"
#include "railsim/spec/presets.h"
#include "railsim/request/collective_flags.h"
#include "railsim/request/failure_flags.h"
#include "railsim/request/network_flags.h"

namespace railsim::study {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point g_stop_at;
bool StopAtDeadline() { return Clock::now() >= g_stop_at; }

// Runs `work` with a hook that says stop 200 ms in and fails when Interrupted
// did not come out of it.
template <typename Work>
void ExpectStopped(Work work) {
  ClearInterrupt();
  const Clock::time_point start = Clock::now();
  g_stop_at = start + std::chrono::milliseconds(200);
  SetInterruptPoll(&StopAtDeadline);
  bool stopped = false;
  try {
    work();
  } catch (const Interrupted&) {
    stopped = true;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  SetInterruptPoll(nullptr);
  ClearInterrupt();
  EXPECT_TRUE(stopped) << "ran to the end in " << seconds << " s";
  std::printf("  stopped after %.3f s (asked at 0.2 s)\n", seconds);
}

// DeepSeek-V3 on 32,768 H100s in HB domains of 256 at batch 15,360 with
// node-limited routing, on one thread: about 9 s on this machine.
TEST(InterruptTest, StopsASearch) {
  search::SearchOptions o;
  o.global_batch = 15360;
  o.moe.moe_max_domains = 4;
  o.moe.moe_overlap = true;
  o.threads = 1;
  const perf::PerfContext c = perf::MakePerfContext(spec::LoadModel("deepseek-v3", "--model"),
                                                    spec::LoadSystem("dgx-h100", "--system"), 32768,
                                                    comm::NetworkKind::kRailOptimized, 256);
  ExpectStopped([&] { search::Search(c, o); });
}

// A 1 MB-per-pair all-to-all over 2,048 GPUs simulated flow by flow (4 M
// flows): about 5 s.
TEST(InterruptTest, StopsASimulation) {
  request::AllToAllFlags f;
  f.cluster.system = "dgx-h100";
  f.cluster.gpus = "2048";
  f.cluster.network = "rail-only";
  f.cluster.simulate = true;
  f.bytes_per_pair = "1MB";
  ExpectStopped([&] { request::RunAllToAllFlags(f); });
}

// 500,000 trials of a 30-day run on 4,096 GPUs: about 15 s.
TEST(InterruptTest, StopsTheMonteCarlo) {
  request::FailureFlags f;
  f.network = "rail-only";
  f.gpus = "4096";
  f.radix = "64";
  f.trials = "500000";
  f.days = "30";
  ExpectStopped([&] { request::RunFailureFlags(f); });
}

// The default scenario's searches (MoE ones among them): 5 to 25 s.
TEST(InterruptTest, StopsAComparison) {
  request::CompareFlags f;
  ExpectStopped([&] { request::RunCompareFlags(f); });
}

}  // namespace
}  // namespace railsim::study
