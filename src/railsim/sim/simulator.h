// Flow-level simulation of a collective plan (comm/plan.h) on a built
// network (net/topology.h).
//
// Every flow of every phase follows its Topology route (ECMP or d-mod-k among
// equal-cost paths). Each direction of each link is shared max-min fairly
// (progressive filling); HB domains are the graph's non-blocking NVLink
// fabric, so a GPU is limited by its own NVLink link. Rates change only when
// flows start or finish, and are recomputed only where the change reaches
// (sim/max_min_fill.h): in the flows' island (sim/islands.h: a Rail-only
// network's rails and each HB domain's NVLink links fill apart), and there
// only for the flows at or above the slowest finished one. A phase starts
// when the phases it depends on are done, after its latency
// (sim/task_graph.h).
//
// Every flow is simulated. Two exact shortcuts only: a step that repeats with
// the same flows on the same paths while nothing else runs (a ring's
// 2 (n - 1) steps) is simulated once and repeated in time; flows that finish
// within a relative 1e-9 of each other finish in one event
// (sim/completions.h).
//
// Memory for a billion flows: 16 bytes per live flow (sim/flow_store.h);
// paths are recomputed when needed (sim/flow_router.h), and large fills go
// in rounds that need no memory per flow. Link totals are kept as integer
// flow counts times a rate (sim/link_counter.h), so the result does not
// depend on the order flows are visited: `threads` split every pass over the
// flows and the completion times are the same to the last bit whatever
// their number.
//
// With a Partition in the options (sim/partition.h) the flows are split over
// processes: each holds its share of every step's flows, and every decision
// is taken from values reduced over the processes, so each gets the single
// process's result to the last bit.
//
// Not thread-safe; one Simulate() call per caller thread (it starts its own).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "railsim/comm/plan.h"
#include "railsim/net/failures.h"
#include "railsim/net/topology.h"
#include "railsim/sim/memory_estimate.h"  // what Simulate()'s callers check first
#include "railsim/sim/partition.h"

namespace railsim::sim {

/// Most threads a simulation uses (study::kMaxThreads, what --threads takes).
constexpr int kMaxThreads = 1024;

struct SimOptions {
  net::RouteOptions route;
  /// Achieved fraction of line rate on NVLink and on the NIC network; link
  /// capacities are scaled by them, as the analytic model's bandwidths are.
  double hb_efficiency = 1;
  double nic_efficiency = 1;
  /// Which GPUs of the graph the plan's ranks are (comm::DomainUse): the
  /// first `used` of each HB domain when the job uses part of each; whole
  /// domains (rank = GPU id) when `used` == `size` (the default).
  comm::DomainUse domain_use;
  /// Devices down (net/failures.h): flows route around them, and flows with
  /// no live path are dropped and counted. Null: the healthy network.
  const net::FailureSet* failures = nullptr;
  /// Threads that share the passes over the flows (results do not depend on it).
  int threads = 1;
  /// Passes over fewer flows than this run on one thread (starting threads
  /// costs about what a pass over 64 k flows does); tests set it low.
  int64_t parallel_min_flows = int64_t{1} << 16;
  /// Per-link flow lists are built for fills that cross at most this many
  /// (flow, link) pairs (4 bytes each: 512 MiB); larger fills go in rounds
  /// that need no memory per flow. Tests set 0 to fill in rounds only.
  int64_t max_list_entries = int64_t{1} << 27;
  /// Fills that cross at least this many (flow, link) pairs start in rounds
  /// (they settle the regular cases with no lists, and split over ranks),
  /// while each round settles half of what is left; then lists where they
  /// fit. Smaller fills go by lists at once. Tests set 0.
  int64_t rounds_first_entries = int64_t{1} << 22;
  /// Called now and then with the fraction of flows done (may be empty).
  std::function<void(double)> progress;
  /// Splits the flows over processes (sim/partition.h): every rank calls
  /// Simulate() with the same arguments but this, and gets the same result.
  /// Null: this process simulates every flow. Not owned.
  Partition* partition = nullptr;
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
  int64_t events = 0;            ///< rate recomputations (of one island each)
  std::vector<PhaseSpan> phases;
  std::vector<LinkLoad> links;   ///< every directed link that carried bytes, by id
  TierBytes bytes_by_tier;
};

/// Simulates `plan` on `topology`. Requires the plan's groups to fit the
/// topology (ranks < gpus < 2^24, HB domains of the topology's K, or of
/// options.domain_use.used GPUs of each when it uses part of each) and
/// EstimateMemoryBytes() within a limit the caller checked; throws
/// std::bad_alloc if the kernel still refuses the memory, and Interrupted
/// (core/interrupt.h) when a stop was asked for (looked for between events
/// and every 65,536 flows of a pass, so within a fraction of a second).
SimResult Simulate(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options);

}  // namespace railsim::sim
