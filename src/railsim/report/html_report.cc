#include "railsim/report/html_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/report/compare_report.h"
#include "railsim/report/csv.h"
#include "railsim/report/heatmap.h"
#include "railsim/net/builder.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"
#include "railsim/report/traffic_report.h"

namespace railsim::report::embedded {
extern const char kChartJs[];
extern const char kChartJsVersion[];  // from the bundle's banner
}

namespace railsim::report {
namespace {

// A time in a figure's CSV: empty where no layout could be timed (a 0 would
// read as an infinitely fast job).
std::string TimeCell(double seconds) { return seconds > 0 ? CsvNumber(seconds) : ""; }


// One figure: a chart (Chart.js config) or an image with a chart beside it,
// its caption, and the CSV of what it draws.
struct Figure {
  std::string id;
  std::string title;
  std::string caption;
  std::vector<Json> charts;  ///< Chart.js configurations, drawn one under the other
  std::string csv;
  std::string image;    ///< a PNG file of the report drawn above the chart (may be empty)
};

const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Base64(const std::string& bytes) {
  static const char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kTable[(v >> s) & 63];
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (i + 1 < bytes.size()) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kTable[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A chart's common options: its title, axis titles with units, the legend.
Json Options(const std::string& title, const std::string& x, const std::string& y) {
  Json o;
  o["responsive"] = true;
  o["maintainAspectRatio"] = false;
  o["animation"] = false;
  o["plugins"]["title"] = {{"display", true}, {"text", title}, {"font", {{"size", 15}}}};
  // Swatches drawn as the series' own markers, so a legend entry looks like what it names.
  o["plugins"]["legend"] = {{"display", true}, {"position", "bottom"}, {"labels", {{"usePointStyle", true}}}};
  o["scales"]["x"]["title"] = {{"display", true}, {"text", x}};
  o["scales"]["y"]["title"] = {{"display", true}, {"text", y}};
  return o;
}

Json Dataset(const std::string& label, const Json& data, int colour, const char* type = nullptr) {
  Json d;
  if (type) d["type"] = type;
  d["label"] = label;
  d["data"] = data;
  d["backgroundColor"] = kColours[colour % 6];
  d["borderColor"] = kColours[colour % 6];
  d["pointRadius"] = 4;
  return d;
}

const char* DesignLabel(net::Design d) {
  switch (d) {
    case net::Design::kRailOptimized: return "rail-optimized";
    case net::Design::kRailOnly: return "Rail-only";
    case net::Design::kFatTree: return "fat-tree";
  }
  return "?";
}

Json Null() { return Json(nullptr); }  // a gap in a line (nothing fits)

Json TimeOrGap(double s) { return s > 0 ? Json(s) : Null(); }

Figure CostPower(const study::ReportStudy& r) {
  Figure f;
  f.id = "cost-power";
  f.title = "Network cost and power by design and switch radix";
  const spec::Scenario& sc = r.compare.scenario;
  f.caption = fmt::format(
      "Cost (above) and power (below) of the scale-out network of {} GPUs at {} ($694 per switch port, $199 "
      "per transceiver, every switch paid and powered for all its ports; 17 W per port, 9 W per transceiver), "
      "counted from the built graphs. Fat-tree is the same Clos without rail alignment: it costs what "
      "rail-optimized costs wherever both need the same tiers, and is drawn as the baseline both start from.",
      Grouped(sc.gpus), units::FormatBitRate(sc.port_speed_Bps));
  CsvTable csv({"hb_domain_size", "radix", "design", "tiers", "switches", "transceivers", "cost_usd", "power_w"});
  Json labels = Json::array();
  std::vector<Json> cost(3, Json::array()), power(3, Json::array());
  for (const study::NetworkCase& c : r.compare.network) {
    labels.push_back(fmt::format("K {}, radix {}", c.params.hb_domain_size, c.params.radix));
    for (size_t i = 0; i < c.designs.size() && i < 3; ++i) {
      const study::DesignResult& d = c.designs[i];
      cost[i].push_back(d.bom.cost_usd / 1e6);
      power[i].push_back(d.bom.power_w / 1e6);
      csv.AddRow({std::to_string(c.params.hb_domain_size), std::to_string(c.params.radix),
                  net::DesignName(d.params.design), std::to_string(d.bom.tiers), std::to_string(d.bom.switches),
                  std::to_string(d.bom.transceivers), CsvNumber(d.bom.cost_usd), CsvNumber(d.bom.power_w)});
    }
  }
  const net::Design order[] = {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree};
  for (const auto& [values, axis, title] :
       {std::tuple{&cost, "network cost (million USD)", "Network cost"}, {&power, "network power (MW)", "Network power"}}) {
    Json chart;
    chart["type"] = "bar";
    chart["data"]["labels"] = labels;
    Json datasets = Json::array();
    for (int i = 0; i < 3; ++i) datasets.push_back(Dataset(DesignLabel(order[i]), (*values)[size_t(i)], i));
    chart["data"]["datasets"] = datasets;
    chart["options"] = Options(title, "HB domain size K and switch radix", axis);
    f.charts.push_back(chart);
  }
  f.csv = csv.Render();
  return f;
}

Figure IterationVsHb(const study::ReportStudy& r) {
  Figure f;
  f.id = "iteration-vs-hb";
  f.title = "Best iteration time against HB domain size";
  const spec::Scenario& sc = r.compare.scenario;
  f.caption = fmt::format(
      "{} on {} x {} at global batch {}: the fastest strategy railsim search finds on each network for each HB "
      "domain size K (radix 64). Gaps: no layout of the job exists on that K or none fits in memory.",
      r.compare.model_name, Grouped(sc.gpus), r.compare.system_name, Grouped(r.batch));
  CsvTable csv({"hb_domain_size", "rail_optimized_s", "rail_only_s"});
  Json labels = Json::array(), opt = Json::array(), only = Json::array();
  for (const study::HbSweepPoint& p : r.hb_sweep) {
    labels.push_back(std::to_string(p.hb_domain_size));
    opt.push_back(TimeOrGap(p.rail_optimized_s));
    only.push_back(TimeOrGap(p.rail_only_s));
    csv.AddRow({std::to_string(p.hb_domain_size), TimeCell(p.rail_optimized_s), TimeCell(p.rail_only_s)});
  }
  Json chart;
  chart["type"] = "line";
  chart["data"]["labels"] = labels;
  // Where the two lines coincide, Rail-only is drawn dashed with hollow
  // markers over rail-optimized, and the legend says so.
  const bool identical = opt == only;
  Json rail_only = Dataset(identical ? "Rail-only (identical to rail-optimized)" : "Rail-only", only, 1);
  rail_only["borderDash"] = {6, 4};
  rail_only["pointStyle"] = "rectRot";
  rail_only["pointRadius"] = 7;
  rail_only["backgroundColor"] = "rgba(255,255,255,0)";
  chart["data"]["datasets"] = {Dataset("rail-optimized", opt, 0), rail_only};
  chart["options"] = Options(f.title, "HB domain size K (GPUs)", "best iteration time (s)");
  chart["options"]["scales"]["y"]["type"] = "logarithmic";
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure RailOnlyVsIdeal(const study::ReportStudy& r) {
  Figure f;
  f.id = "railonly-vs-ideal";
  f.title = "Rail-only relative to the ideal network against global batch";
  f.caption = fmt::format(
      "{} on {} x {}: the ideal network's best iteration time over Rail-only's (100% = as fast as one HB domain "
      "of every GPU), per HB domain size. Small batches leave too little data parallelism to hide the slower "
      "network; gaps: nothing fits. Both networks use every GPU, so their best layouts differ in shape from batch "
      "to batch (the ideal network's time need not fall steadily with the batch).",
      r.compare.model_name, Grouped(r.compare.scenario.gpus), r.compare.system_name);
  CsvTable csv({"hb_domain_size", "global_batch_size", "rail_only_s", "ideal_s", "ideal_over_rail_only"});
  Json labels = Json::array();
  std::vector<int64_t> ks;
  for (const study::BatchSweepPoint& p : r.batch_sweep) {
    if (ks.empty() || ks.back() != p.hb_domain_size) ks.push_back(p.hb_domain_size);
  }
  Json datasets = Json::array();
  for (size_t i = 0; i < ks.size(); ++i) {
    Json data = Json::array();
    for (const study::BatchSweepPoint& p : r.batch_sweep) {
      if (p.hb_domain_size != ks[i]) continue;
      if (i == 0) labels.push_back(Grouped(p.global_batch));
      const bool ok = p.rail_only_s > 0 && p.ideal_s > 0;
      data.push_back(ok ? Json(100 * p.ideal_s / p.rail_only_s) : Null());
      csv.AddRow({std::to_string(p.hb_domain_size), std::to_string(p.global_batch), TimeCell(p.rail_only_s),
                  TimeCell(p.ideal_s), ok ? CsvNumber(p.ideal_s / p.rail_only_s) : ""});
    }
    datasets.push_back(Dataset(fmt::format("Rail-only, HB domain {}", ks[i]), data, int(i) + 1));
  }
  Json chart;
  chart["type"] = "line";
  chart["data"]["labels"] = labels;
  chart["data"]["datasets"] = datasets;
  chart["options"] = Options(f.title, "global batch (sequences)", "ideal time / Rail-only time (%)");
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure Traffic(const study::ReportStudy& r, std::vector<ReportFile>* files) {
  Figure f;
  f.id = "traffic";
  f.title = "Who talks to whom, and over which tier";
  const spec::Strategy& s = *r.traffic_strategy;
  f.caption = fmt::format(
      "Above: bytes per GPU pair in one iteration of {} on {} x {} ({}) on Rail-only, HB domain {} "
      "(log colour, blocks of GPUs per cell). Below: the bytes every tier of each built network carries "
      "(summed over its links).",
      r.compare.model_name, Grouped(r.compare.scenario.gpus), r.compare.system_name, StrategyLine(s),
      r.traffic.empty() ? 0 : r.traffic.front().hb_domain_size);
  const study::TrafficResult& only = r.traffic.back();
  files->push_back({"traffic-heatmap.png",
                    HeatmapPng(only, {TrafficTitle(*r.traffic_context), StrategyLine(s),
                                      TrafficSetting(*r.traffic_context, only)})});
  f.image = "traffic-heatmap.png";
  CsvTable csv({"design", "tier", "bytes"});
  Json labels = Json::array();
  for (int t = 0; t < study::kTrafficTiers; ++t) labels.push_back(study::TrafficTierName(study::TrafficTier(t)));
  Json datasets = Json::array();
  for (size_t i = 0; i < r.traffic.size(); ++i) {
    Json data = Json::array();
    for (int t = 0; t < study::kTrafficTiers; ++t) {
      data.push_back(r.traffic[i].bytes_by_tier[size_t(t)] / 1e12);
      csv.AddRow({net::DesignName(r.traffic[i].design), study::TrafficTierName(study::TrafficTier(t)),
                  CsvNumber(r.traffic[i].bytes_by_tier[size_t(t)])});
    }
    datasets.push_back(Dataset(DesignLabel(r.traffic[i].design), data, int(i)));
  }
  Json chart;
  chart["type"] = "bar";
  chart["data"]["labels"] = labels;
  chart["data"]["datasets"] = datasets;
  chart["options"] = Options("Bytes by tier in one iteration", "link tier", "bytes carried (TB)");
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure AllToAll(const study::ReportStudy& r) {
  Figure f;
  f.id = "alltoall-ratio";
  f.title = "Forwarded all-to-all overhead against the NIC/HB bandwidth ratio";
  f.caption = fmt::format(
      "A uniform all-to-all across {} HB domains of {} GPUs: Rail-only forwarding through the HB domain against "
      "rail-optimized's direct all-to-all, at line rates (NVLink 450 GB/s per GPU, no latency), with its two "
      "phases in sequence or pipelined in 16 chunks (the paper's formula). At 400 Gb/s NICs the ratio is 0.111.",
      r.alltoall_domains, r.alltoall_hb_domain_size);
  CsvTable csv({"nic_over_hb", "sequential_overhead", "pipelined_overhead"});
  Json seq = Json::array(), pip = Json::array();
  for (const study::AllToAllPoint& p : r.alltoall) {
    seq.push_back({{"x", p.nic_over_hb}, {"y", 100 * p.sequential_overhead}});
    pip.push_back({{"x", p.nic_over_hb}, {"y", 100 * p.pipelined_overhead}});
    csv.AddRow({CsvNumber(p.nic_over_hb), CsvNumber(p.sequential_overhead), CsvNumber(p.pipelined_overhead)});
  }
  Json chart;
  chart["type"] = "scatter";
  Json sequential = Dataset("sequential forwarding", seq, 1), pipelined = Dataset("pipelined forwarding", pip, 2);
  sequential["showLine"] = pipelined["showLine"] = true;
  // The paper's two figures (tests/data/rail-only-table2.csv's source,
  // section 5): 8.2% for DGX A100 (25 GB/s NICs, 300 GB/s NVLink) and 11.2%
  // for H100-class (50 GB/s, 450 GB/s), forwarding in sequence.
  Json paper = Dataset("the paper: 8.2% (A100), 11.2% (H100)",
                       Json::array({{{"x", 25.0 / 300}, {"y", 8.2}}, {{"x", 50.0 / 450}, {"y", 11.2}}}), 0);
  paper["pointStyle"] = "star";
  paper["pointRadius"] = 10;
  chart["data"]["datasets"] = {sequential, pipelined, paper};
  chart["options"] = Options(f.title, "NIC bandwidth / HB bandwidth per GPU", "Rail-only overhead (%)");
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure Failures(const study::ReportStudy& r) {
  Figure f;
  f.id = "failures";
  f.title = "Failure impact per design over a 30-day run";
  const spec::Scenario& sc = r.compare.scenario;
  f.caption = fmt::format(
      "{} trials of a 30-day run on {} GPUs, HB domain {}, radix {} (failure catalog h100-fleet: rates from "
      "Llama 3 and Alibaba HPN, repair times assumed; checkpoint every 20 min, restart 5 min). Bars: spare GPUs "
      "needed to cover 99.9% of the run under each design's spare policy (any GPU; same-rail on Rail-only); "
      "points: interruptions per run.",
      Grouped(r.failure_trials), Grouped(sc.gpus), sc.hb_domain_sizes.front(), sc.radixes.back());
  CsvTable csv({"design", "spare_policy", "interruptions_mean", "interruptions_p05", "interruptions_p95",
                "goodput", "gpu_hours_lost_mean", "spares_needed", "network_share"});
  Json labels = Json::array(), spares = Json::array(), interruptions = Json::array();
  for (const study::MonteCarloResult& m : r.failures) {
    labels.push_back(DesignLabel(m.design));
    spares.push_back(m.spares_needed);
    interruptions.push_back(m.interruptions_mean);
    csv.AddRow({net::DesignName(m.design), study::SparePolicyName(m.policy), CsvNumber(m.interruptions_mean),
                std::to_string(m.interruptions_p05), std::to_string(m.interruptions_p95), CsvNumber(m.goodput),
                CsvNumber(m.gpu_hours_lost_mean), std::to_string(m.spares_needed), CsvNumber(m.network_share)});
  }
  Json bars = Dataset("spare GPUs for 99.9% availability", spares, 0);
  Json points = Dataset("interruptions per 30 days", interruptions, 1, "line");
  points["yAxisID"] = "interruptions";
  points["showLine"] = false;
  points["pointRadius"] = 7;
  Json chart;
  chart["type"] = "bar";
  chart["data"]["labels"] = labels;
  chart["data"]["datasets"] = {bars, points};
  chart["options"] = Options(f.title, "network design", "spare GPUs");
  chart["options"]["scales"]["interruptions"] = {
      {"position", "right"},
      {"title", {{"display", true}, {"text", "interruptions per run"}}},
      {"grid", {{"drawOnChartArea", false}}}};
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure Pareto(const study::ReportStudy& r) {
  Figure f;
  f.id = "pareto";
  f.title = "Cluster interconnect cost against iteration time, every design, HB domain size and radix";
  // The HB fabric estimate, said once for the caption (the same for every
  // design and radix at one K).
  std::string hb_note = "every HB domain here is one server's, priced with the server";
  for (const study::ParetoPoint& p : r.pareto) {
    if (p.hb_fabric.links_per_gpu == 0) continue;
    hb_note = fmt::format(
        "HB domains of {} GPUs are larger than a server, so their NVLink switch fabric is added: an estimate of "
        "{} per GPU ({} links per GPU, each with 3 switch ports and 4 transceivers of the catalog's fastest "
        "class, as a two-tier fabric like DGX GH200's; NVIDIA publishes no NVLink switch prices)",
        p.hb_domain_size, Dollars(p.hb_fabric.cost_usd / double(r.compare.scenario.gpus)), p.hb_fabric.links_per_gpu);
    break;
  }
  f.caption = fmt::format(
      "Each point is one design at one (HB domain size K, switch radix) of the scenario: the cost of what joins "
      "its GPUs (the network, plus the HB fabric where K needs one) and the best iteration time of {} at global "
      "batch {} timed on that network. Colour: design; shape: radix; filled: K = {}, hollow: larger K. Fat-tree "
      "costs what rail-optimized costs and trains as fast, so its crosses sit on rail-optimized's markers. {}. "
      "Lower left is better: the front a buyer chooses from.",
      r.compare.model_name, Grouped(r.batch), r.pareto.empty() ? 0 : r.pareto.front().hb_domain_size, hb_note);
  // Points with the same cost and time hide one another: name them.
  std::vector<std::string> coinciding;
  std::vector<bool> told(r.pareto.size(), false);
  for (size_t i = 0; i < r.pareto.size(); ++i) {
    if (told[i] || r.pareto[i].iteration_s <= 0) continue;
    std::vector<std::string> same;
    for (size_t j = i; j < r.pareto.size(); ++j) {
      const study::ParetoPoint& a = r.pareto[i];
      const study::ParetoPoint& b = r.pareto[j];
      if (std::abs(a.cost_usd + a.hb_fabric.cost_usd - b.cost_usd - b.hb_fabric.cost_usd) < 1 &&
          std::abs(a.iteration_s - b.iteration_s) < 1e-9) {
        told[j] = true;
        same.push_back(fmt::format("{} radix {}", DesignLabel(b.design), b.radix));
      }
    }
    if (same.size() > 1) {
      coinciding.push_back(fmt::format("at K {}: {}", r.pareto[i].hb_domain_size, fmt::join(same, ", ")));
    }
  }
  if (!coinciding.empty()) {
    f.caption += fmt::format(" Drawn on one another (same cost and time): {}.", fmt::join(coinciding, "; "));
  }
  CsvTable csv({"design", "hb_domain_size", "radix", "network_cost_usd", "hb_fabric_cost_usd", "cost_usd",
                "power_w", "iteration_s"});
  for (const study::ParetoPoint& p : r.pareto) {
    csv.AddRow({net::DesignName(p.design), std::to_string(p.hb_domain_size), std::to_string(p.radix),
                CsvNumber(p.cost_usd), CsvNumber(p.hb_fabric.cost_usd), CsvNumber(p.cost_usd + p.hb_fabric.cost_usd),
                CsvNumber(p.power_w + p.hb_fabric.power_w), TimeCell(p.iteration_s)});
  }
  std::vector<int64_t> ks;
  std::vector<int> radixes;
  for (const study::ParetoPoint& p : r.pareto) {
    if (std::find(ks.begin(), ks.end(), p.hb_domain_size) == ks.end()) ks.push_back(p.hb_domain_size);
    if (std::find(radixes.begin(), radixes.end(), p.radix) == radixes.end()) radixes.push_back(p.radix);
  }
  // One series per point, so that every legend swatch is its marker.
  const char* shapes[] = {"circle", "triangle", "rect", "rectRot"};
  const char* crosses[] = {"crossRot", "cross", "star", "line"};
  Json datasets = Json::array();
  for (const study::ParetoPoint& p : r.pareto) {
    if (p.iteration_s <= 0) continue;
    const int colour = p.design == net::Design::kRailOptimized ? 0 : p.design == net::Design::kRailOnly ? 1 : 2;
    const size_t shape = size_t(std::find(radixes.begin(), radixes.end(), p.radix) - radixes.begin()) % 4;
    const bool first_k = p.hb_domain_size == ks.front();
    Json data = Json::array();
    data.push_back({{"x", (p.cost_usd + p.hb_fabric.cost_usd) / 1e6}, {"y", p.iteration_s}});
    Json d = Dataset(fmt::format("{}, K {}, radix {}", DesignLabel(p.design), p.hb_domain_size, p.radix), data,
                     colour);
    const bool fat_tree = p.design == net::Design::kFatTree;
    d["pointStyle"] = fat_tree ? crosses[shape] : shapes[shape];
    d["pointRadius"] = fat_tree ? 7 : 8;
    d["borderWidth"] = 2;
    if (!first_k && !fat_tree) d["backgroundColor"] = "rgba(255,255,255,0)";
    datasets.push_back(d);
  }
  Json chart;
  chart["type"] = "scatter";
  chart["data"]["datasets"] = datasets;
  chart["options"] = Options(f.title, "network + HB fabric cost (million USD, log scale)", "best iteration time (s)");
  // The HB fabric of large domains costs several times the network: a log
  // axis keeps the networks' differences readable beside it.
  chart["options"]["scales"]["x"]["type"] = "logarithmic";
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

Figure MoeOverhead(const study::ReportStudy& r) {
  Figure f;
  f.id = "moe-ep";
  f.title = "MoE dispatch on Rail-only against expert-parallel degree";
  const study::MoeCase& m = r.compare.moe.front();
  const spec::Scenario& sc = r.compare.scenario;
  f.caption = fmt::format(
      "One {} layer's dispatch of one sequence (tp 1) on {}, HB domain {}: Rail-only against rail-optimized with "
      "the same algorithm, as EP grows from one HB domain to many. Forwarded (DeepEP's kernels) crosses the NIC "
      "once per domain a token reaches ({}), direct once per remote copy (on Rail-only, through NVLink first "
      "when it changes rail). The third line is the algorithm's own effect on rail-optimized.",
      r.compare.moe_model_name, r.compare.system_name, m.hb_domain_size,
      sc.moe_max_domains > 0 ? fmt::format("at most {}", sc.moe_max_domains) : std::string("no limit"));
  CsvTable csv({"ep", "hb_domains", "rail_optimized_direct_s", "rail_optimized_forwarded_s", "rail_only_forwarded_s",
                "rail_only_direct_s", "overhead_forwarded", "overhead_direct"});
  Json labels = Json::array(), fwd = Json::array(), dir = Json::array(), algorithm = Json::array();
  for (const study::MoeSweepPoint& p : m.ep_sweep) {
    labels.push_back(fmt::format("{} ({} domain{})", p.ep, p.domains, p.domains == 1 ? "" : "s"));
    fwd.push_back(100 * (p.rail_only.forwarded_s / p.rail_optimized.forwarded_s - 1));
    dir.push_back(100 * (p.rail_only.direct_s / p.rail_optimized.direct_s - 1));
    algorithm.push_back(100 * (p.rail_optimized.forwarded_s / p.rail_optimized.direct_s - 1));
    csv.AddRow({std::to_string(p.ep), std::to_string(p.domains), CsvNumber(p.rail_optimized.direct_s),
                CsvNumber(p.rail_optimized.forwarded_s), CsvNumber(p.rail_only.forwarded_s),
                CsvNumber(p.rail_only.direct_s), CsvNumber(p.overhead(spec::MoeAllToAll::kForwarded)),
                CsvNumber(p.overhead(spec::MoeAllToAll::kDirect))});
  }
  Json chart;
  chart["type"] = "line";
  chart["data"]["labels"] = labels;
  // The network's cost, algorithm by algorithm (dashed: the direct line
  // often lies on the forwarded one), and, apart, what the algorithm itself
  // changes on rail-optimized.
  Json direct = Dataset("direct: Rail-only against rail-optimized", dir, 3);
  direct["borderDash"] = {6, 4};
  direct["pointStyle"] = "rectRot";
  direct["pointRadius"] = 7;
  direct["backgroundColor"] = "rgba(255,255,255,0)";
  chart["data"]["datasets"] = {Dataset("forwarded: Rail-only against rail-optimized", fwd, 1), direct,
                                Dataset("rail-optimized: forwarded against direct (the algorithm, not the network)",
                                        algorithm, 4)};
  chart["options"] = Options(f.title, "expert-parallel degree (HB domains spanned)",
                             "Rail-only's dispatch time against rail-optimized's (%)");
  f.charts.push_back(chart);
  f.csv = csv.Render();
  return f;
}

// The scenario's job trace on the shared cluster (railsim cluster): per
// scheduler policy, each design's GPU occupancy and job completion slowdown.
Figure SharedCluster(const study::ReportStudy& r) {
  const study::ClusterResult& c = *r.compare.shared_cluster;
  Figure f;
  f.id = "shared-cluster";
  f.title = "A shared cluster: occupancy and job slowdown per design and scheduler policy";
  f.caption = fmt::format(
      "The job trace '{}' ({} jobs) replayed on {} GPUs in HB domains of {} under each scheduler policy, on each "
      "design (railsim cluster). Above: GPU occupancy over the submission window. Below: how much longer a job "
      "takes than alone on an empty cluster (mean, log scale; the CSV has the 99th percentile): waiting, a "
      "placement across HB domains and rails, and other jobs' traffic on shared links (all running jobs' "
      "data-parallel rings at once, a worst case) stretch it.",
      c.trace, Grouped(c.trace_jobs), Grouped(c.gpus), c.hb_domain_size);
  CsvTable csv({"design", "policy", "occupancy_mean", "queue_wait_mean_s", "jobs_contended_share",
                "gpu_time_contended_share", "jct_slowdown_mean", "jct_slowdown_p99", "jobs_misaligned_share"});
  // In the other figures' order and colours: rail-optimized, Rail-only, fat-tree.
  const std::vector<std::string> designs = {"rail-optimized", "rail-only", "fat-tree"};
  std::vector<study::SchedulerPolicy> policies;
  for (const study::ClusterRun& run : c.runs) {
    if (std::find(policies.begin(), policies.end(), run.policy) == policies.end()) policies.push_back(run.policy);
    csv.AddRow({run.design, study::PolicyName(run.policy), CsvNumber(run.occupancy_mean), CsvNumber(run.queue_wait_s.mean),
                CsvNumber(run.jobs_contended_share), CsvNumber(run.gpu_time_contended_share),
                CsvNumber(run.jct_slowdown.mean), CsvNumber(run.jct_slowdown.p99), CsvNumber(run.jobs_across[1])});
  }
  Json labels = Json::array();
  for (study::SchedulerPolicy p : policies) labels.push_back(study::PolicyName(p));
  Json occupancy = Json::array(), slowdown = Json::array();
  for (size_t d = 0; d < designs.size(); ++d) {
    Json occ = Json::array(), jct = Json::array();
    for (study::SchedulerPolicy p : policies) {
      const study::ClusterRun* run = c.RunOf(designs[d], p);
      occ.push_back(run ? Json(100 * run->occupancy_mean) : Null());
      // Extra time in percent, on a log axis: 4% and 2,000% in one chart.
      jct.push_back(run ? Json(std::max(0.01, 100 * (run->jct_slowdown.mean - 1))) : Null());
    }
    const std::string label = designs[d] == "rail-only" ? "Rail-only" : designs[d];
    occupancy.push_back(Dataset(label, occ, int(d)));
    slowdown.push_back(Dataset(label, jct, int(d)));
  }
  Json top;
  top["type"] = "bar";
  top["data"]["labels"] = labels;
  top["data"]["datasets"] = occupancy;
  top["options"] = Options("GPU occupancy", "scheduler policy", "busy GPUs over the window (%)");
  f.charts.push_back(top);
  Json bottom;
  bottom["type"] = "bar";
  bottom["data"]["labels"] = labels;
  bottom["data"]["datasets"] = slowdown;
  bottom["options"] = Options("Job completion time against an empty cluster", "scheduler policy",
                              "mean extra completion time (%, log scale)");
  bottom["options"]["scales"]["y"]["type"] = "logarithmic";
  f.charts.push_back(bottom);
  f.csv = csv.Render();
  return f;
}

std::vector<Figure> Figures(const study::ReportStudy& r, std::vector<ReportFile>* files) {
  std::vector<Figure> out;
  out.push_back(CostPower(r));
  if (!r.hb_sweep.empty()) out.push_back(IterationVsHb(r));
  if (!r.batch_sweep.empty()) out.push_back(RailOnlyVsIdeal(r));
  // A figure the scenario asks for but that cannot be drawn says why.
  auto not_drawn = [&out](const char* id, const char* title, std::string why) {
    Figure f;
    f.id = id;
    f.title = title;
    f.caption = "Not drawn: " + std::move(why);
    out.push_back(f);
  };
  const spec::Scenario& sc = r.compare.scenario;
  if (r.traffic_strategy && r.traffic.size() == 2) {
    out.push_back(Traffic(r, files));
  } else if (!r.hb_sweep.empty()) {
    not_drawn("traffic", "Who talks to whom, and over which tier",
              sc.gpus > net::kMaxBuildGpus
                  ? fmt::format("the traffic is routed on the built network, at most {} GPUs; the scenario has {}.",
                                Grouped(net::kMaxBuildGpus), Grouped(sc.gpus))
                  : fmt::format("no layout of {} runs on Rail-only with {} GPUs at global batch {} (see the "
                                "verdict).",
                                r.compare.model_name, Grouped(sc.gpus), Grouped(r.batch)));
  }
  out.push_back(AllToAll(r));
  if (!r.failures.empty()) {
    out.push_back(Failures(r));
  } else if (!sc.system.empty()) {
    not_drawn("failures", "Failure impact per design over a 30-day run",
              fmt::format("the failure study builds every design's graph, at most {} GPUs; the scenario has {}.",
                          Grouped(net::kMaxBuildGpus), Grouped(sc.gpus)));
  }
  if (!r.pareto.empty()) out.push_back(Pareto(r));
  if (r.compare.shared_cluster) out.push_back(SharedCluster(r));
  if (!r.compare.moe.empty() && !r.compare.moe.front().ep_sweep.empty()) {
    out.push_back(MoeOverhead(r));
  } else if (!r.compare.moe.empty()) {
    not_drawn("moe-ep", "MoE dispatch on Rail-only against expert-parallel degree",
              fmt::format("no expert-parallel degree of {} divides both its {} experts and the {} GPUs.",
                          r.compare.moe_model_name, r.compare.moe_experts, Grouped(sc.gpus)));
  }
  return out;
}

// compare's side-by-side tables, one per HB domain size, and their CSV.
std::string SideBySideSection(const study::CompareResult& compare, std::vector<ReportFile>* files) {
  std::string html = "<h2>Designs side by side</h2>\n";
  for (int64_t k : compare.scenario.hb_domain_sizes) {
    const SideBySideTable table = CompareSideBySide(compare, k);
    html += fmt::format("<table class=\"sidebyside\">\n<caption>{}</caption>\n<tr><th></th>", HtmlEscape(table.title));
    for (const std::string& c : table.columns) html += "<th>" + HtmlEscape(c) + "</th>";
    html += "</tr>\n";
    for (const SideBySideTable::Row& row : table.rows) {
      if (row.section) {
        html += fmt::format("<tr class=\"section\"><th colspan=\"4\">{}</th></tr>\n", HtmlEscape(row.label));
        continue;
      }
      html += "<tr><td>" + HtmlEscape(row.label) + "</td>";
      for (const std::string& cell : row.cells) html += "<td class=\"num\">" + HtmlEscape(cell) + "</td>";
      html += "</tr>\n";
    }
    html += "</table>\n";
    if (!table.commands.empty()) {
      html += "<p class=\"caption\">Each best strategy as the estimate that times it:</p>\n<ul class=\"caption\">\n";
      for (const std::string& c : table.commands) html += "<li><code>" + HtmlEscape(c) + "</code></li>\n";
      html += "</ul>\n";
    }
  }
  html += "<p class=\"caption\">What <code>railsim compare</code> prints for this scenario: each design's network at "
          "each switch radix and the best strategy of each job on it. Data: <a href=\"side-by-side.csv\">"
          "side-by-side.csv</a> (the table as shown) and <a href=\"compare.csv\">compare.csv</a> (every number, "
          "as <code>railsim compare --format csv</code> gives it).</p>\n";
  files->push_back({"side-by-side.csv", CompareCsv(compare)});
  files->push_back({"compare.csv", CompareNumbersCsv(compare)});
  return html;
}

constexpr char kStyle[] = R"(
body { font-family: sans-serif; margin: 24px auto; max-width: 1100px; color: #222; background: #fff; }
h1 { font-size: 24px; } h2 { font-size: 18px; margin-top: 36px; }
.chart { position: relative; height: 420px; width: 100%; }
.figure img { max-width: 100%; display: block; margin-bottom: 12px; }
.caption { font-size: 13px; color: #444; }
.verdict li { margin: 4px 0; }
table.sidebyside { border-collapse: collapse; margin: 16px 0; font-size: 13px; width: 100%; }
table.sidebyside caption { text-align: left; font-weight: bold; padding: 6px 0; }
table.sidebyside th, table.sidebyside td { padding: 3px 8px; border-bottom: 1px solid #e4e4e4; }
table.sidebyside th { text-align: right; } table.sidebyside tr.section th { text-align: left; background: #f3f3f3; }
table.sidebyside td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
footer { margin-top: 48px; font-size: 12px; color: #666; }
)";

// Draws every figure; a chart that fails says so on the console and the
// others are still drawn.
constexpr char kDriver[] = R"(
for (const figure of RAILSIM_FIGURES) {
  try { new Chart(document.getElementById('chart-' + figure.id), figure.config); }
  catch (e) { console.error('chart ' + figure.id + ': ' + e); }
}
)";

}  // namespace

std::vector<ReportFile> BuildReport(const study::ReportStudy& r, const std::string& version) {
  std::vector<ReportFile> files;
  std::vector<Figure> figures = Figures(r, &files);
  const spec::Scenario& sc = r.compare.scenario;
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<title>railsim report: {}</title>\n<style>{}</style>\n</head>\n<body>\n", HtmlEscape(sc.name),
                      kStyle);
  html += fmt::format("<h1>railsim report: {}</h1>\n<p>{}</p>\n", HtmlEscape(sc.name), HtmlEscape(sc.description));
  html += "<h2>Verdict</h2>\n<ul class=\"verdict\">\n";
  for (const std::string& line : CompareVerdict(r.compare)) html += "<li>" + HtmlEscape(line) + "</li>\n";
  html += "</ul>\n";
  html += SideBySideSection(r.compare, &files);
  Json configs = Json::array();
  for (const Figure& f : figures) {
    html += fmt::format("<section class=\"figure\" id=\"figure-{}\">\n<h2>{}</h2>\n", f.id, HtmlEscape(f.title));
    if (!f.image.empty()) {
      for (const ReportFile& file : files) {
        if (file.name != f.image) continue;
        html += fmt::format("<img id=\"image-{}\" alt=\"{}\" src=\"data:image/png;base64,{}\">\n", f.id,
                            HtmlEscape(f.title), Base64(file.contents));
      }
    }
    for (size_t i = 0; i < f.charts.size(); ++i) {
      html += fmt::format("<div class=\"chart\" id=\"box-{0}-{1}\"><canvas id=\"chart-{0}-{1}\"></canvas></div>\n",
                          f.id, i);
      configs.push_back({{"id", fmt::format("{}-{}", f.id, i)}, {"config", f.charts[i]}});
    }
    if (f.charts.empty() && f.image.empty()) {
      html += fmt::format("<p class=\"caption\">{}</p>\n</section>\n", HtmlEscape(f.caption));
      continue;
    }
    html += fmt::format("<p class=\"caption\">{} Data: <a href=\"{}.csv\">{}.csv</a>.</p>\n</section>\n",
                        HtmlEscape(f.caption), f.id, f.id);
    files.push_back({f.id + ".csv", f.csv});
  }
  html += fmt::format("<footer>Generated by railsim {}. Charts drawn with Chart.js {} (Debian libjs-chart.js, "
                      "MIT licence), inlined below; the page needs no network.</footer>\n",
                      HtmlEscape(version), HtmlEscape(embedded::kChartJsVersion));
  // The library, then the figures; "</" inside JSON strings is escaped so no
  // string can end the script element.
  std::string data = configs.dump();
  for (size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 2)) data.replace(at, 2, "<\\/");
  html += "<script>\n";
  html += embedded::kChartJs;
  html += "\n</script>\n<script>\nconst RAILSIM_FIGURES = " + data + ";\n" + kDriver + "</script>\n</body>\n</html>\n";
  files.insert(files.begin(), {"index.html", html});
  return files;
}

std::string ReportFilesJson(const std::string& dir, const std::vector<std::string>& files,
                            const std::vector<std::string>& notes) {
  Json j;
  j["out"] = dir;
  j["index"] = dir + "/index.html";
  j["files"] = files;
  j["notes"] = notes;
  return j.dump(2) + "\n";
}

}  // namespace railsim::report
