#include "railsim/request/failure_flags.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/spec/presets.h"
#include "railsim/study/flag_values.h"

namespace railsim::request {
namespace {

constexpr int64_t kMaxTrials = 10'000'000;
constexpr double kMaxDays = 3650;

std::vector<net::Design> ParseDesigns(const std::string& text) {
  std::string n = study::ParseChoiceFlag("--network", text, {"rail-only", "rail-optimized", "fat-tree", "all"});
  if (n == "all") return {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree};
  return {*net::ParseDesign(n)};
}

void ParseJob(const FailureFlags& f, study::ClusterSetup* setup) {
  const StrategyFlags& s = f.strategy;
  CheckSeqLengthNeedsModel(f.model);
  if (f.model.model.empty()) {
    for (auto [flag, value] : {std::pair{"--tp", &s.tp}, {"--pp", &s.pp}, {"--micro-batch-size", &s.micro_batch},
                               {"--global-batch-size", &f.global_batch}}) {
      if (!value->empty()) throw Error(flag, "describes the job; give --model too");
    }
    CheckStrategyFlagValues(s);
    study::ParseChoiceFlag("--attention", f.attention, {"flash", "classic"});
    return;
  }
  for (auto [flag, value] : {std::pair{"--tp", &s.tp}, {"--pp", &s.pp}, {"--micro-batch-size", &s.micro_batch},
                             {"--global-batch-size", &f.global_batch}}) {
    if (value->empty()) throw Error(flag, "needed with --model (the job to time)");
  }
  const int64_t batch = study::ParseIntFlag("--global-batch-size", f.global_batch, 1, spec::kMaxGlobalBatch);
  spec::Attention attention =
      study::ParseChoiceFlag("--attention", f.attention, {"flash", "classic"}) == "classic" ? spec::Attention::kClassic
                                                                                     : spec::Attention::kFlash;
  setup->model = LoadModelFlags(f.model);
  perf::PerfContext c = perf::MakePerfContext(*setup->model, setup->system, setup->gpus,
                                              comm::NetworkKind::kRailOptimized, setup->hb_domain_size,
                                              setup->network);
  setup->strategy = ParseStrategy(s, c, batch, attention);
}

study::SparePolicy PolicyFor(const std::string& text, bool given, net::Design design) {
  if (!given) return study::DefaultSparePolicy(design);
  study::SparePolicy p = *study::ParseSparePolicy(study::ParseChoiceFlag("--spare-policy", text, study::SparePolicyNames()));
  if (p == study::SparePolicy::kAny && design == net::Design::kRailOnly) {
    throw Error("--spare-policy", "any needs a network that joins the rails; a Rail-only spare must sit on the "
                                  "failed GPU's rail: use same-rail, domain or ocs (or --network rail-optimized)");
  }
  return p;
}


// The devices each design has, in `designs` order. With one design every
// name must be its own (ResolveFailures says why not, later); with several
// and switch or link names among them, a name some designs lack is dropped
// from theirs with a note, and one no design has is refused with the first
// design's error. Builds each graph once more to look names up, one at a
// time.
std::vector<std::vector<std::string>> DevicesPerDesign(const study::ClusterSetup& setup,
                                                       const std::vector<net::Design>& designs,
                                                       const std::vector<std::string>& devices,
                                                       const std::string& where, std::vector<std::string>* notes) {
  std::vector<std::vector<std::string>> out(designs.size());
  // GPUs, NICs and HB domains are named alike on every design.
  const bool by_design = std::any_of(devices.begin(), devices.end(), [](const std::string& d) {
    return d.starts_with("switch:") || d.starts_with("link:");
  });
  if (designs.size() == 1 || !by_design) {
    for (std::vector<std::string>& list : out) list = devices;
    return out;
  }
  // Per device, the error of each design that lacks it.
  std::vector<std::vector<std::optional<Error>>> missing(devices.size(),
                                                         std::vector<std::optional<Error>>(designs.size()));
  for (size_t i = 0; i < designs.size(); ++i) {
    const study::DesignSetup d = study::SetUpDesign(setup, designs[i]);
    for (size_t j = 0; j < devices.size(); ++j) {
      try {
        net::ResolveFailures(d.topology, {devices[j]}, where);
        out[i].push_back(devices[j]);
      } catch (const Error& e) {
        missing[j][i] = e;
      }
    }
  }
  for (size_t j = 0; j < devices.size(); ++j) {
    if (std::all_of(missing[j].begin(), missing[j].end(), [](const auto& e) { return e.has_value(); })) {
      throw *missing[j][0];
    }
  }
  for (size_t i = 0; i < designs.size(); ++i) {
    for (size_t j = 0; j < devices.size(); ++j) {
      if (missing[j][i]) {
        notes->push_back(fmt::format("{}; the {} network is analysed without it", missing[j][i]->what(),
                                     net::DesignName(designs[i])));
      }
    }
    if (out[i].empty()) {
      notes->push_back(fmt::format("the {} network has none of the devices given: no failure analysis for it",
                                   net::DesignName(designs[i])));
    }
  }
  return out;
}

}  // namespace

FailureStudy RunFailureFlags(const FailureFlags& f, const std::function<void(double)>& progress) {
  std::vector<net::Design> designs = ParseDesigns(f.network);
  FailureStudy run;
  study::ClusterSetup& setup = run.setup;
  setup.gpus = study::ParseIntFlag("--gpus", f.gpus, 1, net::kMaxBuildGpus);
  setup.hb_domain_size = f.hb_size.empty() ? 0 : study::ParseIntFlag("--hb-size", f.hb_size, 1, net::kMaxBuildGpus);
  setup.network.radix = f.radix.empty() ? 0 : int(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  setup.network.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  if (!f.gpus_per_domain.empty()) {
    setup.network.gpus_per_domain = study::ParseIntFlag("--gpus-per-domain", f.gpus_per_domain, 1, net::kMaxBuildGpus);
  }
  setup.system = spec::LoadSystem(f.system, "--system");
  const bool fail_given = f.fail_given;
  if (fail_given && !f.fail_file.empty()) {
    throw Error("--fail-file", "give the failures with --fail or --fail-file, not both");
  }
  std::vector<std::string> devices;
  std::string fail_flag = "--fail";
  if (fail_given) devices = net::SplitFailureList(f.fail, "--fail");
  if (!f.fail_file.empty()) {
    fail_flag = "--fail-file " + f.fail_file;
    devices = net::ParseFailureFile(ReadTextFile(f.fail_file, "--fail-file"), fail_flag);
  }
  const bool monte_carlo = devices.empty() || !f.trials.empty() || !f.days.empty();
  study::MonteCarloOptions mc;
  mc.trials = f.trials.empty() ? mc.trials : study::ParseIntFlag("--trials", f.trials, 1, kMaxTrials);
  mc.days = f.days.empty() ? mc.days : study::ParseNumberFlag("--days", f.days, 1.0 / 24, kMaxDays);
  mc.seed = static_cast<uint64_t>(study::ParseIntFlag("--seed", f.seed, 0, INT64_MAX));
  mc.checkpoint_interval_s = study::ParseDurationFlag("--checkpoint-interval", f.checkpoint_interval, 1, 30 * 86400.0);
  mc.restart_time_s = study::ParseDurationFlag("--restart-time", f.restart_time, 0, 30 * 86400.0);
  mc.target_availability = study::ParseNumberFlag("--target-availability", f.target_availability, 0.5, 0.999999);
  mc.catalog = spec::LoadFailureCatalog(f.failure_catalog, "--failure-catalog");
  std::vector<study::SparePolicy> policies;
  for (net::Design d : designs) policies.push_back(PolicyFor(f.spare_policy, f.policy_given, d));
  ParseJob(f, &setup);
  const std::vector<std::vector<std::string>> devices_of =
      DevicesPerDesign(setup, designs, devices, fail_flag, &run.notes);

  // One progress line for the whole run: design i's trials are the i-th share.
  const std::function<void(double)>& line = progress;
  for (size_t i = 0; i < designs.size(); ++i) {
    study::DesignSetup d = study::SetUpDesign(setup, designs[i]);
    run.radix = d.context.shape.radix;
    if (!devices_of[i].empty()) {
      net::FailureSet failures = net::ResolveFailures(d.topology, devices_of[i], fail_flag);
      run.explicit_failures.push_back(study::AnalyzeFailures(setup, d, failures, policies[i], !f.no_simulate));
    }
    if (monte_carlo) {
      study::MonteCarloOptions o = mc;
      if (line) {
        o.progress = [&line, i, n = double(designs.size())](double done) { line((double(i) + done) / n); };
      }
      std::vector<study::ComponentEffect> components = study::ComponentEffects(setup, d, mc.catalog, mc.days);
      study::CheckMonteCarloWork(study::EstimateMonteCarloWork(components, policies[i], mc), mc, "--trials", "--failure-catalog");
      run.monte_carlo.push_back(study::RunMonteCarlo(d, components, policies[i], o));
    }
  }
  if (monte_carlo) run.options = mc;
  // Only now that nothing was refused (a bad flag gives its error alone).
  if (setup.model) PrintWarning(ModelDefaultsWarning(f.model, *setup.model));
  return run;
}

}  // namespace railsim::request
