#include "railsim/report/compare_report.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/units.h"
#include "railsim/report/cluster_report.h"
#include "railsim/report/compare_cases.h"
#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/network_report.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

// Rail-only's network cost saving at each radix of the scenario for HB
// domain `k`: (radix, dollars).
std::vector<std::pair<int, double>> CostSaved(const study::CompareResult& result, int64_t k) {
  std::vector<std::pair<int, double>> out;
  for (const study::NetworkCase* c : CasesAt(result, k)) {
    const study::DesignResult* opt = DesignOf(*c, net::Design::kRailOptimized);
    const study::DesignResult* only = DesignOf(*c, net::Design::kRailOnly);
    if (opt && only) out.push_back({c->params.radix, opt->bom.cost_usd - only->bom.cost_usd});
  }
  return out;
}

std::string Time(double s) { return fmt::format("{:.3f} s", s); }

// Rail-only's saving against rail-optimized, or what it costs more: "$58,523,648
// (38.3%)", "costs $4,263,936 more (+3.0%)", "none".
template <typename Format>
std::string Saving(double amount, double share, Format format) {
  if (std::fabs(share) < 0.0005) return "none";
  if (amount > 0) return fmt::format("{} ({})", format(amount), Percent(share));
  return fmt::format("costs {} more (+{})", format(-amount), Percent(-share));
}

using Cells = std::array<std::string, 3>;

// Collects the rows of one side-by-side table.
class SideBySideBuilder {
 public:
  explicit SideBySideBuilder(SideBySideTable* table) : table_(table) {}
  void Section(const std::string& title) { table_->rows.push_back({true, title, {}}); }
  void Row(const std::string& label, const Cells& cells) { table_->rows.push_back({false, label, cells}); }
  // A strategy's degrees and its micro-batching, one row each.
  void Strategies(const std::string& what, const std::array<const spec::Strategy*, 3>& s) {
    Cells degrees, batching;
    for (size_t i = 0; i < 3; ++i) {
      if (!s[i]) continue;
      degrees[i] = StrategyDegrees(*s[i]);
      batching[i] = fmt::format("{} x {}, {}", s[i]->micro_batch, s[i]->num_microbatches(),
                                spec::RecomputeName(s[i]->recompute));
    }
    Row(what, degrees);
    Row("micro-batch x count, recompute", batching);
    Cells settings;
    for (size_t i = 0; i < 3; ++i) {
      if (s[i]) settings[i] = StrategySettings(*s[i]).empty() ? "-" : StrategySettings(*s[i]);
    }
    Row("settings", settings);
  }
  // A job's best strategy on each design (null: nothing fits): its MFU,
  // Rail-only's time against the other designs, the strategies and their
  // settings.
  void Best(const std::array<const search::RankedStrategy*, 3>& best, const std::array<int64_t, 3>& k) {
    Cells mfu, against, loss;
    std::array<const spec::Strategy*, 3> strategies = {};
    for (size_t i = 0; i < 3; ++i) {
      if (!best[i]) continue;
      mfu[i] = Percent(best[i]->estimate.mfu);
      loss[i] = LargestLoss(k[i], best[i]->strategy, best[i]->estimate, true);
      strategies[i] = &best[i]->strategy;
      if (best[1] && i != 1) {
        against[i] = Change(best[1]->estimate.iteration_time_s / best[i]->estimate.iteration_time_s);
      }
    }
    Row("MFU", mfu);
    Row("largest loss", loss);
    if (best[1]) Row("Rail-only's time against it", against);
    Strategies("best strategy", strategies);
  }

 private:
  SideBySideTable* table_;
};

