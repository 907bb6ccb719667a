// What compare's table, verdict and JSON read from a CompareResult alike
// (report/compare_cases.h).
#include "railsim/report/compare_cases.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/units.h"
#include "railsim/report/table.h"

namespace railsim::report {

const study::DesignResult* DesignOf(const study::NetworkCase& c, net::Design design) {
  for (const study::DesignResult& d : c.designs) {
    if (d.params.design == design) return &d;
  }
  return nullptr;
}

std::vector<const study::NetworkCase*> CasesAt(const study::CompareResult& result, int64_t k) {
  std::vector<const study::NetworkCase*> out;
  for (const study::NetworkCase& c : result.network) {
    if (c.params.hb_domain_size == k) out.push_back(&c);
  }
  return out;
}

const study::MoeCase* MoeAt(const study::CompareResult& result, int64_t k) {
  for (const study::MoeCase& m : result.moe) {
    if (m.hb_domain_size == k) return &m;
  }
  return nullptr;
}

std::string NoFitSentence(const study::CompareResult& result, const study::TrainingCase& t) {
  std::vector<std::string> layout, memory;
  for (const study::TrainingOnNetwork* on : t.networks()) {
    if (on->fits) continue;
    const char* name = on->kind == comm::NetworkKind::kRailOptimized ? "rail-optimized"
                       : on->kind == comm::NetworkKind::kRailOnly    ? "Rail-only"
                                                                     : "the ideal network";
    (on->why == study::NoFit::kNoLayout ? layout : memory).push_back(name);
  }
  auto networks = [](const std::vector<std::string>& names) {
    return names.size() == 3 ? std::string("any network") : fmt::format("{}", fmt::join(names, " and "));
  };
  const int64_t n = result.scenario.gpus, idle = result.scenario.allow_idle_gpus;
  std::string text;
  if (!layout.empty()) {
    text = fmt::format("no strategy uses all {} GPUs{} at batch {} on {}: {} = {}", Grouped(n),
                       idle > 0 ? fmt::format(" (or all but up to {})", Grouped(idle)) : "",
                       Grouped(t.global_batch), networks(layout), Grouped(n), PrimeFactors(n));
    std::vector<std::string> tries;
    if (idle == 0) tries.push_back("--allow-idle-gpus");
    if (t.nearby.above > 0) tries.push_back(Grouped(t.nearby.above) + " GPUs");
    if (t.nearby.below > 0) tries.push_back(Grouped(t.nearby.below) + " GPUs");
    if (!tries.empty()) text += fmt::format("; try {}", fmt::join(tries, " or "));
  }
  if (!memory.empty()) {
    text += fmt::format("{}no layout of {} at batch {} fits in the GPUs' memory on {}", text.empty() ? "" : "; ",
                        result.model_name, Grouped(t.global_batch), networks(memory));
  }
  return text;
}

std::string Change(double ratio) { return fmt::format("{:+.1f}%", 100 * (ratio - 1)); }

double MoeOverhead(const study::MoeCase& m) {
  const search::RankedStrategy *opt = m.rail_optimized.found(), *only = m.rail_only.found();
  if (!opt || !only) return 0;
  return only->estimate.iteration_time_s / opt->estimate.iteration_time_s - 1;
}

}  // namespace railsim::report
