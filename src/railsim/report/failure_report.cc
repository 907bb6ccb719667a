#include "railsim/report/failure_report.h"

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/perf/model_stats.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

std::string Rate(double bytes_per_s) { return units::FormatByteRate(bytes_per_s); }

// "20 min", "5 min", "1.5 h", "30 s".
std::string Minutes(double s) {
  if (s >= 3600) return fmt::format("{:g} h", s / 3600);
  if (s >= 60) return fmt::format("{:g} min", s / 60);
  return fmt::format("{:g} s", s);
}

double Fraction(const study::TierCapacity& t) { return t.before_Bps > 0 ? t.after_Bps / t.before_Bps : 1; }

std::string Header(const FailureRun& run) {
  const study::ClusterSetup& s = *run.setup;
  const int64_t k = s.hb_domain_size > 0 ? s.hb_domain_size : s.system.hb_domain_size;
  std::string out = fmt::format("{} x {} (HB domain {}), NIC network radix {}\n", Grouped(s.gpus), s.system.name,
                                k, run.radix);
  const int64_t used = s.network.gpus_per_domain;
  if (used > 0 && used < k) {
    out += fmt::format("GPUs: {}; a failure of an idle GPU does not stop the job\n", DomainUseLine(s.gpus, used, k));
  }
  if (s.model) out += fmt::format("job: {}, {}\n", ModelLine(*s.model), StrategyLine(s.strategy));
  return out;
}

Json IntList(const std::vector<int64_t>& v) {
  Json j = Json::array();
  for (int64_t x : v) j.push_back(x);
  return j;
}

Json ImpactObject(const study::FailureImpact& r) {
  Json j;
  j["design"] = net::DesignName(r.design);
  j["devices"] = r.devices;
  j["spare_policy"] = study::SparePolicyName(r.policy);
  j["interrupts"] = r.interrupts;
  j["gpus_removed"] = int64_t(r.removed.size());
  j["gpus_disconnected"] = int64_t(r.disconnected.size());
  j["gpus_rerouted"] = int64_t(r.rerouted.size());
  j["gpus_unreachable"] = r.unreachable;
  j["hb_domains_partitioned"] = r.partitioned_domains;
  j["gpus_degraded"] = int64_t(r.degraded.size());
  j["gpu_lists"] = {{"removed", IntList(r.removed)},
                    {"disconnected", IntList(r.disconnected)},
                    {"rerouted", IntList(r.rerouted)},
                    {"degraded", IntList(r.degraded)}};
  Json bw;
  bw["nic_per_gpu_Bps"] = r.nic_bw_Bps;
  bw["per_affected_gpu_Bps"] = r.affected_gpu_bw_Bps;
  bw["max_forwarder_load"] = r.max_forwarder_load;
  bw["worst_uplink_fraction"] = r.switches_without_uplinks > 0 ? 0.0 : r.worst_uplink_fraction;
  bw["switches_without_uplinks"] = r.switches_without_uplinks;
  for (int t = 0; t < std::min(r.tiers_built + 1, study::kNetworkTiers); ++t) {
    const study::TierCapacity& tier = r.tiers[size_t(t)];
    bw[study::NetworkTierName(t)] = {
        {"before_Bps", tier.before_Bps}, {"after_Bps", tier.after_Bps}, {"fraction", Fraction(tier)}};
  }
  j["bandwidth_remaining"] = bw;
  if (r.has_job) {
    j["iteration_time_s_before"] = r.iteration_time_s_before;
    j["iteration_time_s_after"] = r.iteration_time_s_after;
  }
  if (r.check) {
    const study::CollectiveCheck& c = *r.check;
    j["collective_check"] = {{"collective", c.name},
                             {"analytic_s_before", c.analytic_before_s},
                             {"analytic_s_after", c.analytic_after_s},
                             {"simulated_s_before", c.simulated_before_s},
                             {"simulated_s_after", c.simulated_after_s},
                             {"flows_simulated", c.flows},
                             {"flows_unroutable", c.flows_unroutable}};
  }
  return j;
}

Json MonteCarloObject(const study::MonteCarloResult& r) {
  Json j;
  j["design"] = net::DesignName(r.design);
  j["spare_policy"] = study::SparePolicyName(r.policy);
  j["interruptions_mean"] = r.interruptions_mean;
  j["interruptions_ci95"] = r.interruptions_ci95;
  j["interruptions_p05"] = r.interruptions_p05;
  j["interruptions_p95"] = r.interruptions_p95;
  j["gpu_hours_lost_mean"] = r.gpu_hours_lost_mean;
  j["goodput"] = r.goodput;
  j["spares_needed"] = r.spares_needed;
  j["spare_domains"] = r.spare_domains;
  j["network_share"] = r.network_share;
  j["slowdowns_timed"] = r.slowdowns_timed;
  if (r.policy == study::SparePolicy::kOcs) {
    j["ocs"] = {{"ports_per_rail_spare", r.ocs_ports_per_rail},
                {"ports", r.ocs_ports},
                {"cost_usd", r.ocs_cost_usd},
                {"power_w", r.ocs_power_w}};
  }
  Json components = Json::array();
  for (const study::ComponentEffect& c : r.components) {
    components.push_back({{"component", c.name},
                          {"count", c.count},
                          {"rate_per_year", c.rate_per_year},
                          {"mttr_hours", c.mttr_hours},
                          {"expected_failures", c.expected_failures},
                          {"interrupts", c.interrupts},
                          {"slowdown", c.slowdown},
                          {"spare_gpus", c.spare_gpus}});
  }
  j["components"] = components;
  return j;
}