// `railsim estimate` with every flag that times `s` as the comparison did
// on `network`, with the stack and fixed cost of the training job or,
// `moe`, of the MoE job.
std::string EstimateCommand(const study::CompareResult& result, const std::string& model, int64_t seq_length,
                            comm::NetworkKind network, int64_t k, const spec::Strategy& s, bool moe = false) {
  std::string line = fmt::format("railsim estimate --model {} --seq-length {} --system {} --gpus {} "
                                 "--global-batch-size {} --network {} --hb-size {}",
                                 ShellWord(model), seq_length, ShellWord(result.scenario.SystemFor(int(k))), s.gpus(),
                                 s.global_batch, comm::NetworkKindName(network), k);
  if (result.scenario.GpusPerDomain(k) < k && network != comm::NetworkKind::kIdeal) {
    line += fmt::format(" --gpus-per-domain {}", result.scenario.GpusPerDomain(k));
  }
  if (result.timed.radix > 0) line += fmt::format(" --radix {}", result.timed.radix);
  if (result.timed.oversubscription != 1) {
    line += fmt::format(" --oversubscription {:g}", result.timed.oversubscription);
  }
  const spec::Scenario& sc = result.scenario;
  const spec::Stack stack = spec::ParseStack(moe ? sc.moe_stack : sc.stack, moe ? "/moe_stack" : "/stack");
  if (stack != spec::Stack::kMegatronCore) line += fmt::format(" --stack {}", spec::StackName(stack));
  if (const std::optional<double> overhead = moe ? sc.moe_iteration_overhead_s : sc.iteration_overhead_s) {
    line += " --iteration-overhead " + units::FormatDuration(*overhead);
  }
  return line + " " + EstimateStrategyFlags(s, stack);
}

}  // namespace

