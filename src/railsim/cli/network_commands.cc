// `railsim compare`, `railsim network` and `railsim cost`: build the designs,
// count and price them, print or export.
#include <algorithm>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flag_rows.h"
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
#include "railsim/request/network_flags.h"
#include "railsim/study/network_study.h"

namespace railsim::cli {
namespace {

struct NetworkFlags : request::NetworkFlags {
  std::string export_path;
  std::string format = "table";
};

// The fabric's rows (request::NetworkFlagTable), then the CLI's outputs.
void AddNetworkFlags(CLI::App* sub, NetworkFlags* f, bool cost) {
  AddFlagRows(sub, request::NetworkFlagTable(cost), static_cast<request::NetworkFlags*>(f));
  sub->add_option("--export", f->export_path,
                  "write the cabling plan (FILE.csv) or the whole graph (FILE.json)");
  sub->add_option("--format", f->format, "table or json (cost: also csv)")->capture_default_str();
}

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
  AddNetworkFlags(sub, flags.get(), false);
  return [flags]() {
    ParseChoiceFlag("--design", flags->design, net::DesignNames());
    Format format = ParseFormatFlag(flags->format, false);
    CheckExportPath(flags->export_path);
    study::DesignResult result = request::RunNetworkFlags(*flags, flags->design, [&](const net::Topology& t) {
      if (!flags->export_path.empty()) Export(t, flags->export_path);
    });
    PrintStdout(format == Format::kJson ? report::NetworkJson(result) : report::NetworkTable(result));
    return 0;
  };
}

Action SetupCost(CLI::App* sub) {
  auto flags = std::make_shared<NetworkFlags>();
  AddNetworkFlags(sub, flags.get(), true);
  return [flags]() {
    Format format = ParseFormatFlag(flags->format, true);
    CheckExportPath(flags->export_path);
    request::CostStudy cost = request::RunCostFlags(*flags, flags->server, [&](const net::Topology& t) {
      if (!flags->export_path.empty()) Export(t, PerDesignPath(flags->export_path, t.params().design));
    });
    const net::TopologyParams& params = cost.params;
    const std::vector<study::DesignResult>& results = cost.designs;
    const std::vector<study::ClusterCost>& clusters = cost.clusters;
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

Action SetupCompare(CLI::App* sub) {
  auto f = std::make_shared<request::CompareFlags>();
  auto format = std::make_shared<std::string>("table");
  AddFlagRows(sub, request::CompareFlagTable(), f.get());
  sub->add_option("--format", *format, "table, json or csv (every number, one row per design and job)")
      ->capture_default_str();
  auto print_scenario = std::make_shared<bool>(false);
  sub->add_flag("--print-scenario", *print_scenario,
                "print the scenario's JSON with the overrides applied (edit it, pass it to --scenario)");
  return [f, format, print_scenario]() {
    Format output = ParseFormatFlag(*format, true);
    if (*print_scenario) {
      request::ParseTimedNetwork(*f);
      // Everything is loaded and checked before printing, so that the
      // printed scenario is one --scenario accepts.
      request::ScenarioInputs in = request::LoadScenarioInputs(f->scenario, f->catalog, f->overrides, f->server);
      if (!f->overrides.seq_length.empty()) {
        throw Error("--seq-length", "is not part of a scenario file, so --print-scenario cannot show it");
      }
      PrintStdout(spec::ScenarioToJson(in.scenario));
      return 0;
    }
    bool shown = false;
    study::CompareResult result = request::RunCompareFlags(*f, ProgressLine("compare", "of the strategies", &shown));
    if (shown) PrintStderr("\n");
    for (const std::string& note : result.notes) PrintStderr(fmt::format("railsim: warning: {}\n", note));
    PrintStdout(output == Format::kJson  ? report::CompareJson(result)
                : output == Format::kCsv ? report::CompareNumbersCsv(result)
                                         : report::CompareTable(result));
    return 0;
  };
}

Action SetupReport(CLI::App* sub) {
  struct Flags : request::ReportFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddFlagRows(sub, request::ReportFlagTable(), static_cast<request::ReportFlags*>(f.get()));
  sub->add_option("--format", f->format, "table (the page's path) or json (the folder and every file written)")
      ->capture_default_str();
  return [f]() {
    if (f->out.empty()) throw Error("--out", "expected a directory name, got ''");
    const Format format = ParseFormatFlag(f->format, false);
    study::ReportInputs r = request::ParseReportFlags(*f);
    for (const std::string& note : r.notes) PrintStderr(fmt::format("railsim: warning: {}\n", note));
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
    OutputFolder folder(f->out, "--out");
    std::vector<std::string> written;
    for (const report::ReportFile& file : report::BuildReport(study, RAILSIM_VERSION)) {
      folder.Write(file.name, file.contents);
      written.push_back(file.name);
    }
    folder.Commit();
    if (shown) PrintStderr("\n");
    PrintStdout(format == Format::kJson ? report::ReportFilesJson(f->out, written, r.notes)
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
