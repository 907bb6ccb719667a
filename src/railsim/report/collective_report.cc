#include "railsim/report/collective_report.h"

#include <algorithm>

#include <cmath>

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

// How many of the busiest links the reports list.
constexpr size_t kBusiestLinks = 10;

double SimulatedOrAnalytic(const study::CollectiveOutcome& o) { return o.simulated ? o.sim.time_s : o.analytic_s; }

std::string LinkName(const net::Topology& t, const sim::LinkLoad& load) {
  const net::Link& l = t.links()[load.link];
  net::NodeId from = load.upward ? l.a : l.b, to = load.upward ? l.b : l.a;
  return t.NodeName(from) + "->" + t.NodeName(to);
}

std::vector<sim::LinkLoad> Busiest(const sim::SimResult& r) {
  std::vector<sim::LinkLoad> links = r.links;
  auto busier = [](const sim::LinkLoad& a, const sim::LinkLoad& b) {
    return a.utilisation != b.utilisation ? a.utilisation > b.utilisation
                                          : (a.link != b.link ? a.link < b.link : a.upward > b.upward);
  };
  size_t n = std::min(kBusiestLinks, links.size());
  std::partial_sort(links.begin(), links.begin() + n, links.end(), busier);
  links.resize(n);
  return links;
}

// Highest utilisation per tier, for the table.
struct TierPeak {
  double nvlink = 0, nic_leaf = 0, leaf_spine = 0, spine_core = 0;
};
TierPeak PeakByTier(const study::CollectiveOutcome& o) {
  TierPeak p;
  for (const sim::LinkLoad& l : o.sim.links) {
    double* slot = nullptr;
    switch (o.topology.links()[l.link].kind) {
      case net::LinkKind::kNvlink: slot = &p.nvlink; break;
      case net::LinkKind::kNicToLeaf: slot = &p.nic_leaf; break;
      case net::LinkKind::kLeafToSpine: slot = &p.leaf_spine; break;
      case net::LinkKind::kSpineToCore: slot = &p.spine_core; break;
      case net::LinkKind::kPcie: break;
    }
    if (slot) *slot = std::max(*slot, l.utilisation);
  }
  return p;
}

Json NetworkObject(const study::CollectiveRequest& r, const study::CollectiveOutcome& o) {
  Json j;
  j["design"] = perf::NetworkName(r.network);
  j["gpus"] = r.gpus;
  j["hb_domain_size"] = o.cluster.domain_use.size;
  if (!o.cluster.domain_use.whole()) {
    j["gpus_per_domain"] = o.cluster.domain_use.used;
    j["hb_domains"] = r.gpus / o.cluster.domain_use.used;
    j["idle_gpus_in_domains"] = r.gpus / o.cluster.domain_use.used * o.cluster.domain_use.idle();
  }
  j["radix"] = o.cluster.shape.radix;
  j["oversubscription"] = o.cluster.shape.oversubscription;
  j["tiers"] = o.cluster.shape.tiers;
  return j;
}

