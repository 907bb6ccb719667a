#include "railsim/study/compare.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"

namespace railsim::study {
namespace {

std::vector<net::TopologyParams> Cases(const spec::Scenario& s) {
  std::vector<net::TopologyParams> cases;
  for (int k : s.hb_domain_sizes) {
    for (int radix : s.radixes) {
      net::TopologyParams p;
      p.gpus = s.gpus;
      p.hb_domain_size = k;
      p.radix = radix;
      p.port_speed_Bps = s.port_speed_Bps;
      p.oversubscription = s.oversubscription;
      cases.push_back(p);
    }
  }
  return cases;
}

}  // namespace

void ValidateScenarioNetworks(const spec::Scenario& scenario) {
  for (const net::TopologyParams& p : Cases(scenario)) {
    try {
      net::ValidateTopologyParams(p);
    } catch (const Error& e) {
      throw Error(fmt::format("scenario '{}' (hb_domain_size {}, radix {})", scenario.name,
                              p.hb_domain_size, p.radix),
                  e.message());
    }
  }
}

CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class) {
  CompareResult result;
  result.scenario = scenario;
  for (const net::TopologyParams& p : Cases(scenario)) {
    result.network.push_back({p, CompareDesigns(p, port_class)});
  }
  return result;
}

}  // namespace railsim::study
