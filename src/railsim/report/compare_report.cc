#include "railsim/report/compare_report.h"

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/network_report.h"
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
  return doc.dump(2) + "\n";
}

}  // namespace railsim::report