Json OutcomeObject(const study::CollectiveRequest& r, const study::CollectiveOutcome& o) {
  Json j;
  j["op"] = r.moe ? "moe-dispatch" : comm::OpName(r.op);
  if (r.moe) {
    j["moe"] = {{"tokens_per_member", r.moe->tokens},
                {"bytes_per_token", r.moe->bytes_per_token},
                {"experts", r.moe->experts},
                {"topk", r.moe->topk},
                {"max_domains", r.moe->max_domains},
                {"imbalance", r.moe->imbalance},
                {"domain_reach_probability",
                 comm::DomainReachProbability(*r.moe, comm::LayoutOf(r.group.size, r.group.stride,
                                                                     o.cluster.fabrics.hb_domain_size)
                                                          .domains)}};
  }
  j["algorithm"] = o.plan.algorithm;
  if (*o.plan.protocol) j["protocol"] = o.plan.protocol;
  j["group"] = {{"size", r.group.size}, {"stride", r.group.stride}, {"groups", r.group.Groups(r.gpus)}};
  j["bytes"] = r.bytes;
  j["time_s"] = SimulatedOrAnalytic(o);
  j["analytic_time_s"] = o.analytic_s;
  j["simulated"] = o.simulated;
  j["network"] = NetworkObject(r, o);
  Json phases = Json::array();
  for (int i = 0; i < o.plan.count; ++i) {
    const comm::Phase& p = o.plan.phases[i];
    Json ph;
    ph["name"] = p.name;
    ph["flows_per_step"] = comm::PhaseFlowCount(p, r.gpus);
    ph["bytes_per_flow"] = p.bytes_per_flow;
    ph["steps"] = p.repeat;
    ph["chunks"] = p.chunks;
    ph["analytic_time_s"] = o.phase_analytic_s[i];
    if (o.simulated) {
      ph["simulated_start_s"] = o.sim.phases[i].start_s;
      ph["simulated_end_s"] = o.sim.phases[i].end_s;
      ph["steps_simulated"] = o.sim.phases[i].steps_simulated;
    }
    phases.push_back(ph);
  }
  j["phases"] = phases;
  if (!o.simulated) return j;
  j["simulated_time_s"] = o.sim.time_s;
  j["routing"] = net::RoutingName(o.routing);
  j["seed"] = o.seed;
  j["flows"] = o.sim.flows_simulated;
  j["flows_represented"] = o.sim.flows_represented;
  j["events"] = o.sim.events;
  Json busiest = Json::array();
  for (const sim::LinkLoad& l : Busiest(o.sim)) {
    busiest.push_back({{"name", LinkName(o.topology, l)}, {"utilisation", l.utilisation}, {"bytes", l.bytes}});
  }
  j["links_busiest"] = busiest;
  const sim::TierBytes& b = o.sim.bytes_by_tier;
  j["bytes_by_tier"] = {{"nvlink", b.nvlink}, {"nic_leaf", b.nic_leaf}, {"leaf_spine", b.leaf_spine},
                        {"spine_core", b.spine_core}};
  const TierPeak peak = PeakByTier(o);
  j["utilisation_by_tier_max"] = {{"nvlink", peak.nvlink}, {"nic_leaf", peak.nic_leaf},
                                  {"leaf_spine", peak.leaf_spine}, {"spine_core", peak.spine_core}};
  return j;
}

// "+3.2%", or "n/a (why)" when the base is zero (no flow, no byte).
std::string RelativeChange(double value, double base, const char* why) {
  if (!(base > 0) || !std::isfinite(value / base)) return fmt::format("n/a: {}", why);
  return fmt::format("{:+.1f}%", 100 * (value / base - 1));
}

// When the simulation and the closed form differ by more than 2%, says by
// how much, where and why, so that no reader has to guess.
std::string SimulationGap(const study::CollectiveOutcome& o) {
  if (!(o.analytic_s > 0) || !(o.sim.time_s > 0)) return "";
  const double gap = o.sim.time_s / o.analytic_s - 1;
  if (std::fabs(gap) <= 0.02) return "";
  std::vector<std::string> links;
  for (const sim::LinkLoad& l : Busiest(o.sim)) {
    if (links.size() == 3) break;
    links.push_back(fmt::format("{} {}", LinkName(o.topology, l), Percent(l.utilisation, 0)));
  }
  // NCCL's protocol and algorithm factors (LL's half, PAT's three quarters)
  // slow the closed form only: the simulator moves Simple-protocol bytes.
  double factor = 1;
  for (int i = 0; i < o.plan.count; ++i) factor = std::min(factor, o.plan.phases[i].bw_factor);
  const std::string cause =
      gap < 0 && factor < 0.98
          ? fmt::format("the closed form runs at NCCL's {} {} share of the bandwidth (x{:.2f}), which the "
                        "simulator, moving Simple-protocol bytes at full rate, does not apply",
                        o.plan.algorithm, o.plan.protocol, factor)
      : gap > 0 ? "flows share links that the closed form gives each group alone (ECMP hash collisions, "
                "oversubscribed or partly filled switches, groups that meet on a spine)"
              : "the closed form charges every step at its slowest group's pace and in lockstep, while simulated "
                "flows finish as soon as their own links allow";
  return fmt::format("                the simulation is {:.1f}% {} than the closed form: {}; busiest links {}\n",
                     100 * std::fabs(gap), gap > 0 ? "slower" : "faster", cause, fmt::join(links, ", "));
}