SideBySideTable CompareSideBySide(const study::CompareResult& result, int64_t k) {
  const spec::Scenario& sc = result.scenario;
  SideBySideTable out;
  const std::string system = result.SystemNameFor(int(k));
  out.title = fmt::format("HB domain {}: {} {}GPUs in HB domains of {}, {} NICs", k, Grouped(sc.BuiltGpus(k)),
                          system.empty() ? "" : system + " ", k, units::FormatBitRate(sc.port_speed_Bps));
  if (sc.GpusPerDomain(k) < k && (!result.training.empty() || !result.moe.empty())) {
    out.title += fmt::format("; jobs on {} GPUs: {}", Grouped(sc.JobGpus(k)),
                             DomainUseLine(sc.JobGpus(k), sc.GpusPerDomain(k), k));
  }
  for (const study::TrainingCase& t : result.training) {
    if (t.hb_domain_size != k) continue;
    out.title += fmt::format("; jobs timed on the radix-{} networks", t.rail_optimized.shape.radix);
    if (t.rail_optimized.shape.oversubscription > 1) {
      out.title += fmt::format(" with {:g}:1 leaves", t.rail_optimized.shape.oversubscription);
    }
    break;
  }
  SideBySideBuilder table(&out);
  for (const study::NetworkCase* c : CasesAt(result, k)) {
    const study::DesignResult* opt = DesignOf(*c, net::Design::kRailOptimized);
    const study::DesignResult* only = DesignOf(*c, net::Design::kRailOnly);
    if (!opt || !only) continue;
    table.Section(fmt::format("network at radix {}", c->params.radix));
    auto both = [&](auto format) { return Cells{format(*opt), format(*only), "-"}; };
    table.Row("switches (tiers)", both([](const study::DesignResult& d) {
                return fmt::format("{} ({})", Grouped(d.bom.switches), d.bom.tiers);
              }));
    table.Row("transceivers", both([](const study::DesignResult& d) { return Grouped(d.bom.transceivers); }));
    table.Row("cost", both([](const study::DesignResult& d) { return Dollars(d.bom.cost_usd); }));
    table.Row("power", both([](const study::DesignResult& d) { return Watts(d.bom.power_w); }));
    table.Row("Rail-only saves: cost", {"", Saving(opt->bom.cost_usd - only->bom.cost_usd, only->cost_saving, Dollars), ""});
    table.Row("Rail-only saves: power", {"", Saving(opt->bom.power_w - only->bom.power_w, only->power_saving, Watts), ""});
    if (opt->cluster && only->cluster) {
      const study::ClusterCost& a = *opt->cluster;
      const study::ClusterCost& b = *only->cluster;
      if (a.hb_fabric_cost_usd > 0) {
        table.Row(fmt::format("HB fabric (domains of {} from {}-GPU servers)", k, result.ServerFor(int(k))->gpus),
                  {Dollars(a.hb_fabric_cost_usd), Dollars(b.hb_fabric_cost_usd), "-"});
      }
      table.Row(fmt::format("whole cluster ({} x {})", Grouped(a.servers), a.server),
                {Dollars(a.cost_usd), Dollars(b.cost_usd), "-"});
      table.Row("network share of cluster cost", {Percent(a.network_cost_share), Percent(b.network_cost_share), "-"});
      table.Row("network share of cluster power",
                {Percent(a.network_power_share), Percent(b.network_power_share), "-"});
    }
  }
  for (const study::TrainingCase& t : result.training) {
    if (t.hb_domain_size != k) continue;
    table.Section(fmt::format("{} at global batch {} (sequence length {})", result.model_name,
                              Grouped(t.global_batch), Grouped(result.seq_length)));
    const std::array<const study::TrainingOnNetwork*, 3> networks = t.networks();
    Cells times, usd = {"-", "-", "-"};
    std::array<const search::RankedStrategy*, 3> best;
    for (size_t i = 0; i < 3; ++i) {
      const study::TrainingOnNetwork& on = *networks[i];
      times[i] = on.fits ? Time(on.time_s()) : on.why == study::NoFit::kNoLayout ? "no layout" : "no fit (memory)";
      if (on.usd_per_pflops_day > 0) usd[i] = Dollars(on.usd_per_pflops_day);
      best[i] = on.found();
    }
    table.Row("iteration time", times);
    if (result.ServerFor(int(k))) table.Row("cost per PFLOP/s-day", usd);
    table.Best(best, {k, k, sc.gpus});
    for (size_t i = 0; i < 3; ++i) {
      if (!best[i]) continue;
      out.commands.push_back(fmt::format("{}, {} at batch {}: {}", out.columns[i], result.model_name,
                                         Grouped(t.global_batch),
                                         EstimateCommand(result, sc.model, result.seq_length, networks[i]->kind, k,
                                                         best[i]->strategy)));
    }
  }
  if (const study::MoeCase* m = MoeAt(result, k)) {
    table.Section(fmt::format("{} at global batch {} (sequence length {})", result.moe_model_name,
                              Grouped(m->global_batch), Grouped(result.moe_seq_length)));
    for (spec::MoeAllToAll a : study::kMoeAlgorithms) {
      auto cell = [](const study::BestStrategy& b) { return b.fits ? Time(b.time_s()) : std::string("no fit"); };
      const std::string ideal = a == spec::MoeAllToAll::kDirect ? "-" : cell(m->ideal);
      table.Row(fmt::format("iteration time, {} dispatch", spec::MoeAllToAllName(a)),
                {cell(m->rail_optimized.of(a)), cell(m->rail_only.of(a)), ideal});
    }
    auto faster = [](const study::MoeOnNetwork& on) {
      return on.found() ? std::string(spec::MoeAllToAllName(on.faster())) : std::string();
    };
    table.Row("faster dispatch", {faster(m->rail_optimized), faster(m->rail_only), ""});
    const std::array<const search::RankedStrategy*, 3> moe_best = {m->rail_optimized.found(), m->rail_only.found(),
                                                                   m->ideal.found()};
    const comm::NetworkKind kinds[] = {comm::NetworkKind::kRailOptimized, comm::NetworkKind::kRailOnly,
                                       comm::NetworkKind::kIdeal};
    table.Best(moe_best, {k, k, sc.gpus});
    for (size_t i = 0; i < 3; ++i) {
      if (!moe_best[i]) continue;
      out.commands.push_back(fmt::format("{}, {} at batch {}: {}", out.columns[i], result.moe_model_name,
                                         Grouped(m->global_batch),
                                         EstimateCommand(result, sc.moe_model, result.moe_seq_length, kinds[i], k,
                                                         moe_best[i]->strategy, true)));
    }
    if (m->alltoall_gpus > 0) {
      const double base = m->alltoall_rail_optimized_s;
      const std::string opt_time = Seconds(base), ideal_time = Seconds(m->alltoall_ideal_s);
      table.Row("all-to-all, forwarding in sequence",
                {opt_time, fmt::format("{} ({})", Seconds(m->alltoall_sequential_s), Change(m->alltoall_sequential_s / base)),
                 ideal_time});
      table.Row("all-to-all, forwarding pipelined",
                {opt_time, fmt::format("{} ({})", Seconds(m->alltoall_pipelined_s), Change(m->alltoall_pipelined_s / base)),
                 ideal_time});
    }
  }
  return out;
}

