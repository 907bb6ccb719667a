// How the step-time parameters of presets/systems/dgx-h100.json are fitted:
// study::Calibrate (what `railsim calibrate --steps` runs: least squares on
// log(predicted / measured)) on the 20 BF16 rows of tests/data/h100-steps.csv
// plus the step-times-public.csv rows testutil::IsFitRow names, from the
// preset's own values; then the FP8 GEMM efficiency alone on the five FP8
// rows of tests/data/h100-fp8-calibration.csv (the same GPT-3 175B layouts),
// the value of least mean absolute error on a 0.001 grid. Runs only with
// RAILSIM_FIT=1: it prints the fit and asserts nothing (the accuracy tests
// assert what the preset reaches).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/reference_data_test_util.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/public_step_times_test_util.h"
#include "railsim/spec/presets.h"
#include "railsim/study/calibrate.h"

namespace railsim::study {
namespace {

std::string DataPath(const std::string& name) { return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/" + name; }

// The public rows the fit uses, as calibrate's step runs.
std::vector<StepRun> PublicFitRows() {
  std::vector<StepRun> steps;
  const char* only = std::getenv("RAILSIM_FIT_PUBLIC");  // exploring: a substring the fitted ids must hold
  for (const testutil::PublicRow& r : testutil::ReadPublicRows()) {
    if (!testutil::IsFitRow(r.id)) continue;
    if (only && r.id.find(only) == std::string::npos) continue;
    testutil::Expressed x = testutil::Express(r);
    EXPECT_TRUE(x.why_not.empty()) << r.id << ": " << x.why_not;
    StepRun s;
    s.file = "step-times-public.csv";
    s.id = r.id;
    s.model = x.model;
    s.gpus = x.gpus;
    s.strategy = x.strategy;
    s.step_time_s = r.step_time_s;
    steps.push_back(s);
  }
  return steps;
}

// The FP8 rows: the GPT-3 175B rows of h100-steps.csv with FP8 GEMMs and
// the FP8 step times of the same GPU counts.
std::vector<StepRun> Fp8Rows(const std::vector<StepRun>& bf16) {
  std::vector<StepRun> fp8;
  for (const std::vector<std::string>& c : testutil::ReadReferenceCsv("h100-fp8-calibration.csv")) {
    for (const StepRun& b : bf16) {
      if (b.id.rfind("gpt3-175b-", 0) != 0 || b.gpus != std::stoll(c[2])) continue;
      StepRun s = b;
      s.id = c[0];
      s.strategy.precision = spec::Precision::kFp8;
      s.step_time_s = std::stod(c[12]);
      fp8.push_back(s);
    }
  }
  return fp8;
}

TEST(H100RefitTest, StepTimeParameters) {
  if (!std::getenv("RAILSIM_FIT")) GTEST_SKIP() << "set RAILSIM_FIT=1 to refit";
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  std::vector<StepRun> steps = ReadSteps(DataPath("h100-steps.csv"), "--steps");
  const std::vector<StepRun> bf16 = steps;
  for (const StepRun& s : PublicFitRows()) steps.push_back(s);
  CalibrationOptions options;
  if (const char* keep = std::getenv("RAILSIM_FIT_KEEP")) {  // exploring: comma-separated keys
    std::string k = keep;
    for (size_t at = 0; at <= k.size();) {
      size_t comma = std::min(k.find(',', at), k.size());
      if (comma > at) options.keep.push_back(k.substr(at, comma - at));
      at = comma + 1;
    }
  }
  CalibrationResult r = Calibrate(h100, {}, steps, options);
  for (const FittedParameter& p : r.parameters) {
    if (p.fitted) std::printf("  %-32s %10.4g -> %10.4g (%d rows)\n", p.key.c_str(), p.before, p.after, p.rows);
  }
  for (const CalibrationRow& row : r.rows) {
    std::printf("  %-56s %8.3fs %8.3fs %+6.1f%%\n", row.label.c_str(), row.measured_s, row.predicted_s,
                100 * row.error());
  }
  std::printf("  %d rows: mean %.2f%% worst %.2f%%\n", r.step_fit.rows, 100 * r.step_fit.mean_abs,
              100 * r.step_fit.worst);
  const std::vector<StepRun> fp8 = Fp8Rows(bf16);
  ASSERT_EQ(5u, fp8.size());
  double best = 0, best_mean = 1, best_worst = 1;
  for (int milli = 300; milli <= 950; ++milli) {
    spec::SystemSpec s = r.system;
    s.gpu.fp8_gemm_efficiency = milli / 1000.0;
    double mean = 0, worst = 0;
    for (const StepRun& run : fp8) {
      const double e = std::fabs(PredictStep(s, run) / run.step_time_s - 1);
      mean += e / double(fp8.size());
      worst = std::max(worst, e);
    }
    if (mean < best_mean) {
      best = s.gpu.fp8_gemm_efficiency;
      best_mean = mean;
      best_worst = worst;
    }
  }
  std::printf("  FP8: fp8_gemm_efficiency %.3f: mean %.2f%% worst %.2f%%\n", best, 100 * best_mean,
              100 * best_worst);
  // The held-out Megatron/NeMo rows on H100 with the fitted system.
  spec::SystemSpec fitted = r.system;
  fitted.gpu.fp8_gemm_efficiency = best;
  double held = 0;
  int n = 0;
  for (const testutil::PublicRow& row : testutil::ReadPublicRows()) {
    testutil::Expressed x = testutil::Express(row);
    if (!x.why_not.empty() || !x.megatron() || testutil::IsFitRow(row.id) || x.system.name != "dgx-h100") continue;
    perf::PerfContext c = perf::MakePerfContext(x.model, fitted, x.gpus, comm::NetworkKind::kRailOptimized);
    perf::ApplyStack(x.stack, &c);
    const double e = perf::EstimateIteration(c, x.strategy).iteration_time_s / row.step_time_s - 1;
    std::printf("  held out %-52s %+6.1f%%\n", row.id.c_str(), 100 * e);
    held += std::fabs(e);
    ++n;
  }
  std::printf("  held-out H100 Megatron/NeMo rows: %d, mean %.2f%%\n", n, 100 * held / n);
}

}  // namespace
}  // namespace railsim::study