std::string ImpactTable(const study::FailureImpact& r) {
  std::string out = fmt::format("{} network, {} down{}\n", net::DesignName(r.design), fmt::join(r.devices, ", "),
                                r.interrupts ? " (interrupts the job)" : " (the job keeps running)");
  TextTable t;
  t.AddColumn("effect", TextTable::Align::kLeft);
  t.AddColumn("value", TextTable::Align::kLeft);
  t.AddRow({"GPUs removed (replaced from spares)",
            fmt::format("{} ({} policy)", Grouped(int64_t(r.removed.size())), study::SparePolicyName(r.policy))});
  t.AddRow({"GPUs off their own NIC path", Grouped(int64_t(r.disconnected.size()))});
  t.AddRow({"  rerouted through their HB domain", Grouped(int64_t(r.rerouted.size()))});
  if (r.unreachable > 0) t.AddRow({"  with no peer to forward (replaced)", Grouped(r.unreachable)});
  t.AddRow({"GPUs with less network bandwidth", Grouped(int64_t(r.degraded.size()))});
  t.AddRow({"NIC bandwidth of the worst affected GPU",
            fmt::format("{} of {} ({})", Rate(r.affected_gpu_bw_Bps), Rate(r.nic_bw_Bps),
                        r.max_forwarder_load == 1 ? std::string("its own NIC, not shared")
                                                  : fmt::format("{} GPUs share a NIC", r.max_forwarder_load))});
  t.AddRow({"narrowest switch keeps",
            r.switches_without_uplinks > 0
                ? fmt::format("0% of its uplinks ({} live switches lost every uplink)", Grouped(r.switches_without_uplinks))
                : Percent(r.worst_uplink_fraction) + " of its uplinks"});
  for (int i = 0; i < std::min(r.tiers_built + 1, study::kNetworkTiers); ++i) {
    const study::TierCapacity& tier = r.tiers[size_t(i)];
    if (tier.before_Bps <= 0) continue;
    t.AddRow({fmt::format("{} capacity left", study::NetworkTierName(i)),
              fmt::format("{} ({})", Percent(Fraction(tier), 2), Rate(tier.after_Bps))});
  }
  if (r.partitioned_domains > 0) {
    t.AddRow({"iteration time after", fmt::format("none: the network no longer joins {} of the HB domains to the "
                                                  "rest (no route, even forwarding)",
                                                  Grouped(r.partitioned_domains))});
  }
  if (r.has_job) {
    t.AddRow({"iteration time before -> after",
              fmt::format("{} -> {} ({:+.2f}%)", Seconds(r.iteration_time_s_before), Seconds(r.iteration_time_s_after),
                          100 * (r.iteration_time_s_after / r.iteration_time_s_before - 1))});
  }
  if (r.check) {
    const study::CollectiveCheck& c = *r.check;
    t.AddRow({"checked: " + c.name, ""});
    t.AddRow({"  analytic before -> after",
              fmt::format("{} -> {}", Seconds(c.analytic_before_s), Seconds(c.analytic_after_s))});
    t.AddRow({"  simulated before -> after",
              fmt::format("{} -> {} ({:+.2f}% vs analytic, {} flows{})", Seconds(c.simulated_before_s),
                          Seconds(c.simulated_after_s), 100 * (c.simulated_after_s / c.analytic_after_s - 1),
                          Grouped(c.flows),
                          c.flows_unroutable ? fmt::format(", {} with no path", Grouped(c.flows_unroutable)) : "")});
  }
  return out + t.Render() + "\n";
}

