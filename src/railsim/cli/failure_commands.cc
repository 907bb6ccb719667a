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
#include "railsim/study/failures.h"

namespace railsim::cli {
namespace {

constexpr int64_t kMaxTrials = 10'000'000;
constexpr double kMaxDays = 3650;

struct FailureFlags {
  std::string network = "all";
  std::string system = "dgx-h100";
  std::string gpus, hb_size, radix, oversubscription = "1";
  ModelFlags model;
  std::string global_batch, attention = "flash";
  StrategyFlags strategy;
  std::string fail, fail_file;
  std::string trials, days, seed = "1";
  std::string failure_catalog = "h100-fleet";
  // Restart plus half an interval is 15 min lost per interruption, within the
  // 16.7 min bound Llama 3's run implies (tests/data/failure-rates.md, section 5).
  std::string checkpoint_interval = "20min", restart_time = "5min";
  std::string spare_policy, target_availability = "0.999";
  std::string format = "table";
  bool no_simulate = false;
  // Given at all, even as "" (an empty value is an error, not a default).
  CLI::Option *fail_given = nullptr, *policy_given = nullptr;
};

std::vector<net::Design> ParseDesigns(const std::string& text) {
  std::string n = ParseChoiceFlag("--network", text, {"rail-only", "rail-optimized", "fat-tree", "all"});
  if (n == "all") return {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree};
  return {*net::ParseDesign(n)};
}

double ParseDurationFlag(const std::string& flag, const std::string& text, double min_s, double max_s) {
  double s = units::ParseDuration(text, flag);
  if (!(s >= min_s) || !(s <= max_s)) {
    throw Error(flag, fmt::format("expected a duration in [{}, {}], got {}", units::FormatDuration(min_s),
                                  units::FormatDuration(max_s), Quoted(text)));
  }
  return s;
}

// The job, when --model is given: every strategy flag it needs, validated.
void ParseJob(const FailureFlags& f, study::ClusterSetup* setup) {
  const StrategyFlags& s = f.strategy;
  CheckSeqLengthNeedsModel(f.model);
  if (f.model.model.empty()) {
    for (auto [flag, value] : {std::pair{"--tp", &s.tp}, {"--pp", &s.pp}, {"--micro-batch-size", &s.micro_batch},
                               {"--global-batch-size", &f.global_batch}}) {
      if (!value->empty()) throw Error(flag, "describes the job; give --model too");
    }
    CheckStrategyFlagValues(s);
    ParseChoiceFlag("--attention", f.attention, {"flash", "classic"});
    return;
  }
  for (auto [flag, value] : {std::pair{"--tp", &s.tp}, {"--pp", &s.pp}, {"--micro-batch-size", &s.micro_batch},
                             {"--global-batch-size", &f.global_batch}}) {
    if (value->empty()) throw Error(flag, "needed with --model (the job to time)");
  }
  const int64_t batch = ParseIntFlag("--global-batch-size", f.global_batch, 1, spec::kMaxGlobalBatch);
  spec::Attention attention =
      ParseChoiceFlag("--attention", f.attention, {"flash", "classic"}) == "classic" ? spec::Attention::kClassic
                                                                                     : spec::Attention::kFlash;
  setup->model = LoadModelFlags(f.model);
  perf::PerfContext c = perf::MakePerfContext(*setup->model, setup->system, setup->gpus,
                                              comm::NetworkKind::kRailOptimized, setup->hb_domain_size,
                                              setup->network);
  setup->strategy = ParseStrategy(s, c, batch, attention);
}

study::SparePolicy PolicyFor(const std::string& text, bool given, net::Design design) {
  if (!given) return study::DefaultSparePolicy(design);
  study::SparePolicy p = *study::ParseSparePolicy(ParseChoiceFlag("--spare-policy", text, study::SparePolicyNames()));
  if (p == study::SparePolicy::kAny && design == net::Design::kRailOnly) {
    throw Error("--spare-policy", "any needs a network that joins the rails; a Rail-only spare must sit on the "
                                  "failed GPU's rail: use same-rail, domain or ocs (or --network rail-optimized)");
  }
  return p;
}

Action SetupFailures(CLI::App* sub) {
  auto f = std::make_shared<FailureFlags>();
  sub->add_option("--network,--design", f->network, "rail-only, rail-optimized, fat-tree or all")->capture_default_str();
  sub->add_option("--system", f->system, "system preset or JSON file")->capture_default_str();
  sub->add_option("--gpus", f->gpus, "total GPUs N")->required();
  sub->add_option("--hb-size", f->hb_size, "GPUs per HB domain K (default: the system's)");
  sub->add_option("--radix", f->radix, "switch radix (default 64, larger if 64 needs over three tiers)");
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio")->capture_default_str();
  AddModelFlags(sub, &f->model, "the job whose iteration time is timed", false);
  sub->add_option("--global-batch-size", f->global_batch, "sequences per iteration (with --model)");
  sub->add_option("--attention", f->attention, "flash or classic")->capture_default_str();
  AddStrategyFlags(sub, &f->strategy, true);
  f->fail_given = sub->add_option("--fail", f->fail,
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
  f->policy_given = sub->add_option("--spare-policy", f->spare_policy,
                  "any, same-rail, domain or ocs (default: any on rail-optimized and fat-tree, same-rail on "
                  "Rail-only)");
  sub->add_option("--target-availability", f->target_availability,
                  "share of the run the spares must cover every part under repair")
      ->capture_default_str();
  sub->add_flag("--no-simulate", f->no_simulate, "skip the simulator's check of the degraded collective");
  sub->add_option("--format", f->format, "table or json")->capture_default_str();
  return [f]() {
    Format format = ParseFormatFlag(f->format, false);
    std::vector<net::Design> designs = ParseDesigns(f->network);
    study::ClusterSetup setup;
    setup.gpus = ParseIntFlag("--gpus", f->gpus, 1, net::kMaxBuildGpus);
    setup.hb_domain_size = f->hb_size.empty() ? 0 : ParseIntFlag("--hb-size", f->hb_size, 1, net::kMaxBuildGpus);
    setup.network.radix = f->radix.empty() ? 0 : int(ParseIntFlag("--radix", f->radix, 2, 65536));
    setup.network.oversubscription = ParseNumberFlag("--oversubscription", f->oversubscription, 1, 65535);
    setup.system = spec::LoadSystem(f->system, "--system");
    const bool fail_given = f->fail_given->count() > 0;
    if (fail_given && !f->fail_file.empty()) {
      throw Error("--fail-file", "give the failures with --fail or --fail-file, not both");
    }
    std::vector<std::string> devices;
    std::string fail_flag = "--fail";
    if (fail_given) devices = net::SplitFailureList(f->fail, "--fail");
    if (!f->fail_file.empty()) {
      fail_flag = "--fail-file " + f->fail_file;
      devices = net::ParseFailureFile(ReadTextFile(f->fail_file, "--fail-file"), fail_flag);
    }
    const bool monte_carlo = devices.empty() || !f->trials.empty() || !f->days.empty();
    study::MonteCarloOptions mc;
    mc.trials = f->trials.empty() ? mc.trials : ParseIntFlag("--trials", f->trials, 1, kMaxTrials);
    mc.days = f->days.empty() ? mc.days : ParseNumberFlag("--days", f->days, 1.0 / 24, kMaxDays);
    mc.seed = static_cast<uint64_t>(ParseIntFlag("--seed", f->seed, 0, INT64_MAX));
    mc.checkpoint_interval_s = ParseDurationFlag("--checkpoint-interval", f->checkpoint_interval, 1, 30 * 86400.0);
    mc.restart_time_s = ParseDurationFlag("--restart-time", f->restart_time, 0, 30 * 86400.0);
    mc.target_availability = ParseNumberFlag("--target-availability", f->target_availability, 0.5, 0.999999);
    mc.catalog = spec::LoadFailureCatalog(f->failure_catalog, "--failure-catalog");
    std::vector<study::SparePolicy> policies;
    for (net::Design d : designs) policies.push_back(PolicyFor(f->spare_policy, f->policy_given->count() > 0, d));
    ParseJob(*f, &setup);

    report::FailureRun run;
    run.setup = &setup;
    bool shown = false;
    // One line for the whole run: design i's trials are the i-th share.
    auto line = ProgressLine("failures", "of trials", &shown);
    for (size_t i = 0; i < designs.size(); ++i) {
      study::DesignSetup d = study::SetUpDesign(setup, designs[i]);
      run.radix = d.context.shape.radix;
      if (!devices.empty()) {
        net::FailureSet failures = net::ResolveFailures(d.topology, devices, fail_flag);
        run.explicit_failures.push_back(study::AnalyzeFailures(setup, d, failures, policies[i], !f->no_simulate));
      }
      if (monte_carlo) {
        study::MonteCarloOptions o = mc;
        if (line) {
          o.progress = [&line, i, n = double(designs.size())](double done) { line((double(i) + done) / n); };
        }
        std::vector<study::ComponentEffect> components = study::ComponentEffects(setup, d, mc.catalog, mc.days);
        study::CheckMonteCarloWork(study::EstimateMonteCarloWork(components, policies[i], mc), mc, "--trials",
                                   "--failure-catalog");
        run.monte_carlo.push_back(study::RunMonteCarlo(d, components, policies[i], o));
      }
    }
    if (shown) PrintStderr("\n");
    if (monte_carlo) run.options = mc;
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