namespace {

std::string HbDomainTable(const study::CompareResult& result, int64_t k) {
  const SideBySideTable side = CompareSideBySide(result, k);
  TextTable t;
  t.AddColumn("", TextTable::Align::kLeft);
  for (const std::string& h : side.columns) t.AddColumn(h);
  for (const SideBySideTable::Row& row : side.rows) {
    t.AddRow({row.section ? row.label : "  " + row.label, row.cells[0], row.cells[1], row.cells[2]});
  }
  std::string commands;
  if (!side.commands.empty()) commands = "each best strategy as the estimate that times it:\n";
  for (const std::string& c : side.commands) commands += "  " + c + "\n";
  return "\n" + side.title + "\n" + t.Render() + commands;
}

Json MoeJson(const study::CompareResult& result) {
  const spec::Scenario& sc = result.scenario;
  Json moe;
  moe["model"] = result.moe_model_name;
  moe["seq_length"] = result.moe_seq_length;
  moe["global_batch_size"] = sc.moe_global_batch_size;
  moe["max_domains"] = sc.moe_max_domains;
  moe["overlap"] = sc.moe_overlap;
  moe["cases"] = Json::array();
  for (const study::MoeCase& m : result.moe) {
    Json c;
    c["hb_domain_size"] = m.hb_domain_size;
    c["system"] = result.SystemNameFor(int(m.hb_domain_size));
    if (sc.GpusPerDomain(m.hb_domain_size) < m.hb_domain_size) {
      c["gpus_per_domain"] = sc.GpusPerDomain(m.hb_domain_size);
      c["job_gpus"] = sc.JobGpus(m.hb_domain_size);
    }
    auto search = [&](const study::BestStrategy& b, comm::NetworkKind kind) {
      Json a;
      a["fits"] = b.fits;
      if (b.fits) {
        a["iteration_time_s"] = b.time_s();
        a["mfu"] = b.best.estimate.mfu;
        a["strategy"] = StrategyObject(b.best.strategy);
        a["estimate_command"] = EstimateCommand(result, sc.moe_model, result.moe_seq_length, kind, m.hb_domain_size,
                                                b.best.strategy, true);
      }
      return a;
    };
    for (const study::MoeOnNetwork* on : {&m.rail_optimized, &m.rail_only}) {
      Json j;
      for (spec::MoeAllToAll a : study::kMoeAlgorithms) j[spec::MoeAllToAllName(a)] = search(on->of(a), on->kind);
      c[on == &m.rail_optimized ? "rail_optimized" : "rail_only"] = j;
    }
    c["ideal"] = search(m.ideal, comm::NetworkKind::kIdeal);
    if (m.rail_optimized.found() && m.rail_only.found()) c["rail_only_overhead"] = MoeOverhead(m);
    Json saved = Json::array();
    for (auto [radix, usd] : CostSaved(result, m.hb_domain_size)) {
      saved.push_back({{"radix", radix}, {"network_cost_saved_usd", usd}});
    }
    c["network_cost_saved"] = saved;
    Json sweep = Json::array();
    for (const study::MoeSweepPoint& p : m.ep_sweep) {
      sweep.push_back({{"ep", p.ep},
                       {"hb_domains", p.domains},
                       {"rail_optimized_direct_s", p.rail_optimized.direct_s},
                       {"rail_optimized_forwarded_s", p.rail_optimized.forwarded_s},
                       {"rail_only_forwarded_s", p.rail_only.forwarded_s},
                       {"rail_only_direct_s", p.rail_only.direct_s},
                       {"overhead_forwarded", p.overhead(spec::MoeAllToAll::kForwarded)},
                       {"overhead_direct", p.overhead(spec::MoeAllToAll::kDirect)}});
    }
    c["ep_sweep"] = sweep;
    if (m.alltoall_gpus > 0) {
      c["alltoall"] = {{"gpus", m.alltoall_gpus},
                       {"bytes_per_pair", m.alltoall_bytes_per_pair},
                       {"rail_optimized_time_s", m.alltoall_rail_optimized_s},
                       {"rail_only_sequential_time_s", m.alltoall_sequential_s},
                       {"rail_only_pipelined_time_s", m.alltoall_pipelined_s},
                       {"ideal_time_s", m.alltoall_ideal_s},
                       {"sequential_overhead", m.alltoall_sequential_s / m.alltoall_rail_optimized_s - 1},
                       {"pipelined_overhead", m.alltoall_pipelined_s / m.alltoall_rail_optimized_s - 1}};
    }
    moe["cases"].push_back(c);
  }
  return moe;
}

}  // namespace

