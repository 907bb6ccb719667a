#include "railsim/study/compare.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"

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

CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class,
                         const spec::ModelSpec* model, const spec::SystemSpec* system, int threads,
                         const perf::NetworkOptions& timed) {
  CompareResult result;
  result.scenario = scenario;
  for (const net::TopologyParams& p : Cases(scenario)) {
    result.network.push_back({p, CompareDesigns(p, port_class)});
  }
  if (!model || !system) return result;
  result.model_name = model->name;
  result.system_name = system->name;
  for (int k : scenario.hb_domain_sizes) {
    for (int64_t batch : scenario.global_batch_sizes) {
      TrainingCase t;
      t.hb_domain_size = k;
      t.global_batch = batch;
      t.feasible = true;
      auto best = [&](comm::NetworkKind network, search::RankedStrategy* out) {
        perf::PerfContext c = perf::MakePerfContext(*model, *system, scenario.gpus, network, k, timed);
        if (network == comm::NetworkKind::kRailOptimized) t.rail_optimized_network = c.shape;
        if (network == comm::NetworkKind::kRailOnly) t.rail_only_network = c.shape;
        search::SearchOptions o;
        o.global_batch = batch;
        o.top_k = 1;
        o.threads = threads;
        search::SearchResult r = search::Search(c, o);
        if (r.results.empty()) t.feasible = false;
        else *out = r.results[0];
      };
      best(comm::NetworkKind::kRailOptimized, &t.rail_optimized);
      best(comm::NetworkKind::kRailOnly, &t.rail_only);
      best(comm::NetworkKind::kIdeal, &t.ideal);
      result.training.push_back(t);
    }
  }
  return result;
}

}  // namespace railsim::study
