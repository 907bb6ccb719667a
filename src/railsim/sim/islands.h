// Islands: the pieces that a plan's flows join the directed links into, so
// that no flow crosses links of two islands (a Rail-only network's rails and
// each HB domain's NVLink links, unless flows forwarded between rails join
// them). Max-min fairness is separate on each, so each island keeps its own
// flows and groups and fills apart: flows finishing or starting in one
// island leave the others' rates alone.
//
// An island's flows sit in one array in the order of its groups (flows
// frozen at one rate by one filling round, sorted by bytes left, so they
// finish front first), then the unfrozen ones; a partial refill only ever
// reopens the groups at the end of the array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "railsim/comm/plan.h"
#include "railsim/sim/flow_router.h"
#include "railsim/sim/flow_store.h"

namespace railsim::sim {

/// Flows frozen at one rate by one fill: flows[begin, end) of an island,
/// sorted by bytes left; those before `cursor` have finished.
struct Group {
  double level;      ///< their rate, bytes/s
  double updated_s;  ///< when their bytes left were last brought up to date
  size_t begin, end, cursor;
  uint32_t serial;   ///< unique over the simulation: tells stale completion entries
};

/// Flows a step added since the island's last fill: flows[begin, end), of
/// `bytes_per_flow` each, or of `other_bytes` (when > 0) for some (NCCL's
/// tree carries twice the bytes on its chains).
struct NewFlows {
  size_t begin, end;
  double bytes_per_flow;
  double other_bytes = 0;
};

struct Island {
  FlowStore flows;                 ///< in the order of its groups, then the unfrozen ones
  std::vector<Group> groups;
  std::vector<double> level_max;   ///< per group: the highest level up to it
  std::vector<NewFlows> new_flows; ///< not yet counted on their links
  std::vector<int32_t> links;      ///< its directed links, ascending
  int64_t peak = 0;                ///< flows alive at once (over all ranks)
  int64_t unfinished = 0;          ///< flows started and not finished (over all ranks)
  bool pending_full = false;       ///< flows started: refill the whole island
};

/// A plan's islands and where each phase's flows go.
struct Islands {
  std::vector<Island> all;  ///< numbered in the order of their least link
  /// Per phase: the islands its flows are in, ascending.
  std::vector<std::vector<int32_t>> of_phase;
  /// Per phase and source GPU: the island of its flows (empty: island 0).
  std::vector<std::vector<int32_t>> of_source;

  int32_t OfFlow(int phase, int64_t src) const {
    const std::vector<int32_t>& of = of_source[size_t(phase)];
    return of.empty() ? 0 : of[size_t(src)];
  }
};

/// Joins the directed links that `plan`'s flows cross into islands
/// (union-find over every distinct flow's path), with each island's peak of
/// flows alive at once. A phase's flows from one source are joined into one
/// island too, so that a step finds a flow's island from its source without
/// routing it (this merges islands only where a source sends over NVLink
/// and its NIC in one phase, unforwarded: a cost in speed, never in
/// exactness).
///
/// The pass costs one route per distinct flow, so it runs where islands are
/// likely to pay: on Rail-only networks, whose rails share no switch, and in
/// plans of several phases (HB and NIC phases never share a link). A single
/// phase on a network whose rails share switches is taken as one island,
/// which is exact. Flows with no live path join nothing. `use`: which GPUs
/// the plan's ranks are (SimOptions::domain_use).
Islands FindIslands(const comm::Plan& plan, const FlowRouter& router, const comm::DomainUse& use = {});

}  // namespace railsim::sim
