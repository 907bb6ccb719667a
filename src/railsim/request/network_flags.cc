#include "railsim/request/network_flags.h"

#include <algorithm>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/spec/presets.h"
#include "railsim/study/flag_values.h"

namespace railsim::request {
namespace {

std::vector<int64_t> ParseListFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::vector<int64_t> out;
  for (const std::string& entry : study::SplitFlagList(flag, text)) out.push_back(study::ParseIntFlag(flag, entry, min, max));
  return out;
}

void AddNote(const std::string& note, std::vector<std::string>* notes) {
  if (!note.empty()) notes->push_back(note);
}

// "32,760 and 32,832": the cluster sizes nearest `gpus` that `k` divides.
std::string NearestMultiples(int64_t gpus, int64_t k) {
  const int64_t below = gpus / k * k, above = below + k;
  return below > 0 ? fmt::format("{} and {}", units::Grouped(below), units::Grouped(above))
                   : units::Grouped(above);
}


// The scenario as described after overrides: what the table's first line says.
std::string DescribeScenario(const spec::Scenario& s, const std::string& base) {
  std::vector<std::string> parts = {fmt::format("{} GPUs at {}, HB domains of {}, switch radix {}",
                                                units::Grouped(s.gpus), units::FormatBitRate(s.port_speed_Bps),
                                                fmt::join(s.hb_domain_sizes, ", "), fmt::join(s.radixes, ", "))};
  if (!s.model.empty()) {
    parts.push_back(fmt::format("{} on {} at global batch {}", s.model, s.system, fmt::join(s.global_batch_sizes, ", ")));
  }
  if (!s.moe_model.empty()) {
    parts.push_back(fmt::format("{} at batch {}", s.moe_model, units::Grouped(s.moe_global_batch_size)));
  }
  return fmt::format("{} (scenario '{}' with overrides)", fmt::join(parts, "; "), base);
}

}  // namespace

net::TopologyParams ParseTopology(const NetworkFlags& f, std::optional<net::Design> design) {
  net::TopologyParams p;
  p.design = design.value_or(net::Design::kRailOptimized);
  int64_t max_gpus = study::ParseIntFlag("--max-gpus", f.max_gpus, 1, net::kHardMaxBuildGpus);
  p.gpus = study::ParseIntFlag("--gpus", f.gpus, 1, INT64_MAX);
  p.hb_domain_size = static_cast<int>(study::ParseIntFlag("--hb-size", f.hb_size, 1, net::kHardMaxBuildGpus));
  p.radix = static_cast<int>(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  p.port_speed_Bps = study::ParseBandwidthFlag("--port-speed", f.port_speed);
  // The real bound is the radix's: a leaf keeps at least one up-link.
  p.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, std::max(1, p.radix - 1));
  p.gpus_per_nic = static_cast<int>(study::ParseIntFlag("--gpus-per-nic", f.gpus_per_nic, 1, net::kHardMaxBuildGpus));
  if (!design) {
    net::ValidateAllDesigns(p, max_gpus);
  } else {
    net::ValidateTopologyParams(p, max_gpus);
  }
  return p;
}

spec::PortClass ResolvePortClass(const std::string& catalog_name, double port_speed_Bps) {
  return study::PortClassFor(spec::LoadCatalog(catalog_name, "--catalog"), port_speed_Bps, "--port-speed");
}

