#include "railsim/sim/memory_estimate.h"

#include <algorithm>
#include <cassert>

#include "railsim/sim/flow_store.h"
#include "railsim/sim/simulator.h"

namespace railsim::sim {

int64_t PeakFlows(const comm::Plan& plan, int64_t gpus) {
  int64_t peak = 0;
  for (int i = 0; i < plan.count; ++i) {
    int64_t n = comm::PhaseFlowCount(plan.phases[i], gpus);
    if (i > 0 && plan.phases[i].chunks > 1) n += comm::PhaseFlowCount(plan.phases[i - 1], gpus);
    peak = std::max(peak, n);
  }
  return peak;
}

int64_t EstimateMemoryBytes(const comm::Plan& plan, const net::Topology& topology, int threads, int ranks) {
  const int64_t links = int64_t(topology.links().size()), nodes = int64_t(topology.nodes().size());
  // The graph (nodes, links, per-GPU tables); per directed link 8 arrays of
  // 8 bytes; per thread and directed link a count and a least share.
  const int64_t graph = nodes * int64_t(sizeof(net::Node)) + links * int64_t(sizeof(net::Link)) + 24 * topology.gpus();
  const int64_t per_link = 2 * links * (8 * 8 + 2 * 8 * std::max(1, threads));
  // Program, libraries and allocator slack, measured at about 40 MB.
  constexpr int64_t kBase = int64_t{64} << 20;
  // Per-link lists: 4 bytes per flow and link crossed and 4 per flow, built
  // only up to SimOptions::max_list_entries entries (the default is
  // assumed). A stored path crosses at most 2 x tiers NIC-network links (PCIe
  // is left out) and two NVLink hops at each end (forwarding, at the far end
  // too when a failure forces it).
  const int64_t peak = PeakFlows(plan, topology.gpus());
  const int64_t path_links = std::min(2 * topology.tiers() + 4, net::kMaxRouteHops);
  const int64_t lists = std::min(peak * 4 * (path_links + 1), SimOptions().max_list_entries * 4 * 2);
  // Over ranks, a rank holds its share of the flows, and a fill by lists
  // gathers all its flows (each crosses two links at least).
  assert(ranks >= 1);
  const int64_t flows = ranks == 1 ? peak : (peak + ranks - 1) / ranks +
                                               std::min(peak, SimOptions().max_list_entries / 2);
  return int64_t(sizeof(Flow)) * flows + lists + graph + per_link + kBase;
}

}  // namespace railsim::sim