std::string CompareTable(const study::CompareResult& result) {
  std::string text = fmt::format("railsim compare: scenario '{}'\n{}\n", result.scenario.name,
                                 result.scenario.description);
  for (int64_t k : result.scenario.hb_domain_sizes) text += HbDomainTable(result, k);
  text += "\n";
  if (!result.training.empty() || !result.moe.empty()) {
    text += Wrap("strategy: degrees of tensor, pipeline, data, context (expert, virtual-stage) parallelism; \"-\": "
                 "the ideal network has no NIC network to buy.",
                 100, "");
  }
  std::vector<std::string> servers;
  for (int k : result.scenario.hb_domain_sizes) {
    const spec::ServerClass* server = result.ServerFor(k);
    if (server && std::find(servers.begin(), servers.end(), server->name) == servers.end()) {
      servers.push_back(server->name);
    }
  }
  if (!servers.empty() && !result.training.empty()) {
    const spec::OperatingCost& o = result.operating;
    text += Wrap(fmt::format("cost per PFLOP/s-day: a day of the whole cluster ({} servers, the switches joining "
                             "them into larger HB domains, and the network: the price over {:g} years, plus its "
                             "power x PUE {:g} at ${:g}/kWh; the catalog's assumptions) over the model PFLOP/s the "
                             "best strategy delivers.",
                             fmt::join(servers, " or "), o.lifetime_years, o.pue, o.electricity_usd_per_kwh),
                 100, "");
  }
  if (!result.moe.empty()) {
    const spec::Scenario& sc = result.scenario;
    std::vector<std::string> all_to_all;
    for (const study::MoeCase& m : result.moe) {
      if (m.alltoall_gpus == 0) continue;
      all_to_all.push_back(fmt::format("{} GPUs x {} per pair at HB domain {}", Grouped(m.alltoall_gpus),
                                       DecimalBytes(m.alltoall_bytes_per_pair), m.hb_domain_size));
    }
    std::vector<std::string> untimed;
    for (const study::MoeCase& m : result.moe) {
      if (m.alltoall_gpus == 0) untimed.push_back(std::to_string(m.hb_domain_size));
    }
    std::string note = fmt::format("{}: {}{}", result.moe_model_name,
                                   sc.moe_max_domains > 0
                                       ? fmt::format("tokens reach at most {} HB domains", sc.moe_max_domains)
                                       : std::string("no node limit"),
                                   sc.moe_overlap ? ", dispatch overlapped with compute" : "");
    if (!all_to_all.empty()) {
      note += fmt::format("; all-to-all: one sequence's dispatch as a uniform all-to-all, as railsim alltoall "
                          "times it ({})",
                          fmt::join(all_to_all, ", "));
    }
    if (!untimed.empty()) {
      note += fmt::format("; no uniform all-to-all at HB domain {}: it runs one expert per GPU over max(experts, K) "
                          "GPUs, which needs the {} experts and K to divide one another and the cluster to hold them",
                          fmt::join(untimed, ", "), result.moe_experts);
    }
    text += Wrap(note + ".", 100, "");
  }
  text += "Fat-tree is in --format json and railsim cost.\n\nVerdict\n";
  for (const std::string& line : CompareVerdict(result)) text += Wrap("- " + line, 100, "  ");
  return text;
}

std::string CompareCsv(const study::CompareResult& result) {
  CsvTable csv({"hb_domain_size", "section", "row", "rail_optimized", "rail_only", "ideal"});
  for (int64_t k : result.scenario.hb_domain_sizes) {
    std::string section;
    for (const SideBySideTable::Row& row : CompareSideBySide(result, k).rows) {
      if (row.section) {
        section = row.label;
        continue;
      }
      csv.AddRow({std::to_string(k), section, row.label, row.cells[0], row.cells[1], row.cells[2]});
    }
  }
  return csv.Render();
}