std::string OutcomeTable(const study::CollectiveRequest& r, const study::CollectiveOutcome& o) {
  std::string out = fmt::format(
      "{} of {} per member, {} groups of {} ranks {} apart, algorithm {}{}\n"
      "{} x {} ({} network, HB domain {}, radix {}, {} tier{}{})\n{}\n",
      r.moe ? "moe-dispatch" : comm::OpName(r.op), BinaryBytes(r.bytes), Grouped(r.group.Groups(r.gpus)),
      Grouped(r.group.size),
      r.group.stride, o.plan.algorithm,
      *o.plan.protocol ? fmt::format(", protocol {}", o.plan.protocol) : std::string(), Grouped(r.gpus), r.system.name, perf::NetworkName(r.network),
      o.cluster.domain_use.size, o.cluster.shape.radix, o.cluster.shape.tiers, o.cluster.shape.tiers == 1 ? "" : "s",
      o.cluster.shape.oversubscription > 1 ? fmt::format(", {:g}:1 leaves", o.cluster.shape.oversubscription)
                                           : std::string(),
      o.cluster.domain_use.whole()
          ? std::string()
          : "GPUs: " + DomainUseLine(r.gpus, o.cluster.domain_use.used, o.cluster.domain_use.size) + "\n");
  TextTable t;
  t.AddColumn("phase", TextTable::Align::kLeft);
  for (const char* h : {"flows/step", "steps", "analytic"}) t.AddColumn(h);
  if (o.simulated) t.AddColumn("simulated");
  for (int i = 0; i < o.plan.count; ++i) {
    const comm::Phase& p = o.plan.phases[i];
    std::vector<std::string> row = {p.chunks > 1 ? fmt::format("{} ({} chunks, pipelined)", p.name, p.chunks) : p.name,
                                    Grouped(comm::PhaseFlowCount(p, r.gpus)), Grouped(p.repeat),
                                    Seconds(o.phase_analytic_s[i])};
    if (o.simulated) row.push_back(Seconds(o.sim.phases[i].end_s - o.sim.phases[i].start_s));
    t.AddRow(row);
  }
  out += t.Render();
  out += fmt::format("\nanalytic time   {}\n", Seconds(o.analytic_s));
  if (!o.simulated) return out;
  out += fmt::format("simulated time  {} ({} vs analytic; {} flows, {} rate updates, {} routing, seed {})\n",
                     Seconds(o.sim.time_s), RelativeChange(o.sim.time_s, o.analytic_s, "nothing crosses a link"),
                     Grouped(o.sim.flows_simulated), Grouped(o.sim.events), net::RoutingName(o.routing), o.seed);
  out += SimulationGap(o);
  const sim::TierBytes& b = o.sim.bytes_by_tier;
  TierPeak peak = PeakByTier(o);
  TextTable tiers;
  tiers.AddColumn("tier", TextTable::Align::kLeft);
  tiers.AddColumn("bytes");
  tiers.AddColumn("busiest link");
  tiers.AddRow({"NVLink", BinaryBytes(b.nvlink), Percent(peak.nvlink)});
  tiers.AddRow({"NIC-leaf", BinaryBytes(b.nic_leaf), Percent(peak.nic_leaf)});
  tiers.AddRow({"leaf-spine", BinaryBytes(b.leaf_spine), Percent(peak.leaf_spine)});
  tiers.AddRow({"spine-core", BinaryBytes(b.spine_core), Percent(peak.spine_core)});
  out += "\n";
  out += tiers.Render();
  out += "\nbusiest links:\n";
  for (const sim::LinkLoad& l : Busiest(o.sim)) {
    out += fmt::format("  {:<40} {}\n", LinkName(o.topology, l), Percent(l.utilisation));
  }
  return out;
}

}  // namespace

std::string CollectiveTable(const study::CollectiveRequest& r, const study::CollectiveOutcome& o) {
  return OutcomeTable(r, o);
}

std::string CollectiveJson(const study::CollectiveRequest& r, const study::CollectiveOutcome& o) {
  return OutcomeObject(r, o).dump(2) + "\n";
}

