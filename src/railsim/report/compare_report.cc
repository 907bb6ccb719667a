#include "railsim/report/compare_report.h"

#include <fmt/format.h>

#include "railsim/core/units.h"
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
  for (const study::NetworkCase& c : result.network) {
    if (c.params.hb_domain_size != k) continue;
    double opt = 0, only = 0;
    for (const study::DesignResult& d : c.designs) {
      if (d.params.design == net::Design::kRailOptimized) opt = d.bom.cost_usd;
      if (d.params.design == net::Design::kRailOnly) only = d.bom.cost_usd;
    }
    out.push_back({c.params.radix, opt - only});
  }
  return out;
}

const char* kMoeAlgorithms[] = {"forwarded", "direct"};

std::string MoeTable(const study::CompareResult& result) {
  const spec::Scenario& sc = result.scenario;
  std::string text = fmt::format(
      "\nMoE: {} on {} x {}, global batch {}, {}{}, best strategy per network and dispatch algorithm\n",
      result.moe_model_name, Grouped(sc.gpus), result.system_name, Grouped(sc.moe_global_batch_size),
      sc.moe_max_domains > 0 ? fmt::format("tokens reach at most {} HB domains", sc.moe_max_domains)
                             : std::string("no node limit"),
      sc.moe_overlap ? ", dispatch overlapped with compute" : "");
  TextTable t;
  for (const char* h : {"HB domain", "rail-opt forwarded", "rail-opt direct", "rail-only forwarded",
                        "rail-only direct", "rail-only vs rail-opt", "rail-only strategy"}) {
    t.AddColumn(h, std::string(h) == "rail-only strategy" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  }
  auto time = [](const std::array<search::RankedStrategy, 2>& r, const std::array<bool, 2>& fits, int i) {
    return fits[size_t(i)] ? fmt::format("{:.3f} s", r[size_t(i)].estimate.iteration_time_s) : std::string("no fit");
  };
  std::vector<std::string> verdicts;
  for (const study::MoeCase& m : result.moe) {
    const int opt = m.best_rail_optimized(), only = m.best_rail_only();
    std::string overhead, strategy;
    if (opt >= 0 && only >= 0) {
      const double t_opt = m.rail_optimized[size_t(opt)].estimate.iteration_time_s;
      const double t_only = m.rail_only[size_t(only)].estimate.iteration_time_s;
      overhead = fmt::format("{:+.1f}%", 100 * (t_only / t_opt - 1));
      strategy = StrategyLine(m.rail_only[size_t(only)].strategy);
      std::vector<std::string> savings;
      for (auto [radix, usd] : CostSaved(result, m.hb_domain_size)) {
        savings.push_back(fmt::format("{} at radix {}", Dollars(usd), radix));
      }
      verdicts.push_back(fmt::format(
          "HB domain {}: Rail-only costs {:+.1f}% iteration time on this MoE job (its best, {} dispatch, against "
          "rail-optimized's best, {}) and saves {} of network.",
          m.hb_domain_size, 100 * (t_only / t_opt - 1), kMoeAlgorithms[only], kMoeAlgorithms[opt],
          fmt::join(savings, ", ")));
    }
    t.AddRow({std::to_string(m.hb_domain_size), time(m.rail_optimized, m.rail_optimized_fits, 0),
              time(m.rail_optimized, m.rail_optimized_fits, 1), time(m.rail_only, m.rail_only_fits, 0),
              time(m.rail_only, m.rail_only_fits, 1), overhead, strategy});
  }
  text += t.Render();
  for (const std::string& v : verdicts) text += v + "\n";
  for (const study::MoeCase& m : result.moe) {
    if (m.alltoall_gpus == 0) continue;
    text += fmt::format(
        "HB domain {}: one sequence's dispatch as a uniform all-to-all over {} GPUs ({} per pair, railsim "
        "alltoall): rail-optimized {}, Rail-only forwarded {} ({:+.1f}%) in sequence, {} ({:+.1f}%) pipelined.\n",
        m.hb_domain_size, Grouped(m.alltoall_gpus), DecimalBytes(m.alltoall_bytes_per_pair),
        Seconds(m.alltoall_rail_optimized_s), Seconds(m.alltoall_sequential_s),
        100 * (m.alltoall_sequential_s / m.alltoall_rail_optimized_s - 1), Seconds(m.alltoall_pipelined_s),
        100 * (m.alltoall_pipelined_s / m.alltoall_rail_optimized_s - 1));
  }
  for (const study::MoeCase& m : result.moe) {
    text += fmt::format("\nOne {} layer's dispatch of one sequence (tp 1), HB domain {}: Rail-only against "
                        "rail-optimized's direct dispatch\n",
                        result.moe_model_name, m.hb_domain_size);
    TextTable sweep;
    for (const char* h : {"EP", "HB domains", "rail-opt direct", "rail-opt forwarded", "rail-only forwarded",
                          "rail-only direct", "overhead forwarded", "overhead direct"}) {
      sweep.AddColumn(h);
    }
    for (const study::MoeSweepPoint& p : m.ep_sweep) {
      sweep.AddRow({std::to_string(p.ep), std::to_string(p.domains), Seconds(p.time_s[0][1]), Seconds(p.time_s[0][0]),
                    Seconds(p.time_s[1][0]), Seconds(p.time_s[1][1]), fmt::format("{:+.1f}%", 100 * p.overhead(0)),
                    fmt::format("{:+.1f}%", 100 * p.overhead(1))});
    }
    text += sweep.Render();
  }
  return text;
}

Json MoeJson(const study::CompareResult& result) {
  const spec::Scenario& sc = result.scenario;
  Json moe;
  moe["model"] = result.moe_model_name;
  moe["global_batch_size"] = sc.moe_global_batch_size;
  moe["max_domains"] = sc.moe_max_domains;
  moe["overlap"] = sc.moe_overlap;
  moe["cases"] = Json::array();
  for (const study::MoeCase& m : result.moe) {
    Json c;
    c["hb_domain_size"] = m.hb_domain_size;
    auto network = [&](const std::array<search::RankedStrategy, 2>& r, const std::array<bool, 2>& fits) {
      Json j;
      for (int i = 0; i < 2; ++i) {
        Json a;
        a["fits"] = fits[size_t(i)];
        if (fits[size_t(i)]) {
          a["iteration_time_s"] = r[size_t(i)].estimate.iteration_time_s;
          a["mfu"] = r[size_t(i)].estimate.mfu;
          a["strategy"] = StrategyObject(r[size_t(i)].strategy);
        }
        j[kMoeAlgorithms[i]] = a;
      }
      return j;
    };
    c["rail_optimized"] = network(m.rail_optimized, m.rail_optimized_fits);
    c["rail_only"] = network(m.rail_only, m.rail_only_fits);
    const int opt = m.best_rail_optimized(), only = m.best_rail_only();
    if (opt >= 0 && only >= 0) {
      c["rail_only_overhead"] = m.rail_only[size_t(only)].estimate.iteration_time_s /
                                    m.rail_optimized[size_t(opt)].estimate.iteration_time_s -
                                1;
    }
    Json saved = Json::array();
    for (auto [radix, usd] : CostSaved(result, m.hb_domain_size)) {
      saved.push_back({{"radix", radix}, {"network_cost_saved_usd", usd}});
    }
    c["network_cost_saved"] = saved;
    Json sweep = Json::array();
    for (const study::MoeSweepPoint& p : m.ep_sweep) {
      sweep.push_back({{"ep", p.ep},
                       {"hb_domains", p.domains},
                       {"rail_optimized_direct_s", p.time_s[0][1]},
                       {"rail_optimized_forwarded_s", p.time_s[0][0]},
                       {"rail_only_forwarded_s", p.time_s[1][0]},
                       {"rail_only_direct_s", p.time_s[1][1]},
                       {"overhead_forwarded", p.overhead(0)},
                       {"overhead_direct", p.overhead(1)}});
    }
    c["ep_sweep"] = sweep;
    if (m.alltoall_gpus > 0) {
      c["alltoall"] = {{"gpus", m.alltoall_gpus},
                       {"bytes_per_pair", m.alltoall_bytes_per_pair},
                       {"rail_optimized_time_s", m.alltoall_rail_optimized_s},
                       {"rail_only_sequential_time_s", m.alltoall_sequential_s},
                       {"rail_only_pipelined_time_s", m.alltoall_pipelined_s},
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
  for (const study::NetworkCase& c : result.network) {
    text += fmt::format("\n{} GPUs, HB domain {}, radix {} x {}\n", Grouped(c.params.gpus),
                        c.params.hb_domain_size, c.params.radix,
                        units::FormatBitRate(c.params.port_speed_Bps));
    text += CostTable(c.designs);
  }
  if (result.training.empty()) return result.moe.empty() ? text : text + MoeTable(result);
  text += fmt::format("\nTraining: {} on {} x {}, best strategy per network (railsim search)\n",
                      result.model_name, Grouped(result.scenario.gpus), result.system_name);
  TextTable t;
  for (const char* h : {"HB domain", "batch", "rail-optimized", "rail-only", "ideal (K = N)",
                        "rail-only vs rail-opt", "rail-only vs ideal", "rail-only strategy"}) {
    t.AddColumn(h, std::string(h) == "rail-only strategy" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  }
  for (const study::TrainingCase& tc : result.training) {
    if (!tc.feasible) {
      t.AddRow({std::to_string(tc.hb_domain_size), Grouped(tc.global_batch), "no fit", "no fit", "no fit", "",
                "", ""});
      continue;
    }
    double only = tc.rail_only.estimate.iteration_time_s;
    double opt = tc.rail_optimized.estimate.iteration_time_s;
    double ideal = tc.ideal.estimate.iteration_time_s;
    t.AddRow({std::to_string(tc.hb_domain_size), Grouped(tc.global_batch), fmt::format("{:.3f} s", opt),
              fmt::format("{:.3f} s", only), fmt::format("{:.3f} s", ideal),
              fmt::format("{:+.1f}%", 100 * (only / opt - 1)), Percent(ideal / only),
              StrategyLine(tc.rail_only.strategy)});
  }
  text += t.Render();
  if (!result.moe.empty()) text += MoeTable(result);
  return text;
}

std::string CompareJson(const study::CompareResult& result) {
  Json doc;
  doc["scenario"] = result.scenario.name;
  doc["network"] = Json::array();
  for (const study::NetworkCase& c : result.network) {
    Json entry;
    entry["gpus"] = c.params.gpus;
    entry["hb_domain_size"] = c.params.hb_domain_size;
    entry["radix"] = c.params.radix;
    entry["port_speed"] = units::FormatBitRate(c.params.port_speed_Bps);
    entry["designs"] = DesignsArray(c.designs);
    doc["network"].push_back(entry);
  }
  if (!result.training.empty()) {
    doc["model"] = result.model_name;
    doc["system"] = result.system_name;
    doc["training"] = Json::array();
    for (const study::TrainingCase& tc : result.training) {
      Json entry;
      entry["hb_domain_size"] = tc.hb_domain_size;
      entry["global_batch_size"] = tc.global_batch;
      entry["feasible"] = tc.feasible;
      entry["network_timed"] = {{"radix", tc.rail_optimized_network.radix},
                                {"oversubscription", tc.rail_optimized_network.oversubscription},
                                {"rail_optimized_tiers", tc.rail_optimized_network.tiers},
                                {"rail_only_tiers", tc.rail_only_network.tiers}};
      if (tc.feasible) {
        entry["rail_optimized_iteration_time_s"] = tc.rail_optimized.estimate.iteration_time_s;
        entry["rail_only_iteration_time_s"] = tc.rail_only.estimate.iteration_time_s;
        entry["ideal_iteration_time_s"] = tc.ideal.estimate.iteration_time_s;
        entry["rail_only_mfu"] = tc.rail_only.estimate.mfu;
      }
      doc["training"].push_back(entry);
    }
  }
  if (!result.moe.empty()) doc["moe"] = MoeJson(result);
  return doc.dump(2) + "\n";
}

}  // namespace railsim::report
