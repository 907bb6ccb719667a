// `railsim failures`: what given failures do to each design and its job
// (--fail, --fail-file), and what a training run's worth of failures costs
// (the Monte Carlo, run when no failure is given or when --trials or --days
// is).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flag_rows.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/model_flags.h"
#include "railsim/cli/strategy_flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/report/failure_report.h"
#include "railsim/spec/presets.h"
#include "railsim/request/failure_flags.h"

namespace railsim::cli {
namespace {

Action SetupFailures(CLI::App* sub) {
  struct Flags : request::FailureFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddFlagRows(sub, request::FailureFlagTable(), static_cast<request::FailureFlags*>(f.get()));
  AddModelFlags(sub, &f->model, "the job whose iteration time is timed", false);
  sub->add_option("--format", f->format, "table or json")->capture_default_str();
  return [f]() {
    Format format = ParseFormatFlag(f->format, false);
    bool shown = false;
    request::FailureStudy study = request::RunFailureFlags(*f, ProgressLine("failures", "of trials", &shown));
    if (shown) PrintStderr("\n");
    for (const std::string& note : study.notes) PrintStderr(fmt::format("railsim: warning: {}\n", note));
    report::FailureRun run{&study.setup, study.radix, study.explicit_failures, study.monte_carlo, study.options,
                           study.notes};
    PrintStdout(format == Format::kJson ? report::FailureJson(run) : report::FailureTable(run));
    return 0;
  };
}

}  // namespace

std::vector<Command> FailureCommands() {
  return {
      {"failures",
       "what failures do to each design and its job, and a Monte Carlo of a training run's failures: "
       "interruptions, goodput, spares",
       SetupFailures, "  railsim failures --gpus 32768 --network rail-only --radix 128 --fail switch:rail2/leaf5 \\\n      --model megatron-1t --tp 8 --pp 64 --micro-batch-size 1 --global-batch-size 4096\n  railsim failures --gpus 32768 --radix 128 --trials 100000   # Monte Carlo, every design"},
  };
}

}  // namespace railsim::cli
