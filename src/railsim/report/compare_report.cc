#include "railsim/report/compare_report.h"

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/network_report.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {

std::string CompareTable(const study::CompareResult& result) {
  std::string text = fmt::format("railsim compare: scenario '{}'\n{}\n", result.scenario.name,
                                 result.scenario.description);
  for (const study::NetworkCase& c : result.network) {
    text += fmt::format("\n{} GPUs, HB domain {}, radix {} x {}\n", Grouped(c.params.gpus),
                        c.params.hb_domain_size, c.params.radix,
                        units::FormatBitRate(c.params.port_speed_Bps));
    text += CostTable(c.designs);
  }
  if (result.training.empty()) return text;
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
  return text + t.Render();
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
  return doc.dump(2) + "\n";
}

}  // namespace railsim::report