std::string AllToAllTable(const study::CollectiveRequest& r, const study::CollectiveOutcome& o,
                          const std::optional<study::CollectiveOutcome>& baseline) {
  const comm::ClusterFabrics& f = o.cluster.fabrics;
  std::string out = fmt::format("HB {} x {}, NIC {} x {} per GPU per direction; schedule {}\n",
                                units::FormatByteRate(f.hb.bw_Bps), Percent(f.hb.efficiency, 0),
                                units::FormatByteRate(f.nic.bw_Bps), Percent(f.nic.efficiency, 0),
                                r.plan_options.pipelined ? "pipelined" : "sequential");
  out += OutcomeTable(r, o);
  if (baseline) {
    double ours = SimulatedOrAnalytic(o), theirs = SimulatedOrAnalytic(*baseline);
    out += fmt::format("\nrail-optimized, same inputs: {} ({}) -> Rail-only overhead {}\n", Seconds(theirs),
                       baseline->simulated ? fmt::format("simulated, {} flows", Grouped(baseline->sim.flows_simulated))
                                           : std::string("analytic"),
                       theirs > 0 ? fmt::format("{:+.2f}%", 100 * (ours / theirs - 1))
                                  : std::string("n/a: nothing crosses a link (one GPU, or one HB domain)"));
    if (o.simulated) {
      out += fmt::format("flows simulated in all: {}\n",
                         Grouped(o.sim.flows_simulated + (baseline->simulated ? baseline->sim.flows_simulated : 0)));
    }
    if (o.simulated && baseline->simulated && baseline->analytic_s > 0 && o.analytic_s > 0) {
      const double analytic = o.analytic_s / baseline->analytic_s - 1, simulated = ours / theirs - 1;
      if (std::fabs(simulated - analytic) > 0.02) {
        out += fmt::format("the analytic overhead is {:+.2f}%: the simulated rail-optimized baseline runs {} its "
                           "closed form ({}){}\n",
                           100 * analytic, RelativeChange(baseline->sim.time_s, baseline->analytic_s, "no flows"),
                           baseline->sim.time_s > baseline->analytic_s ? "contention on its fabric" : "no contention",
                           baseline->sim.time_s > baseline->analytic_s ? ", which forwarding over NVLink avoids" : "");
      }
    }
  }
  return out;
}

std::string AllToAllJson(const study::CollectiveRequest& r, const study::CollectiveOutcome& o,
                         const std::optional<study::CollectiveOutcome>& baseline) {
  Json j = OutcomeObject(r, o);
  j["bytes_per_pair"] = r.bytes / double(r.group.size);
  j["hb_bw_Bps"] = o.cluster.fabrics.hb.effective_Bps();
  j["nic_bw_Bps"] = o.cluster.fabrics.nic.effective_Bps();
  j["schedule"] = r.plan_options.pipelined ? "pipelined" : "sequential";
  if (r.plan_options.pipelined) j["chunks"] = r.plan_options.chunks;
  if (baseline) {
    double ours = SimulatedOrAnalytic(o), theirs = SimulatedOrAnalytic(*baseline);
    j["rail_optimized_time_s"] = theirs;
    j["rail_optimized_simulated"] = baseline->simulated;
    if (theirs > 0) j["overhead_vs_rail_optimized"] = ours / theirs - 1;
    if (o.simulated) {
      const int64_t theirs_flows = baseline->simulated ? baseline->sim.flows_simulated : 0;
      j["rail_optimized_flows"] = theirs_flows;
      j["flows_simulated_total"] = o.sim.flows_simulated + theirs_flows;
    }
  }
  return j.dump(2) + "\n";
}

std::string LinksCsv(const study::CollectiveOutcome& o) {
  CsvTable csv({"name", "tier", "rail", "bytes", "busy_s", "utilisation"});
  for (const sim::LinkLoad& l : o.sim.links) {
    const net::Link& link = o.topology.links()[l.link];
    csv.AddRow({LinkName(o.topology, l), net::LinkKindName(link.kind), std::to_string(link.rail),
                CsvNumber(l.bytes), CsvNumber(l.busy_s), CsvNumber(l.utilisation)});
  }
  return csv.Render();
}

}  // namespace railsim::report
