// Flow-level simulation of a collective plan (comm/plan.h) on a built
// network (net/topology.h).
//
// Every flow of every phase follows its Topology route (ECMP or d-mod-k among
// equal-cost paths). Each direction of each link is shared max-min fairly
// (progressive filling); HB domains are the graph's non-blocking NVLink
// fabric, so a GPU is limited by its own NVLink link. Rates change only when
// flows start or finish, and are recomputed only where the change reaches:
// when flows finish, every flow slower than the slowest finished one keeps
// its rate (max-min filling below that level does not see them), so only the
// flows at or above that level are refilled. A phase starts when the phases
// it depends on are done, after its latency.
//
// Every flow is simulated. Two exact shortcuts only: a step that repeats with
// the same flows on the same paths while nothing else runs (a ring's
// 2 (n - 1) steps) is simulated once and repeated in time; flows that finish
// within a relative 1e-9 of each other finish in one event.
//
// Data layout for millions of flows: flows are structure-of-arrays indexed by
// integer ids with fixed-stride paths (slots are reused), links are dense
// directed ids (2 x link + direction), and the filling keeps a lazy min-heap
// of link shares: a share only grows while filling, so stale heap entries
// are re-keyed when popped instead of being pushed on every update.
// PCIe links are left out of the simulation: each carries exactly the flows
// of its NIC's leaf link in the same direction and is never slower.
//
// Not thread-safe; one Simulator per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "railsim/comm/plan.h"
#include "railsim/net/failures.h"
#include "railsim/net/topology.h"

namespace railsim::sim {

/// Default and hard ceilings on flows alive at once (about 120 bytes each).
constexpr int64_t kDefaultMaxFlows = int64_t{1} << 25;  // 33.5 M, about 4 GB
constexpr int64_t kHardMaxFlows = int64_t{1} << 28;

struct SimOptions {
  net::RouteOptions route;
  /// Achieved fraction of line rate on NVLink and on the NIC network; link
  /// capacities are scaled by them, as the analytic model's bandwidths are.
  double hb_efficiency = 1;
  double nic_efficiency = 1;
  /// Devices down (net/failures.h): flows route around them, and flows with
  /// no live path are dropped and counted. Null: the healthy network.
  const net::FailureSet* failures = nullptr;
  /// Called now and then with the fraction of flows done (may be empty).
  std::function<void(double)> progress;
};

/// One directed link's totals.
struct LinkLoad {
  net::LinkId link = -1;
  bool upward = true;
  double bytes = 0;
  double busy_s = 0;        ///< bytes / capacity: time it was (equivalently) busy
  double utilisation = 0;   ///< busy_s / completion time
};

struct PhaseSpan {
  std::string name;
  double start_s = 0;
  double end_s = 0;
  int64_t flows = 0;        ///< flows of one step (all chunks)
  int64_t steps = 1;        ///< steps it ran
  int64_t steps_simulated = 1;
};

struct TierBytes {
  double nvlink = 0, nic_leaf = 0, leaf_spine = 0, spine_core = 0;
};

struct SimResult {
  double time_s = 0;
  int64_t flows_simulated = 0;   ///< flows injected into the simulation
  int64_t flows_represented = 0; ///< counting every repeated step
  int64_t flows_unroutable = 0;  ///< dropped: no live path around the failures
  int64_t events = 0;            ///< rate recomputations
  std::vector<PhaseSpan> phases;
  std::vector<LinkLoad> links;   ///< every directed link that carried bytes, by id
  TierBytes bytes_by_tier;
};

/// Flows alive at once when `plan` runs on `gpus` GPUs: the largest phase
/// step (pipelined chunk pairs count together).
int64_t PeakFlows(const comm::Plan& plan, int64_t gpus);

/// Simulates `plan` on `topology`. Requires the plan's groups to fit the
/// topology (ranks < gpus, HB domains of the topology's K) and
/// PeakFlows(plan, gpus) <= a limit the caller checked.
SimResult Simulate(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options);

}  // namespace railsim::sim
