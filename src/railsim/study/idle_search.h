// Searches that may leave GPUs idle, and why a search found nothing.
//
// A cluster size with few divisors (30,000 = 2^4 x 3 x 5^4) may admit no
// layout that uses every GPU at a given batch. `search`, `compare` and
// `report` can then search the same job on the cluster less whole HB domains
// (--allow-idle-gpus), and say, when nothing is found, whether no layout
// exists (and which nearby cluster sizes have one) or none fits in memory.
#pragma once

#include <cstdint>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/search/search.h"

namespace railsim::study {

/// `c`, then `c` on c.gpus - K, c.gpus - 2K, ... GPUs (whole HB domains of
/// size K idle; K counts the GPUs the job uses of each, c.fabrics'
/// hb_domain_size) while at most `idle_gpus` stay idle and at least one
/// domain remains. Requires idle_gpus >= 0.
std::vector<perf::PerfContext> IdleGpuContexts(const perf::PerfContext& c, int64_t idle_gpus);

/// Strategies the searches of IdleGpuContexts(c, idle_gpus) would enumerate.
int64_t CountStrategiesAllowingIdle(const perf::PerfContext& c, const search::SearchOptions& o, int64_t idle_gpus);

/// The search on every context of IdleGpuContexts(c, idle_gpus), merged
/// and ranked (each result's strategy says how many GPUs it uses).
search::SearchResult SearchAllowingIdle(const perf::PerfContext& c, const search::SearchOptions& o,
                                        int64_t idle_gpus);

/// SearchAllowingIdle on each of `contexts` (the job on each number of GPUs
/// per HB domain search's --gpus-per-domain tries), merged and ranked; with
/// more than one, the result lists them in gpus_per_domain_tried. Requires
/// at least one context.
search::SearchResult SearchSegments(const std::vector<perf::PerfContext>& contexts, const search::SearchOptions& o,
                                    int64_t idle_gpus);

/// Why a search found nothing.
enum class NoFit {
  kNoLayout,  ///< no strategy's degrees multiply to the GPUs at this batch
  kMemory,    ///< layouts exist, but none fits in the GPUs' memory
};
NoFit WhyNothingFits(const search::SearchResult& r);

/// The nearest cluster sizes below and above c.gpus (multiples of the HB
/// domain size) on which some layout of c's job exists at o.global_batch,
/// looking at most `steps` domains away; 0 where none was found.
struct NearbyGpus {
  int64_t below = 0, above = 0;
};
NearbyGpus NearestUsableGpus(const perf::PerfContext& c, const search::SearchOptions& o, int steps = 64);

}  // namespace railsim::study
