#include "railsim/study/idle_search.h"

#include <algorithm>

#include "railsim/core/error.h"
#include "railsim/spec/strategy.h"

namespace railsim::study {
namespace {

perf::PerfContext Resized(const perf::PerfContext& c, int64_t gpus) {
  perf::NetworkOptions net = {c.shape.radix, c.shape.oversubscription,
                              c.domain_use.whole() ? 0 : c.domain_use.used};
  perf::PerfContext r = perf::MakePerfContext(c.model, c.system, gpus, c.fabrics.network, c.domain_use.size, net);
  r.placement = c.placement;
  r.fabrics.rail_leaves = c.fabrics.rail_leaves;
  return r;
}

}  // namespace

std::vector<perf::PerfContext> IdleGpuContexts(const perf::PerfContext& c, int64_t idle_gpus) {
  std::vector<perf::PerfContext> contexts = {c};
  const int64_t k = c.fabrics.hb_domain_size;
  for (int64_t n = c.gpus - k; idle_gpus > 0 && n >= c.gpus - idle_gpus && n >= k; n -= k) {
    contexts.push_back(Resized(c, n));
  }
  return contexts;
}

int64_t CountStrategiesAllowingIdle(const perf::PerfContext& c, const search::SearchOptions& o, int64_t idle_gpus) {
  int64_t count = 0;
  for (const perf::PerfContext& x : IdleGpuContexts(c, idle_gpus)) count += search::CountStrategies(x, o);
  return count;
}

search::SearchResult SearchAllowingIdle(const perf::PerfContext& c, const search::SearchOptions& o,
                                        int64_t idle_gpus) {
  search::SearchResult r;
  bool first = true;
  for (const perf::PerfContext& x : IdleGpuContexts(c, idle_gpus)) {
    search::SearchResult more = search::Search(x, o);
    if (first) {
      r = more;
      first = false;
      continue;
    }
    r.candidates += more.candidates;
    r.evaluated += more.evaluated;
    r.pruned += more.pruned;
    r.elapsed_s += more.elapsed_s;
    r.results.insert(r.results.end(), more.results.begin(), more.results.end());
  }
  std::sort(r.results.begin(), r.results.end(), search::RanksBefore);
  if (int64_t(r.results.size()) > o.top_k) r.results.resize(size_t(o.top_k));
  r.idle_gpus_allowed = idle_gpus;
  return r;
}

search::SearchResult SearchSegments(const std::vector<perf::PerfContext>& contexts, const search::SearchOptions& o,
                                    int64_t idle_gpus) {
  search::SearchResult r = SearchAllowingIdle(contexts.front(), o, idle_gpus);
  if (contexts.size() == 1) return r;
  r.gpus_per_domain_tried.push_back(contexts.front().domain_use.used);
  for (size_t i = 1; i < contexts.size(); ++i) {
    search::SearchResult more = SearchAllowingIdle(contexts[i], o, idle_gpus);
    r.candidates += more.candidates;
    r.evaluated += more.evaluated;
    r.pruned += more.pruned;
    r.elapsed_s += more.elapsed_s;
    r.results.insert(r.results.end(), more.results.begin(), more.results.end());
    r.gpus_per_domain_tried.push_back(contexts[i].domain_use.used);
  }
  std::sort(r.results.begin(), r.results.end(), search::RanksBefore);
  if (int64_t(r.results.size()) > o.top_k) r.results.resize(size_t(o.top_k));
  return r;
}

NoFit WhyNothingFits(const search::SearchResult& r) {
  return r.candidates == 0 ? NoFit::kNoLayout : NoFit::kMemory;
}

NearbyGpus NearestUsableGpus(const perf::PerfContext& c, const search::SearchOptions& o, int steps) {
  NearbyGpus out;
  const int64_t k = c.fabrics.hb_domain_size;
  // The nearest multiples of K on either side (c.gpus itself may not be one).
  const int64_t floor_k = (c.gpus - 1) / k * k, ceil_k = (c.gpus / k + 1) * k;
  auto usable = [&](int64_t n) {
    try {
      return search::CountStrategies(Resized(c, n), o) > 0;
    } catch (const Error&) {
      return false;  // the network cannot be built at this size with the radix given
    }
  };
  for (int i = 0; i < steps && out.below == 0; ++i) {
    const int64_t n = floor_k - i * k;
    if (n < k) break;
    if (usable(n)) out.below = n;
  }
  for (int i = 0; i < steps && out.above == 0; ++i) {
    const int64_t n = ceil_k + i * k;
    if (n > spec::kMaxModelGpus) break;
    if (usable(n)) out.above = n;
  }
  return out;
}

}  // namespace railsim::study