std::string CompareNumbersCsv(const study::CompareResult& result) {
  CsvTable csv({"section", "hb_domain_size", "radix", "global_batch_size", "network", "dispatch", "tiers",
                "switches", "transceivers", "cost_usd", "power_w", "cost_saving", "power_saving",
                "cluster_cost_usd", "network_cost_share", "iteration_time_s", "mfu", "tp", "pp", "dp", "cp", "ep",
                "vp", "micro_batch_size", "gpus_used", "no_fit", "alltoall_s", "usd_per_pflops_day"});
  auto number = [](double x) { return CsvNumber(x); };
  for (const study::NetworkCase& c : result.network) {
    for (const study::DesignResult& d : c.designs) {
      CsvTable::NamedRow r = csv.NewRow();
      r["section"] = "network";
      r["hb_domain_size"] = std::to_string(c.params.hb_domain_size);
      r["radix"] = std::to_string(c.params.radix);
      r["network"] = net::DesignName(d.params.design);
      r["tiers"] = std::to_string(d.bom.tiers);
      r["switches"] = std::to_string(d.bom.switches);
      r["transceivers"] = std::to_string(d.bom.transceivers);
      r["cost_usd"] = number(d.bom.cost_usd);
      r["power_w"] = number(d.bom.power_w);
      r["cost_saving"] = number(d.cost_saving);
      r["power_saving"] = number(d.power_saving);
      if (d.cluster) {
        r["cluster_cost_usd"] = number(d.cluster->cost_usd);
        r["network_cost_share"] = number(d.cluster->network_cost_share);
      }
      csv.AddRow(std::move(r));
    }
  }
  // One job's best strategy on one network (blank time and degrees when
  // nothing fits, with the reason).
  auto job = [&](const char* section, int64_t k, int64_t batch, const char* network, const char* dispatch,
                 const search::RankedStrategy* best, const std::string& no_fit, double usd_per_pflops_day = 0) {
    CsvTable::NamedRow r = csv.NewRow();
    r["section"] = section;
    r["hb_domain_size"] = std::to_string(k);
    r["global_batch_size"] = std::to_string(batch);
    r["network"] = network;
    r["dispatch"] = dispatch;
    if (best) {
      const spec::Strategy& s = best->strategy;
      r["iteration_time_s"] = number(best->estimate.iteration_time_s);
      r["mfu"] = number(best->estimate.mfu);
      r["tp"] = std::to_string(s.tp);
      r["pp"] = std::to_string(s.pp);
      r["dp"] = std::to_string(s.dp);
      r["cp"] = std::to_string(s.cp);
      r["ep"] = std::to_string(s.ep);
      r["vp"] = std::to_string(s.vp);
      r["micro_batch_size"] = std::to_string(s.micro_batch);
      r["gpus_used"] = std::to_string(s.gpus());
      if (usd_per_pflops_day > 0) r["usd_per_pflops_day"] = number(usd_per_pflops_day);
    } else {
      r["no_fit"] = no_fit;
    }
    csv.AddRow(std::move(r));
  };
  for (const study::TrainingCase& t : result.training) {
    for (const study::TrainingOnNetwork* on : t.networks()) {
      job("training", t.hb_domain_size, t.global_batch, comm::NetworkKindName(on->kind), "", on->found(),
          on->why == study::NoFit::kNoLayout ? "no_layout" : "memory", on->usd_per_pflops_day);
    }
  }
  for (const study::MoeCase& m : result.moe) {
    for (spec::MoeAllToAll a : study::kMoeAlgorithms) {
      for (const study::MoeOnNetwork* on : {&m.rail_optimized, &m.rail_only}) {
        job("moe", m.hb_domain_size, m.global_batch, comm::NetworkKindName(on->kind), spec::MoeAllToAllName(a),
            on->of(a).found(), "memory");
      }
    }
    job("moe", m.hb_domain_size, m.global_batch, comm::NetworkKindName(comm::NetworkKind::kIdeal),
        spec::MoeAllToAllName(spec::MoeAllToAll::kForwarded), m.ideal.found(), "memory");
    if (m.alltoall_gpus == 0) continue;
    const std::array<std::pair<const char*, double>, 4> alltoall = {
        std::pair{"rail-optimized", m.alltoall_rail_optimized_s}, {"rail-only", m.alltoall_sequential_s},
        {"rail-only", m.alltoall_pipelined_s}, {"ideal", m.alltoall_ideal_s}};
    const char* schedules[] = {"direct", "forwarded", "forwarded-pipelined", "direct"};
    for (size_t i = 0; i < alltoall.size(); ++i) {
      CsvTable::NamedRow r = csv.NewRow();
      r["section"] = "alltoall";
      r["hb_domain_size"] = std::to_string(m.hb_domain_size);
      r["network"] = alltoall[i].first;
      r["dispatch"] = schedules[i];
      r["gpus_used"] = std::to_string(m.alltoall_gpus);
      r["alltoall_s"] = number(alltoall[i].second);
      csv.AddRow(std::move(r));
    }
  }
  return csv.Render();
}