std::string MonteCarloTable(const FailureRun& run) {
  const study::MonteCarloOptions& o = *run.options;
  std::string out = fmt::format(
      "Monte Carlo: {} trials of a {:g}-day run, seed {}; checkpoint every {}, restart {}; catalog {}\n",
      Grouped(o.trials), o.days, o.seed, Minutes(o.checkpoint_interval_s), Minutes(o.restart_time_s), o.catalog.name);
  TextTable t;
  t.AddColumn("", TextTable::Align::kLeft);
  for (const study::MonteCarloResult& r : run.monte_carlo) t.AddColumn(net::DesignName(r.design));
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> cells = {std::move(label)};
    for (const study::MonteCarloResult& r : run.monte_carlo) cells.push_back(cell(r));
    t.AddRow(std::move(cells));
  };
  row("interruptions (mean)", [](const auto& r) { return fmt::format("{:.1f}", r.interruptions_mean); });
  row("  90% of runs within", [](const auto& r) {
    return fmt::format("{} to {}", r.interruptions_p05, r.interruptions_p95);
  });
  row("  caused by network parts", [](const auto& r) { return Percent(r.network_share); });
  row("GPU-hours lost (mean)", [](const auto& r) { return Grouped(int64_t(r.gpu_hours_lost_mean + 0.5)); });
  row("goodput", [](const auto& r) { return Percent(r.goodput, 2); });
  row("spare policy", [](const auto& r) { return std::string(study::SparePolicyName(r.policy)); });
  row(fmt::format("spare GPUs for {} availability", Percent(o.target_availability, 1)), [](const auto& r) {
    return fmt::format("{} GPUs, in {} whole HB domain{}", Grouped(r.spares_needed), Grouped(r.spare_domains),
                       r.spare_domains == 1 ? "" : "s");
  });
  bool ocs = false;
  for (const auto& r : run.monte_carlo) ocs = ocs || r.policy == study::SparePolicy::kOcs;
  if (ocs) {
    row("OCS spare ports per rail", [](const auto& r) {
      return r.policy == study::SparePolicy::kOcs ? Grouped(r.ocs_ports_per_rail) : std::string("-");
    });
    row("OCS layer cost / power", [](const auto& r) {
      return r.policy == study::SparePolicy::kOcs ? Dollars(r.ocs_cost_usd) + " / " + Watts(r.ocs_power_w)
                                                 : std::string("-");
    });
  }
  out += t.Render();
  // Where the failures come from: one table per design, so that no line
  // runs past 100 columns.
  for (const study::MonteCarloResult& r : run.monte_carlo) {
    TextTable c;
    c.AddColumn(fmt::format("{}: component", net::DesignName(r.design)), TextTable::Align::kLeft);
    c.AddColumn("count");
    c.AddColumn("failures/run");
    c.AddColumn("effect", TextTable::Align::kLeft);
    for (const study::ComponentEffect& e : r.components) {
      std::string effect = e.interrupts ? "interrupts" : "degrades";
      if (e.spare_gpus > 0) effect += fmt::format(", {} spare", e.spare_gpus);
      if (e.slowdown > 1) effect += fmt::format(", x{:.3f}", e.slowdown);
      c.AddRow({e.name, Grouped(e.count), fmt::format("{:.2f}", e.expected_failures), effect});
    }
    out += '\n';
    out += c.Render();
  }
  bool timed = false;
  for (const auto& r : run.monte_carlo) timed = timed || r.slowdowns_timed;
  if (!run.setup->model) {
    out += "degradations are not priced (no --model): give a job to time the slowdown while parts are repaired\n";
  } else if (!timed) {
    out += "no failure kind slows the job while it is repaired\n";
  }
  return out;
}

}  // namespace

std::string FailureTable(const FailureRun& run) {
  std::string out = Header(run) + "\n";
  for (const study::FailureImpact& r : run.explicit_failures) out += ImpactTable(r) + "\n";
  if (!run.monte_carlo.empty()) out += MonteCarloTable(run);
  return out;
}

std::string FailureJson(const FailureRun& run) {
  const study::ClusterSetup& s = *run.setup;
  Json j;
  j["system"] = s.system.name;
  j["gpus"] = s.gpus;
  const int64_t k = s.hb_domain_size > 0 ? s.hb_domain_size : s.system.hb_domain_size;
  j["hb_domain_size"] = k;
  if (s.network.gpus_per_domain > 0 && s.network.gpus_per_domain < k) {
    j["gpus_per_domain"] = s.network.gpus_per_domain;
    j["hb_domains"] = s.gpus / s.network.gpus_per_domain;
    j["idle_gpus_in_domains"] = s.gpus / s.network.gpus_per_domain * (k - s.network.gpus_per_domain);
  }
  j["radix"] = run.radix;
  if (s.model) {
    j["model"] = s.model->name;
    j["seq_length"] = s.model->seq_length;
    j["strategy"] = StrategyObject(s.strategy);
  }
  if (!run.explicit_failures.empty()) {
    Json list = Json::array();
    for (const study::FailureImpact& r : run.explicit_failures) list.push_back(ImpactObject(r));
    j["failures"] = list;
  }
  if (!run.monte_carlo.empty()) {
    const study::MonteCarloOptions& o = *run.options;
    Json mc;
    mc["trials"] = o.trials;
    mc["days"] = o.days;
    mc["seed"] = o.seed;
    mc["checkpoint_interval_s"] = o.checkpoint_interval_s;
    mc["restart_time_s"] = o.restart_time_s;
    mc["target_availability"] = o.target_availability;
    mc["failure_catalog"] = o.catalog.name;
    Json designs = Json::array();
    for (const study::MonteCarloResult& r : run.monte_carlo) designs.push_back(MonteCarloObject(r));
    mc["designs"] = designs;
    j["monte_carlo"] = mc;
  }
  j["notes"] = run.notes;
  return j.dump(2) + "\n";
}

}  // namespace railsim::report