spec::ServerClass ResolveServer(const std::string& catalog_name, const std::string& name) {
  spec::Catalog catalog = spec::LoadCatalog(catalog_name, "--catalog");
  std::optional<spec::ServerClass> s = catalog.FindServer(name);
  if (!s) {
    std::vector<std::string> names;
    for (const spec::ServerClass& c : catalog.servers) names.push_back(c.name);
    throw Error("--server", fmt::format("catalog '{}' has no server {}{}; it has {}", catalog.name, Quoted(name),
                                        DidYouMean(name, names), names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "))));
  }
  return *s;
}

// `system`: the loaded --system override, if given; its HB domain size and
// NIC speed become the defaults of --hb-sizes and --port-speed.
void ApplyScenarioOverrides(const ScenarioOverrides& o, const spec::SystemSpec* system, spec::Scenario* s,
                            std::vector<std::string>* notes) {
  if (!o.gpus.empty()) s->gpus = study::ParseIntFlag("--gpus", o.gpus, 1, int64_t{1} << 20);
  if (!o.hb_sizes.empty()) {
    s->hb_domain_sizes.clear();
    for (int64_t k : ParseListFlag("--hb-sizes", o.hb_sizes, 1, s->gpus)) s->hb_domain_sizes.push_back(int(k));
  } else if (system && s->hb_domain_sizes != std::vector<int>{int(system->hb_domain_size)}) {
    notes->push_back(fmt::format("--system {}: HB domains of {} (the system's) in place of the scenario's {}; give "
                                 "--hb-sizes to choose them",
                                 system->name, system->hb_domain_size, fmt::join(s->hb_domain_sizes, ", ")));
    s->hb_domain_sizes = {int(system->hb_domain_size)};
  }
  // A system given replaces every domain size's; sizes given keep the
  // systems of those they still hold.
  if (!o.system.empty()) s->hb_domain_systems.clear();
  std::erase_if(s->hb_domain_systems, [&](const auto& entry) {
    return std::find(s->hb_domain_sizes.begin(), s->hb_domain_sizes.end(), entry.first) == s->hb_domain_sizes.end();
  });
  for (int k : s->hb_domain_sizes) {
    if (s->gpus % s->GpusPerDomain(k) != 0) {
      throw Error(o.hb_sizes.empty() && !system ? "--gpus" : o.hb_sizes.empty() ? "--system" : "--hb-sizes",
                  fmt::format("HB domain size {} does not divide {} GPUs; the nearest cluster sizes it divides are {}",
                              k, units::Grouped(s->gpus), NearestMultiples(s->gpus, k)));
    }
  }
  if (!o.radixes.empty()) {
    s->radixes.clear();
    for (int64_t k : ParseListFlag("--radixes", o.radixes, 2, 65536)) {
      if (k % 2 != 0) throw Error("--radixes", fmt::format("expected even radixes, got {}", k));
      s->radixes.push_back(int(k));
    }
  }
  if (!o.port_speed.empty()) {
    s->port_speed_Bps = study::ParseBandwidthFlag("--port-speed", o.port_speed);
  } else if (system && s->port_speed_Bps != system->nic_bw_Bps) {
    notes->push_back(fmt::format("--system {}: links at {} (the system's NIC speed) in place of the scenario's {}; "
                                 "give --port-speed to choose it",
                                 system->name, units::FormatBitRate(system->nic_bw_Bps),
                                 units::FormatBitRate(s->port_speed_Bps)));
    s->port_speed_Bps = system->nic_bw_Bps;
  }
  if (!o.model.empty()) s->model = o.model == spec::kNoModel ? "" : o.model;
  if (!o.system.empty()) s->system = o.system;
  if (!o.batches.empty()) s->global_batch_sizes = ParseListFlag("--global-batch-sizes", o.batches, 1, int64_t{1} << 30);
  if (!o.moe_model.empty()) s->moe_model = o.moe_model == spec::kNoModel ? "" : o.moe_model;
  if (!o.moe_batch.empty()) s->moe_global_batch_size = study::ParseIntFlag("--moe-global-batch-size", o.moe_batch, 1, int64_t{1} << 30);
  if (!o.moe_max_domains.empty()) s->moe_max_domains = int(study::ParseIntFlag("--moe-max-domains", o.moe_max_domains, 0, 1 << 20));
  if (!o.allow_idle.empty()) s->allow_idle_gpus = study::ParseIntFlag("--allow-idle-gpus", o.allow_idle, 0, s->gpus / 2);
  if (s->allow_idle_gpus > s->gpus / 2) {
    throw Error("--allow-idle-gpus", fmt::format("expected at most half the cluster ({}), got {}", s->gpus / 2,
                                                 s->allow_idle_gpus));
  }
  if (!s->model.empty() && s->global_batch_sizes.empty()) {
    throw Error("--global-batch-sizes", "needed with a model (the scenario has none)");
  }
  if (!s->moe_model.empty() && s->moe_global_batch_size <= 0) {
    throw Error("--moe-global-batch-size", "needed with an MoE model (the scenario has none)");
  }
  if ((!s->model.empty() || !s->moe_model.empty()) && s->system.empty()) {
    throw Error("--system", "needed with a model (the scenario names none)");
  }
  if (o.any()) s->description = DescribeScenario(*s, s->name);
}

ScenarioInputs LoadScenarioInputs(const std::string& scenario_name, const std::string& catalog,
                                  const ScenarioOverrides& overrides, const std::string& server) {
  ScenarioInputs in;
  in.scenario = spec::LoadScenario(scenario_name, "--scenario");
  if (!overrides.system.empty()) in.system = spec::LoadSystem(overrides.system, "--system");
  ApplyScenarioOverrides(overrides, in.system ? &*in.system : nullptr, &in.scenario, &in.notes);
  const spec::Scenario& scenario = in.scenario;
  study::ValidateScenarioNetworks(scenario);
  const spec::Catalog loaded = spec::LoadCatalog(catalog, "--catalog");
  in.port_class = study::PortClassFor(loaded, scenario.port_speed_Bps, "--port-speed");
  in.hb_port_class = study::FastestPortClass(loaded);
  in.operating = loaded.operating;
  const std::string where = "--scenario " + scenario_name;
  auto source = [&](const std::string& flag, const std::string& key) {
    return flag.empty() ? where + ": /" + key : "--" + key;
  };
  if (!in.system && (!scenario.model.empty() || !scenario.moe_model.empty())) {
    in.system = spec::LoadSystem(scenario.system, source(overrides.system, "system"));
  }
  if (!overrides.seq_length.empty() && scenario.model.empty() && scenario.moe_model.empty()) {
    throw Error("--seq-length", "sets the models' length; the scenario has none (give --model)");
  }
  if (!scenario.model.empty()) {
    in.model = spec::LoadModel(scenario.model, source(overrides.model, "model"));
    ApplySeqLengthFlag(overrides.seq_length, &*in.model);
    AddNote(ContextLengthWarning(*in.model, source(overrides.model, "model")), &in.notes);
  }
  if (!scenario.moe_model.empty()) {
    const std::string moe_where = overrides.moe_model.empty() ? where + ": /moe_model" : "--moe-model";
    in.moe_model = spec::LoadModel(scenario.moe_model, moe_where);
    ApplySeqLengthFlag(overrides.seq_length, &*in.moe_model);
    AddNote(ContextLengthWarning(*in.moe_model, moe_where), &in.notes);
    if (!in.moe_model->is_moe()) {
      throw Error(moe_where,
                  fmt::format("expected an MoE model (num_experts > 0), got the dense {}", in.moe_model->name));
    }
  }
  for (const auto& [k, name] : scenario.hb_domain_systems) {
    in.hb_systems.emplace(k, spec::LoadSystem(name, fmt::format("{}: /hb_domain_systems/{}", where, k)));
    if (server.empty()) {
      if (std::optional<spec::ServerClass> s = loaded.FindServer(name)) in.hb_servers.emplace(k, *s);
    }
  }
  if (!server.empty()) {
    in.server = ResolveServer(catalog, server);
  } else if (in.system) {
    in.server = loaded.FindServer(in.system->name);
    if (!in.server) {
      std::vector<std::string> names;
      for (const spec::ServerClass& c : loaded.servers) names.push_back(c.name);
      in.notes.push_back(fmt::format("catalog '{}' has no server named {} (the system's name), so the whole-cluster "
                                     "cost, the network's share of it and the cost per PFLOP/s-day are left out; "
                                     "give --server ({})",
                                     loaded.name, in.system->name,
                                     names.empty() ? "the catalog has none"
                                                   : fmt::format("{}", fmt::join(names, ", "))));
    }
  }
  return in;
}

study::DesignResult RunNetworkFlags(const NetworkFlags& f, const std::string& design,
                             const std::function<void(const net::Topology&)>& on_built) {
  std::string name = study::ParseChoiceFlag("--design", design, net::DesignNames());
  net::TopologyParams params = ParseTopology(f, *net::ParseDesign(name));
  spec::PortClass port_class = ResolvePortClass(f.catalog, params.port_speed_Bps);
  return study::EvaluateDesign(params, port_class, on_built);
}

CostStudy RunCostFlags(const NetworkFlags& f, const std::string& server,
                       const std::function<void(const net::Topology&)>& on_built) {
  CostStudy study;
  study.params = ParseTopology(f, std::nullopt);
  spec::PortClass port_class = ResolvePortClass(f.catalog, study.params.port_speed_Bps);
  std::optional<spec::ServerClass> server_class;
  if (!server.empty()) server_class = ResolveServer(f.catalog, server);
  const spec::PortClass hb_port_class = study::FastestPortClass(spec::LoadCatalog(f.catalog, "--catalog"));
  study.designs = study::CompareDesigns(study.params, port_class, on_built);
  for (const study::DesignResult& r : study.designs) {
    if (server_class) study.clusters.push_back(study::WholeClusterCost(r, *server_class, hb_port_class));
  }
  return study;
}

perf::NetworkOptions ParseTimedNetwork(const CompareFlags& f) {
  perf::NetworkOptions timed;
  timed.radix = f.radix.empty() ? 0 : int(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  timed.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  return timed;
}

study::CompareResult RunCompareFlags(const CompareFlags& f, const std::function<void(double)>& progress) {
  perf::NetworkOptions timed = ParseTimedNetwork(f);
  ScenarioInputs in = LoadScenarioInputs(f.scenario, f.catalog, f.overrides, f.server);
  study::CompareResult result =
      study::RunCompare(in.scenario, in.port_class, in.model ? &*in.model : nullptr, in.Systems(),
                 study::DefaultThreads(), timed, in.moe_model ? &*in.moe_model : nullptr, progress, in.Pricing());
  result.notes = in.notes;
  return result;
}

study::ReportInputs ParseReportFlags(const ReportFlags& f) {
  if (f.out.empty()) throw Error("--out", "expected a directory name, got ''");
  ScenarioInputs in = LoadScenarioInputs(f.scenario, f.catalog, f.overrides);
  study::ReportInputs r;
  r.scenario = in.scenario;
  r.port_class = in.port_class;
  r.hb_port_class = in.hb_port_class;
  r.model = in.model;
  r.moe_model = in.moe_model;
  r.systems = in.Systems();
  r.failure_catalog = spec::LoadFailureCatalog(f.failure_catalog, "--failure-catalog");
  r.notes = in.notes;
  r.threads = study::DefaultThreads();
  return r;
}

}  // namespace railsim::request