std::string CompareJson(const study::CompareResult& result) {
  Json doc;
  doc["scenario"] = result.scenario.name;
  if (const spec::ServerClass* server = result.ServerFor(result.scenario.hb_domain_sizes.front())) {
    doc["server"] = server->name;
    doc["operating"] = {{"lifetime_years", result.operating.lifetime_years},
                        {"electricity_usd_per_kwh", result.operating.electricity_usd_per_kwh},
                        {"pue", result.operating.pue}};
  }
  doc["network"] = Json::array();
  for (const study::NetworkCase& c : result.network) {
    Json entry;
    entry["gpus"] = c.params.gpus;
    entry["hb_domain_size"] = c.params.hb_domain_size;
    entry["radix"] = c.params.radix;
    entry["port_speed"] = units::FormatBitRate(c.params.port_speed_Bps);
    entry["designs"] = DesignsArray(c.designs);
    if (const spec::ServerClass* server = result.ServerFor(c.params.hb_domain_size)) {
      entry["server"] = server->name;
      for (size_t i = 0; i < c.designs.size(); ++i) {
        if (!c.designs[i].cluster) continue;
        const study::ClusterCost& cc = *c.designs[i].cluster;
        Json& d = entry["designs"][i];
        d["hb_fabric_cost_usd"] = cc.hb_fabric_cost_usd;
        d["cluster_cost_usd"] = cc.cost_usd;
        d["cluster_power_w"] = cc.power_w;
        d["network_cost_share"] = cc.network_cost_share;
        d["network_power_share"] = cc.network_power_share;
      }
    }
    doc["network"].push_back(entry);
  }
  if (!result.training.empty()) {
    doc["model"] = result.model_name;
    doc["seq_length"] = result.seq_length;
    doc["system"] = result.system_name;
    doc["training"] = Json::array();
    for (const study::TrainingCase& tc : result.training) {
      Json entry;
      entry["hb_domain_size"] = tc.hb_domain_size;
      entry["system"] = result.SystemNameFor(int(tc.hb_domain_size));
      if (result.scenario.GpusPerDomain(tc.hb_domain_size) < tc.hb_domain_size) {
        entry["gpus_per_domain"] = result.scenario.GpusPerDomain(tc.hb_domain_size);
        entry["job_gpus"] = result.scenario.JobGpus(tc.hb_domain_size);
      }
      entry["global_batch_size"] = tc.global_batch;
      entry["feasible"] = tc.feasible;
      entry["network_timed"] = {{"radix", tc.rail_optimized.shape.radix},
                                {"oversubscription", tc.rail_optimized.shape.oversubscription},
                                {"rail_optimized_tiers", tc.rail_optimized.shape.tiers},
                                {"rail_only_tiers", tc.rail_only.shape.tiers}};
      for (const study::TrainingOnNetwork* on : tc.networks()) {
        std::string name = comm::NetworkKindName(on->kind);  // the JSON key: rail_optimized
        std::replace(name.begin(), name.end(), '-', '_');
        if (!on->fits) {
          entry[name + "_no_fit"] = on->why == study::NoFit::kNoLayout ? "no_layout" : "memory";
          continue;
        }
        entry[name + "_iteration_time_s"] = on->time_s();
        entry[name + "_mfu"] = on->best.estimate.mfu;
        if (on->usd_per_pflops_day > 0) entry[name + "_usd_per_pflops_day"] = on->usd_per_pflops_day;
        entry[name + "_strategy"] = StrategyObject(on->best.strategy);
        entry[name + "_estimate_command"] = EstimateCommand(result, result.scenario.model, result.seq_length, on->kind,
                                                            tc.hb_domain_size, on->best.strategy);
      }
      if (const std::string why = NoFitSentence(result, tc); !why.empty()) entry["no_fit_reason"] = why;
      doc["training"].push_back(entry);
    }
  }
  if (!result.moe.empty()) doc["moe"] = MoeJson(result);
  if (result.shared_cluster) doc["shared_cluster"] = nlohmann::ordered_json::parse(ClusterJson(*result.shared_cluster));
  doc["verdict"] = CompareVerdict(result);
  doc["notes"] = result.notes;
  return doc.dump(2) + "\n";
}

}  // namespace railsim::report
