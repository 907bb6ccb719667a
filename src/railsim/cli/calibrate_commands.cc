// `railsim calibrate`: fit a system's communication and compute parameters
// to the user's own nccl-tests output and measured step times, and write a
// system file that --system accepts (calibrate/calibrate.h, docs/calibrate.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/report/calibrate_report.h"
#include "railsim/spec/presets.h"
#include "railsim/calibrate/calibrate.h"

namespace railsim::cli {
namespace {

Action SetupCalibrate(CLI::App* sub) {
  struct Flags {
    std::string system, steps, out, holdout = "0", format = "table";
    std::vector<std::string> nccl_tests;
  };
  auto f = std::make_shared<Flags>();
  sub->add_option("--system", f->system, "the system to start from: preset or JSON file")->required();
  sub->add_option("--nccl-tests", f->nccl_tests,
                  "nccl-tests output files (the text the *_perf binaries print, or CSV ending in .csv)")
      ->required()
      ->expected(1, -1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  sub->add_option("--steps", f->steps, "CSV of measured step times, columns named after estimate's flags");
  sub->add_option("--out", f->out, "write the calibrated system JSON to this file");
  sub->add_option("--holdout", f->holdout, "share of the rows kept out of the fit and reported (0 to 0.9)")
      ->capture_default_str();
  sub->add_option("--format", f->format, "table or json")->capture_default_str();
  return [f]() {
    Format format = ParseFormatFlag(f->format, false);
    calibrate::CalibrationOptions o;
    o.holdout = ParseNumberFlag("--holdout", f->holdout, 0, calibrate::kMaxHoldout);
    spec::SystemSpec base = spec::LoadSystem(f->system, "--system");
    std::vector<calibrate::NcclTestsRun> runs;
    for (const std::string& path : f->nccl_tests) {
      std::vector<calibrate::NcclTestsRun> more = calibrate::ReadNcclTests(path, "--nccl-tests");
      runs.insert(runs.end(), more.begin(), more.end());
    }
    std::vector<calibrate::StepRun> steps;
    if (!f->steps.empty()) steps = calibrate::ReadSteps(f->steps, "--steps");
    calibrate::CalibrationResult r = calibrate::Calibrate(base, runs, steps, o);
    if (!f->out.empty()) WriteTextFile(f->out, spec::SystemToJson(r.system), "--out");
    std::string text = format == Format::kJson ? report::CalibrateJson(r) : report::CalibrateTable(r);
    if (format == Format::kTable && !f->out.empty() && CheckOutputPath(f->out, "--out").kind != OutputKind::kStdout) {
      text += fmt::format("\nWrote the calibrated system to {} (use it as --system {}).\n", f->out, f->out);
    }
    PrintStdout(text);
    return 0;
  };
}

}  // namespace

std::vector<Command> CalibrateCommands() {
  return {
      {"calibrate",
       "fit the system's communication and compute parameters to your nccl-tests output and step times",
       SetupCalibrate,
       "  railsim calibrate --system dgx-h100 --nccl-tests all_reduce_perf.txt all_gather_perf.txt \\\n"
       "      --steps steps.csv --holdout 0.2 --out my-cluster.json"},
  };
}

}  // namespace railsim::cli
