// Published step times beyond the calibration set (tests/data/step-times-
// public.csv, 116 runs of NeMo, Megatron-LM / Megatron-Core, Megatron-Bridge,
// llm-foundry, NeMo AutoModel, torchtitan and MaxText; sources in its .md).
// Every row railsim can express is predicted and printed with its error; the
// rest are skipped with the reason. The H100's step parameters were fitted
// on the H100 calibration rows plus the NeMo rows testutil::IsFitRow names,
// its per-iteration cost on the Megatron-LM functional tests it names
// (H100RefitTest.StepTimeParameters); the other Megatron/NeMo rows are held
// out, and the check is on them. RAILSIM_DEBUG=SUBSTRING prints the
// breakdown of the rows whose id holds it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "testutil/reference_data.h"
#include "railsim/perf/estimate.h"
#include "testutil/public_step_times.h"
#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

using testutil::PublicRow;

TEST(PublicStepTimesTest, PredictsEveryExpressibleRow) {
  std::vector<PublicRow> rows = testutil::ReadPublicRows();
  ASSERT_EQ(rows.size(), 116u);
  struct Sum {
    double abs = 0;
    int n = 0;
  };
  std::map<std::string, Sum> by_stack;
  Sum held_out, fitted;
  int skipped = 0;
  std::printf("  %-62s %-14s %8s %9s %7s\n", "run", "stack", "measured", "predicted", "error");
  for (const PublicRow& r : rows) {
    testutil::Expressed x = testutil::Express(r);
    if (!x.why_not.empty()) {
      std::printf("  %-62s skipped: %s\n", r.id.substr(0, 62).c_str(), x.why_not.c_str());
      ++skipped;
      continue;
    }
    PerfContext c = MakePerfContext(x.model, x.system, x.gpus, comm::NetworkKind::kRailOptimized);
    ApplyStack(x.stack, &c, x.iteration_overhead_s);
    Estimate e = EstimateIteration(c, x.strategy);
    const double error = e.iteration_time_s / r.step_time_s - 1;
    const bool fit = testutil::IsFitRow(r.id);
    std::printf("  %-62s %-14s %7.3fs %8.3fs %+6.1f%%%s\n", r.id.substr(0, 62).c_str(), spec::StackName(x.stack),
                r.step_time_s, e.iteration_time_s, 100 * error, fit ? "  (fit)" : "");
    if (const char* debug = std::getenv("RAILSIM_DEBUG"); debug && r.id.find(debug) != std::string::npos) {
      for (const TimeBreakdown::Component& part : e.breakdown.components()) {
        std::printf("      %-22s %.3f\n", part.label, part.seconds);
      }
    }
    Sum& s = by_stack[spec::StackName(x.stack)];
    s.abs += std::fabs(error);
    ++s.n;
    if (x.megatron()) {
      Sum& group = fit ? fitted : held_out;
      group.abs += std::fabs(error);
      ++group.n;
    }
  }
  std::printf("  %d rows skipped\n", skipped);
  for (const auto& [stack, s] : by_stack) {
    std::printf("  stack profile %-14s %3d rows, mean absolute error %.1f%%\n", stack.c_str(), s.n,
                100 * s.abs / s.n);
  }
  ASSERT_GT(held_out.n, 20);
  const double mean = held_out.abs / held_out.n;
  std::printf("  Megatron/NeMo held out: %d rows, mean absolute error %.1f%% (fitted rows: %d, %.1f%%)\n",
              held_out.n, 100 * mean, fitted.n, fitted.n ? 100 * fitted.abs / fitted.n : 0.0);
  EXPECT_LE(mean, testutil::kHeldOutBound);
}

}  // namespace
}  // namespace railsim::perf
