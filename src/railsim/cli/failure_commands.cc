// `railsim failures`: what given failures do to each design and its job
// (--fail, --fail-file), and what a training run's worth of failures costs
// (the Monte Carlo, run when no failure is given or when --trials or --days
// is).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/model_flags.h"
#include "railsim/cli/strategy_flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/report/failure_report.h"
#include "railsim/spec/presets.h"
#include "railsim/study/failure_flags.h"

namespace railsim::cli {
namespace {

Action SetupFailures(CLI::App* sub) {
  struct Flags : study::FailureFlags {
    std::string format = "table";
    CLI::Option *fail_option = nullptr, *policy_option = nullptr, *sharding_option = nullptr;
  };
  auto f = std::make_shared<Flags>();
  sub->add_option("--network,--design", f->network, "rail-only, rail-optimized, fat-tree or all")->capture_default_str();
  sub->add_option("--system", f->system, "system preset or JSON file")->capture_default_str();
  sub->add_option("--gpus", f->gpus, "total GPUs N")->required();
  sub->add_option("--hb-size", f->hb_size, "GPUs per HB domain K (default: the system's)");
  sub->add_option("--gpus-per-domain", f->gpus_per_domain,
                  "the job uses N GPUs of each HB domain (default: all K); --gpus is a multiple of N, the domains "
                  "and the network are built whole, and a failure of an idle GPU does not stop the job");
  sub->add_option("--radix", f->radix, "switch radix (default 64, larger if 64 needs over three tiers)");
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio")->capture_default_str();
  AddModelFlags(sub, &f->model, "the job whose iteration time is timed", false);
  sub->add_option("--global-batch-size", f->global_batch, "sequences per iteration (with --model)");
  sub->add_option("--attention", f->attention, "flash or classic")->capture_default_str();
  f->sharding_option = AddStrategyFlags(sub, &f->strategy, true);
  f->fail_option = sub->add_option("--fail", f->fail,
                  "devices down, comma-separated: gpu17, nic17, hb5, switch:rail3/leaf2, switch:spine0, "
                  "link:rail0/leaf1-rail0/spine3");
  sub->add_option("--fail-file", f->fail_file, "a JSON array of device names, as --fail takes them");
  sub->add_option("--trials", f->trials, "Monte Carlo trials (default 10000)");
  sub->add_option("--days", f->days, "length of the training run simulated, days (default 30)");
  sub->add_option("--seed", f->seed, "Monte Carlo seed")->capture_default_str();
  sub->add_option("--failure-catalog", f->failure_catalog, "failure rates and repair times: preset or JSON file")
      ->capture_default_str();
  sub->add_option("--checkpoint-interval", f->checkpoint_interval, "training progress between checkpoints")
      ->capture_default_str();
  sub->add_option("--restart-time", f->restart_time, "time to restart the job after an interruption")
      ->capture_default_str();
  f->policy_option = sub->add_option("--spare-policy", f->spare_policy,
                  "any, same-rail, domain or ocs (default: any on rail-optimized and fat-tree, same-rail on "
                  "Rail-only)");
  sub->add_option("--target-availability", f->target_availability,
                  "share of the run the spares must cover every part under repair")
      ->capture_default_str();
  sub->add_flag("--no-simulate", f->no_simulate, "skip the simulator's check of the degraded collective");
  sub->add_option("--format", f->format, "table or json")->capture_default_str();
  return [f]() {
    Format format = ParseFormatFlag(f->format, false);
    f->fail_given = f->fail_option->count() > 0;
    f->policy_given = f->policy_option->count() > 0;
    f->strategy.optimizer.data_parallel_sharding_given = f->sharding_option->count() > 0;
    bool shown = false;
    study::FailureStudy study = study::RunFailureFlags(*f, ProgressLine("failures", "of trials", &shown));
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
