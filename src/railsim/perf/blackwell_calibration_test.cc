// The Blackwell presets (dgx-b200, gb200-nvl72: the B200 die; dgx-b300,
// gb300-nvl72: Blackwell Ultra) against NVIDIA's Megatron-Bridge performance
// tables (tests/data/blackwell-megatron-bridge.csv):
//  - BlackwellCalibrationTest prints every row railsim can express,
//    predicted against measured, and asserts the mean error of the fitted
//    rows and of the held-out rows of the fit's software generation;
//  - BlackwellRefitTest (RAILSIM_FIT=1 only) re-derives the presets' fitted
//    values: per die, the FP8 and NVFP4 GEMM efficiencies and the MoE layer
//    overhead, least squares on log(predicted / measured) over the rows
//    testutil::IsBlackwellFitRow names (calibrate::FitLeastSquares).
// The BF16 GEMM efficiency has no BF16 row to be fitted on: it is the FP8
// one times the H100 fit's BF16 / FP8 ratio (0.6491 / 0.539). The attention
// rate, fixed costs and straggler jitter stay the H100 fit's.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/blackwell_rows.h"
#include "railsim/spec/presets.h"
#include "railsim/calibrate/least_squares.h"

namespace railsim::testutil {
namespace {

// The mean absolute relative error of some rows.
struct Errors {
  double sum = 0, sum_signed = 0, worst = 0;
  int rows = 0;
  void Add(double e) {
    sum += std::abs(e);
    sum_signed += e;
    worst = std::max(worst, std::abs(e));
    ++rows;
  }
  double mean() const { return rows ? sum / rows : 0; }
  double mean_signed() const { return rows ? sum_signed / rows : 0; }
};

bool OnBlackwell(const BlackwellRow& r) { return r.why_not.empty() && r.system != "dgx-h100"; }

// The containers of the fit's software generation (26.02 to 26.04.01),
// whose held-out rows the test bounds; older and newer ones show how far
// software moves the same configurations.
bool SameGeneration(const std::string& version) { return version.rfind("26.02", 0) == 0 || version.rfind("26.04", 0) == 0; }

TEST(BlackwellCalibrationTest, FittedAndHeldOutRows) {
  const std::vector<BlackwellRow> rows = ReadBlackwellRows();
  std::map<std::string, spec::SystemSpec> presets;
  Errors fit, held_out;
  std::map<std::string, Errors> by_container;
  int skipped = 0;
  std::printf("%-58s %9s %9s %8s\n", "row", "measured", "predicted", "error");
  for (const BlackwellRow& r : rows) {
    if (!r.why_not.empty()) {
      ++skipped;
      continue;
    }
    if (!presets.count(r.system)) presets[r.system] = spec::LoadSystem(r.system, "--system");
    const double predicted = PredictBlackwellRow(r, presets[r.system]);
    const double e = predicted / r.step_time_s - 1;
    const bool fitted = IsBlackwellFitRow(r);
    std::printf("%-58s %8.3fs %8.3fs %+7.1f%%%s\n", r.id.c_str(), r.step_time_s, predicted, 100 * e,
                fitted ? " (fit)" : r.system == "dgx-h100" ? " (H100 fit)" : "");
    if (!OnBlackwell(r)) continue;
    if (fitted) {
      fit.Add(e);
    } else {
      by_container[r.version].Add(e);
      if (SameGeneration(r.version)) held_out.Add(e);
    }
  }
  std::printf("fitted rows: %d, mean |error| %.1f%%, worst %.1f%%\n", fit.rows, 100 * fit.mean(), 100 * fit.worst);
  std::printf("held out, containers 26.02-26.04: %d rows, mean |error| %.1f%%, worst %.1f%%\n", held_out.rows,
              100 * held_out.mean(), 100 * held_out.worst);
  for (const auto& [version, e] : by_container) {
    std::printf("  container %-9s %2d rows held out: mean error %+.1f%%, mean |error| %.1f%%\n", version.c_str(),
                e.rows, 100 * e.mean_signed(), 100 * e.mean());
  }
  std::printf("rows railsim cannot express: %d (Nemotron hybrid Mamba, LoRA, token dropping, no precision)\n",
              skipped);
  EXPECT_EQ(16, fit.rows);
  EXPECT_EQ(30, held_out.rows);
  EXPECT_LE(fit.mean(), 0.04);       // the target
  EXPECT_LE(held_out.mean(), 0.06);  // the target
}

// The fitted parameters of one die, shared by its two systems (the DGX and
// the NVL72 rack: the same silicon, their datasheet peaks already differ).
struct DieFit {
  const char* name;
  std::vector<std::string> systems;
};

void SetDie(const std::vector<double>& x, size_t at, spec::SystemSpec* s) {
  constexpr double kBf16OverFp8 = 0.6491 / 0.539;  // the H100 fit's ratio
  s->gpu.fp8_gemm_efficiency = x[at];
  s->gpu.mxfp8_gemm_efficiency = x[at];
  s->gpu.gemm_efficiency = std::min(0.95, x[at] * kBf16OverFp8);
  s->gpu.fp4_gemm_efficiency = x[at + 1];
  s->gpu.moe_layer_overhead_s = x[at + 2];
}

TEST(BlackwellRefitTest, GemmEfficienciesAndMoeOverhead) {
  if (!std::getenv("RAILSIM_FIT")) GTEST_SKIP() << "set RAILSIM_FIT=1 to refit the Blackwell presets";
  const std::vector<DieFit> dies = {{"B200", {"dgx-b200", "gb200-nvl72"}}, {"B300", {"dgx-b300", "gb300-nvl72"}}};
  std::vector<BlackwellRow> rows;
  for (const BlackwellRow& r : ReadBlackwellRows()) {
    if (IsBlackwellFitRow(r)) rows.push_back(r);
  }
  std::map<std::string, spec::SystemSpec> presets;
  std::map<std::string, size_t> die_of;
  for (size_t d = 0; d < dies.size(); ++d) {
    for (const std::string& s : dies[d].systems) {
      presets[s] = spec::LoadSystem(s, "--system");
      die_of[s] = 3 * d;
    }
  }
  auto residuals = [&](const std::vector<double>& x) {
    std::vector<double> out;
    for (const BlackwellRow& r : rows) {
      spec::SystemSpec s = presets[r.system];
      SetDie(x, die_of[r.system], &s);
      out.push_back(std::log(PredictBlackwellRow(r, s) / r.step_time_s));
    }
    return out;
  };
  calibrate::Bounds bounds{{0.2, 0.1, 0, 0.2, 0.1, 0}, {0.95, 0.95, 5e-3, 0.95, 0.95, 5e-3}};
  const std::vector<double> x =
      calibrate::FitLeastSquares(residuals, {{0.54, 0.54, 0.2e-3, 0.54, 0.54, 0.2e-3}}, bounds);
  for (size_t d = 0; d < dies.size(); ++d) {
    std::printf("%s: fp8 and mxfp8 %.4f, fp4 %.4f, MoE layer overhead %.1f us (BF16 %.4f)\n", dies[d].name,
                x[3 * d], x[3 * d + 1], 1e6 * x[3 * d + 2], x[3 * d] * 0.6491 / 0.539);
  }
  for (const BlackwellRow& r : rows) std::printf("  fitted on %s (line %d)\n", r.id.c_str(), r.line);
}

}  // namespace
}  // namespace railsim::testutil
