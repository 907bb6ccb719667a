// `railsim compare`, `railsim network` and `railsim cost`: build the designs,
// count and price them, print or export.
#include <algorithm>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/model_flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/report/compare_report.h"
#include "railsim/report/html_report.h"
#include "railsim/report/network_report.h"
#include "railsim/report/table.h"
#include "railsim/spec/presets.h"
#include "railsim/perf/context.h"
#include "railsim/study/compare.h"
#include "railsim/study/report_study.h"
#include "railsim/study/network_study.h"

namespace railsim::cli {
namespace {

struct NetworkFlags {
  std::string gpus, hb_size, radix;
  std::string port_speed = "400Gbps";
  std::string oversubscription = "1";
  std::string catalog = "default";
  std::string export_path;
  std::string format = "table";
  std::string max_gpus = std::to_string(net::kMaxBuildGpus);
};

void AddNetworkFlags(CLI::App* sub, NetworkFlags* f) {
  sub->add_option("--gpus", f->gpus, "total GPUs N")->required();
  sub->add_option("--hb-size", f->hb_size, "GPUs per HB (NVLink) domain K; divides N")->required();
  sub->add_option("--radix", f->radix, "switch radix k (ports per switch, even)")->required();
  sub->add_option("--port-speed", f->port_speed, "network link rate")->capture_default_str();
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio R >= 1")
      ->capture_default_str();
  sub->add_option("--catalog", f->catalog, "cost/power catalog: preset name or JSON file")
      ->capture_default_str();
  sub->add_option("--export", f->export_path,
                  "write the cabling plan (FILE.csv) or the whole graph (FILE.json)");
  sub->add_option("--format", f->format, "table or json (cost: also csv)")->capture_default_str();
  sub->add_option("--max-gpus", f->max_gpus, "refuse to build graphs larger than this")->capture_default_str();
}

// `design`: the one `network` builds, or nullopt for `cost` (every design).
net::TopologyParams ParseTopology(const NetworkFlags& f, std::optional<net::Design> design) {
  net::TopologyParams p;
  p.design = design.value_or(net::Design::kRailOptimized);
  int64_t max_gpus = ParseIntFlag("--max-gpus", f.max_gpus, 1, net::kHardMaxBuildGpus);
  p.gpus = ParseIntFlag("--gpus", f.gpus, 1, INT64_MAX);
  p.hb_domain_size = static_cast<int>(ParseIntFlag("--hb-size", f.hb_size, 1, net::kHardMaxBuildGpus));
  p.radix = static_cast<int>(ParseIntFlag("--radix", f.radix, 2, 65536));
  p.port_speed_Bps = ParseBandwidthFlag("--port-speed", f.port_speed);
  // The real bound is the radix's: a leaf keeps at least one up-link.
  p.oversubscription = ParseNumberFlag("--oversubscription", f.oversubscription, 1, std::max(1, p.radix - 1));
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

// The export format follows the file name: .csv is the cabling plan, .json
// the whole graph.
void CheckExportPath(const std::string& path) {
  if (path.empty()) return;
  if (!path.ends_with(".csv") && !path.ends_with(".json")) {
    throw Error("--export", fmt::format("expected a file name ending in .csv (cabling plan) or "
                                        ".json (graph), got '{}'", path));
  }
}

void Export(const net::Topology& topology, const std::string& path) {
  std::string text = path.ends_with(".csv") ? report::CablingCsv(topology) : report::GraphJson(topology);
  WriteTextFile(path, text, "--export");
}

// "cabling.csv" -> "cabling.rail-only.csv": one export per design for `cost`.
std::string PerDesignPath(const std::string& path, net::Design design) {
  size_t dot = path.rfind('.');
  return path.substr(0, dot) + "." + net::DesignName(design) + path.substr(dot);
}

Action SetupNetwork(CLI::App* sub) {
  auto flags = std::make_shared<NetworkFlags>();
  auto design = std::make_shared<std::string>();
  sub->add_option("--design,--network", *design, "rail-only, rail-optimized or fat-tree")->required();
  AddNetworkFlags(sub, flags.get());
  return [flags, design]() {
    std::string name = ParseChoiceFlag("--design", *design, net::DesignNames());
    Format format = ParseFormatFlag(flags->format, false);
    CheckExportPath(flags->export_path);
    net::TopologyParams params = ParseTopology(*flags, *net::ParseDesign(name));
    spec::PortClass port_class = ResolvePortClass(flags->catalog, params.port_speed_Bps);
    study::DesignResult result = study::EvaluateDesign(params, port_class, [&](const net::Topology& t) {
      if (!flags->export_path.empty()) Export(t, flags->export_path);
    });
    PrintStdout(format == Format::kJson ? report::NetworkJson(result) : report::NetworkTable(result));
    return 0;
  };
}

// --server: the catalog's GPU server, for the whole cluster's cost.
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

Action SetupCost(CLI::App* sub) {
  auto flags = std::make_shared<NetworkFlags>();
  auto server = std::make_shared<std::string>();
  AddNetworkFlags(sub, flags.get());
  sub->add_option("--server", *server,
                  "GPU server of the catalog (dgx-h100, dgx-b200, gb200-nvl72): adds the whole cluster's cost and "
                  "the network's share");
  return [flags, server]() {
    Format format = ParseFormatFlag(flags->format, true);
    CheckExportPath(flags->export_path);
    net::TopologyParams params = ParseTopology(*flags, std::nullopt);
    spec::PortClass port_class = ResolvePortClass(flags->catalog, params.port_speed_Bps);
    std::optional<spec::ServerClass> server_class;
    if (!server->empty()) server_class = ResolveServer(flags->catalog, *server);
    std::vector<study::DesignResult> results =
        study::CompareDesigns(params, port_class, [&](const net::Topology& t) {
          if (!flags->export_path.empty()) Export(t, PerDesignPath(flags->export_path, t.params().design));
        });
    std::vector<study::ClusterCost> clusters;
    for (const study::DesignResult& r : results) {
      if (server_class) clusters.push_back(study::WholeClusterCost(r, *server_class));
    }
    if (format == Format::kJson) {
      PrintStdout(report::CostJson(results, clusters));
    } else if (format == Format::kCsv) {
      PrintStdout(report::CostCsv(results, clusters));
    } else {
      PrintStdout(fmt::format("{} GPUs, HB domain {}, radix {} x {}\n\n", report::Grouped(params.gpus),
                              params.hb_domain_size, params.radix,
                              units::FormatBitRate(params.port_speed_Bps)) +
                  report::CostTable(results, clusters));
    }
    return 0;
  };
}

// Flags that override a scenario's entries (empty: keep the scenario's).
struct ScenarioOverrides {
  std::string gpus, hb_sizes, radixes, port_speed, model, system, batches, moe_model, moe_batch, moe_max_domains;
  std::string allow_idle, seq_length;
  bool any() const {
    for (const std::string* v : {&gpus, &hb_sizes, &radixes, &port_speed, &model, &system, &batches, &moe_model,
                                 &moe_batch, &moe_max_domains, &allow_idle, &seq_length}) {
      if (!v->empty()) return true;
    }
    return false;
  }
};

void AddScenarioOverrides(CLI::App* sub, ScenarioOverrides* o) {
  sub->add_option("--gpus", o->gpus, "override the scenario's cluster size");
  sub->add_option("--hb-sizes", o->hb_sizes, "override its HB domain sizes, comma-separated (8,256)");
  sub->add_option("--radixes", o->radixes, "override its switch radixes, comma-separated (64,128)");
  sub->add_option("--port-speed", o->port_speed, "override its link rate (400Gbps)");
  sub->add_option("--model", o->model, "override its model (preset or file)");
  sub->add_option("--seq-length", o->seq_length,
                  "override the training sequence length of its model and MoE model (a Hugging Face config.json "
                  "gives its pre-training context)");
  sub->add_option("--system", o->system, "override its system (preset or file)");
  sub->add_option("--global-batch-sizes", o->batches, "override its global batch sizes, comma-separated");
  sub->add_option("--moe-model", o->moe_model, "override its MoE model (preset or file)");
  sub->add_option("--moe-global-batch-size", o->moe_batch, "override the MoE model's global batch");
  sub->add_option("--moe-max-domains", o->moe_max_domains, "override the MoE model's node-limited routing (0: any)");
  sub->add_option("--allow-idle-gpus", o->allow_idle,
                  "searches may leave up to this many GPUs idle (whole HB domains) when no layout uses them all");
}

std::vector<int64_t> ParseListFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::vector<int64_t> out;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    out.push_back(ParseIntFlag(flag, text.substr(start, comma == std::string::npos ? comma : comma - start), min, max));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() > 16) throw Error(flag, fmt::format("expected at most 16 entries, got {}", out.size()));
  return out;
}

// "32,760 and 32,832": the cluster sizes nearest `gpus` that `k` divides.
std::string NearestMultiples(int64_t gpus, int64_t k) {
  const int64_t below = gpus / k * k, above = below + k;
  return below > 0 ? fmt::format("{} and {}", report::Grouped(below), report::Grouped(above))
                   : report::Grouped(above);
}

// The scenario as described after overrides: what the table's first line says.
std::string DescribeScenario(const spec::Scenario& s, const std::string& base) {
  std::vector<std::string> parts = {fmt::format("{} GPUs at {}, HB domains of {}, switch radix {}",
                                                report::Grouped(s.gpus), units::FormatBitRate(s.port_speed_Bps),
                                                fmt::join(s.hb_domain_sizes, ", "), fmt::join(s.radixes, ", "))};
  if (!s.model.empty()) {
    parts.push_back(fmt::format("{} on {} at global batch {}", s.model, s.system, fmt::join(s.global_batch_sizes, ", ")));
  }
  if (!s.moe_model.empty()) {
    parts.push_back(fmt::format("{} at batch {}", s.moe_model, report::Grouped(s.moe_global_batch_size)));
  }
  return fmt::format("{} (scenario '{}' with overrides)", fmt::join(parts, "; "), base);
}

// `system`: the loaded --system override, if given; its HB domain size and
// NIC speed become the defaults of --hb-sizes and --port-speed.
void ApplyScenarioOverrides(const ScenarioOverrides& o, const spec::SystemSpec* system, spec::Scenario* s) {
  if (!o.gpus.empty()) s->gpus = ParseIntFlag("--gpus", o.gpus, 1, int64_t{1} << 20);
  if (!o.hb_sizes.empty()) {
    s->hb_domain_sizes.clear();
    for (int64_t k : ParseListFlag("--hb-sizes", o.hb_sizes, 1, s->gpus)) s->hb_domain_sizes.push_back(int(k));
  } else if (system) {
    s->hb_domain_sizes = {int(system->hb_domain_size)};
  }
  for (int k : s->hb_domain_sizes) {
    if (s->gpus % k != 0) {
      throw Error(o.hb_sizes.empty() && !system ? "--gpus" : o.hb_sizes.empty() ? "--system" : "--hb-sizes",
                  fmt::format("HB domain size {} does not divide {} GPUs; the nearest cluster sizes it divides are {}",
                              k, report::Grouped(s->gpus), NearestMultiples(s->gpus, k)));
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
    s->port_speed_Bps = ParseBandwidthFlag("--port-speed", o.port_speed);
  } else if (system) {
    s->port_speed_Bps = system->nic_bw_Bps;
  }
  if (!o.model.empty()) s->model = o.model;
  if (!o.system.empty()) s->system = o.system;
  if (!o.batches.empty()) s->global_batch_sizes = ParseListFlag("--global-batch-sizes", o.batches, 1, int64_t{1} << 30);
  if (!o.moe_model.empty()) s->moe_model = o.moe_model;
  if (!o.moe_batch.empty()) s->moe_global_batch_size = ParseIntFlag("--moe-global-batch-size", o.moe_batch, 1, int64_t{1} << 30);
  if (!o.moe_max_domains.empty()) s->moe_max_domains = int(ParseIntFlag("--moe-max-domains", o.moe_max_domains, 0, 1 << 20));
  if (!o.allow_idle.empty()) s->allow_idle_gpus = ParseIntFlag("--allow-idle-gpus", o.allow_idle, 0, s->gpus / 2);
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

// A scenario with everything it names loaded and checked.
struct ScenarioInputs {
  spec::Scenario scenario;
  spec::PortClass port_class;
  spec::PortClass hb_port_class;  ///< prices HB domains larger than a server
  std::optional<spec::ModelSpec> model, moe_model;
  std::optional<spec::SystemSpec> system;
  /// The catalog's server of the system's name (dgx-h100), or --server's.
  std::optional<spec::ServerClass> server;
};

ScenarioInputs LoadScenarioInputs(const std::string& scenario_name, const std::string& catalog,
                                  const ScenarioOverrides& overrides, const std::string& server = "") {
  ScenarioInputs in;
  in.scenario = spec::LoadScenario(scenario_name, "--scenario");
  if (!overrides.system.empty()) in.system = spec::LoadSystem(overrides.system, "--system");
  ApplyScenarioOverrides(overrides, in.system ? &*in.system : nullptr, &in.scenario);
  const spec::Scenario& scenario = in.scenario;
  study::ValidateScenarioNetworks(scenario);
  const spec::Catalog loaded = spec::LoadCatalog(catalog, "--catalog");
  in.port_class = study::PortClassFor(loaded, scenario.port_speed_Bps, "--port-speed");
  in.hb_port_class = study::FastestPortClass(loaded);
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
  }
  if (!scenario.moe_model.empty()) {
    const std::string moe_where = overrides.moe_model.empty() ? where + ": /moe_model" : "--moe-model";
    in.moe_model = spec::LoadModel(scenario.moe_model, moe_where);
    ApplySeqLengthFlag(overrides.seq_length, &*in.moe_model);
    if (!in.moe_model->is_moe()) {
      throw Error(moe_where,
                  fmt::format("expected an MoE model (num_experts > 0), got the dense {}", in.moe_model->name));
    }
  }
  if (!server.empty()) {
    in.server = ResolveServer(catalog, server);
  } else if (in.system) {
    in.server = loaded.FindServer(in.system->name);
  }
  return in;
}

Action SetupCompare(CLI::App* sub) {
  auto scenario_name = std::make_shared<std::string>("paper-headline");
  auto catalog = std::make_shared<std::string>("default");
  auto format = std::make_shared<std::string>("table");
  auto radix = std::make_shared<std::string>();
  auto oversubscription = std::make_shared<std::string>("1");
  sub->add_option("--scenario", *scenario_name, "scenario preset or JSON file")->capture_default_str();
  sub->add_option("--radix", *radix, "switch radix the training side is timed on (default 64)");
  sub->add_option("--oversubscription", *oversubscription, "leaf down:up ratio the training side is timed on")
      ->capture_default_str();
  sub->add_option("--catalog", *catalog, "cost/power catalog: preset name or JSON file")
      ->capture_default_str();
  sub->add_option("--format", *format, "table, json or csv (every number, one row per design and job)")
      ->capture_default_str();
  auto server = std::make_shared<std::string>();
  sub->add_option("--server", *server,
                  "GPU server of the catalog the whole cluster is priced with (default: the one named as the "
                  "scenario's system, if the catalog has it)");
  auto print_scenario = std::make_shared<bool>(false);
  sub->add_flag("--print-scenario", *print_scenario,
                "print the scenario's JSON with the overrides applied (edit it, pass it to --scenario)");
  auto overrides = std::make_shared<ScenarioOverrides>();
  AddScenarioOverrides(sub, overrides.get());
  return [scenario_name, catalog, format, radix, oversubscription, print_scenario, overrides, server]() {
    Format output = ParseFormatFlag(*format, true);
    perf::NetworkOptions timed;
    timed.radix = radix->empty() ? 0 : int(ParseIntFlag("--radix", *radix, 2, 65536));
    timed.oversubscription = ParseNumberFlag("--oversubscription", *oversubscription, 1, 65535);
    // Everything is loaded and checked before printing, so that the
    // printed scenario is one --scenario accepts.
    ScenarioInputs in = LoadScenarioInputs(*scenario_name, *catalog, *overrides, *server);
    if (*print_scenario) {
      if (!overrides->seq_length.empty()) {
        throw Error("--seq-length", "is not part of a scenario file, so --print-scenario cannot show it");
      }
      PrintStdout(spec::ScenarioToJson(in.scenario));
      return 0;
    }
    bool shown = false;
    study::CompareResult result = study::RunCompare(
        in.scenario, in.port_class, in.model ? &*in.model : nullptr, in.system ? &*in.system : nullptr,
        DefaultThreads(), timed, in.moe_model ? &*in.moe_model : nullptr,
        ProgressLine("compare", "of the strategies", &shown));
    result.server = in.server;
    if (shown) PrintStderr("\n");
    PrintStdout(output == Format::kJson  ? report::CompareJson(result)
                : output == Format::kCsv ? report::CompareNumbersCsv(result)
                                         : report::CompareTable(result));
    return 0;
  };
}

Action SetupReport(CLI::App* sub) {
  struct Flags {
    std::string out, scenario = "paper-headline", catalog = "default", failure_catalog = "h100-fleet";
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  sub->add_option("--out", f->out, "directory to write index.html and the figures' CSVs into")->required();
  sub->add_option("--scenario", f->scenario, "scenario preset or JSON file")->capture_default_str();
  sub->add_option("--catalog", f->catalog, "cost/power catalog: preset name or JSON file")->capture_default_str();
  sub->add_option("--failure-catalog", f->failure_catalog, "failure rates for the failure figure")
      ->capture_default_str();
  sub->add_option("--format", f->format, "table (the page's path) or json (the folder and every file written)")
      ->capture_default_str();
  auto overrides = std::make_shared<ScenarioOverrides>();
  AddScenarioOverrides(sub, overrides.get());
  return [f, overrides]() {
    if (f->out.empty()) throw Error("--out", "expected a directory name, got ''");
    const Format format = ParseFormatFlag(f->format, false);
    ScenarioInputs in = LoadScenarioInputs(f->scenario, f->catalog, *overrides);
    study::ReportInputs r;
    r.scenario = in.scenario;
    r.port_class = in.port_class;
    r.hb_port_class = in.hb_port_class;
    r.model = in.model;
    r.moe_model = in.moe_model;
    r.system = in.system;
    r.failure_catalog = spec::LoadFailureCatalog(f->failure_catalog, "--failure-catalog");
    r.threads = DefaultThreads();
    // The folder is made once the study has run, so that an interrupted
    // or failed report leaves nothing behind; a path that cannot be one is
    // refused before the work.
    CheckDirectoryCanBeMade(f->out, "--out");
    bool shown = false;
    std::string step;
    auto line = ProgressLine("report", "", &shown, &step);
    if (line) {
      r.progress = [&](const std::string& label, double done) {
        step = label;
        line(done);
      };
    }
    study::ReportStudy study = study::RunReportStudy(r);
    MakeDirectory(f->out, "--out");
    std::vector<std::string> written;
    for (const report::ReportFile& file : report::BuildReport(study, RAILSIM_VERSION)) {
      WriteTextFile(f->out + "/" + file.name, file.contents, "--out");
      written.push_back(file.name);
    }
    if (shown) PrintStderr("\n");
    PrintStdout(format == Format::kJson ? report::ReportFilesJson(f->out, written)
                                        : fmt::format("wrote {}/index.html\n", f->out));
    return 0;
  };
}

}  // namespace

std::vector<Command> NetworkCommands() {
  return {
      {"compare", "the paper's headline on an embedded default scenario (no arguments needed)",
       SetupCompare, "  railsim compare                                  # the paper's headline, embedded scenario\n  railsim compare --print-scenario > s.json        # edit s.json, then\n  railsim compare --scenario s.json --format json"},
      {"network", "build one design and print its bill of materials, cost and power", SetupNetwork, "  railsim network --design rail-only --gpus 32768 --hb-size 256 --radix 128 --export cabling.csv"},
      {"cost", "all designs side by side with Rail-only's savings", SetupCost, "  railsim cost --gpus 32768 --hb-size 8 --radix 128 --format csv"},
      {"report", "a self-contained HTML report of a scenario: every figure with its CSV, opens offline",
       SetupReport, "  railsim report --out report                      # then open report/index.html in a browser"},
  };
}

}  // namespace railsim::cli
