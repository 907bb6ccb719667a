// One collective on a cluster, timed analytically and, when asked, simulated
// flow by flow on the built network: what `railsim collective` and
// `railsim alltoall` run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/comm/algorithms.h"
#include "railsim/comm/moe.h"
#include "railsim/net/topology.h"
#include "railsim/perf/context.h"
#include "railsim/sim/simulator.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/system.h"

namespace railsim::study {

struct CollectiveRequest {
  spec::SystemSpec system;
  int64_t gpus = 0;
  int64_t hb_domain_size = 0;  ///< 0 = the system's
  comm::NetworkKind network = comm::NetworkKind::kRailOptimized;
  /// Radix, oversubscription, and the GPUs of each HB domain the ranks use
  /// (gpus_per_domain: `gpus` is then the ranks', the domains are built whole).
  perf::NetworkOptions network_options;
  /// Per-GPU, per-direction bandwidths used as given (efficiency 1, no
  /// latency, no NCCL model) instead of the system's, for line-rate analyses.
  std::optional<double> hb_bw_Bps, nic_bw_Bps;
  comm::Op op = comm::Op::kAllReduce;
  comm::Algorithm algorithm = comm::Algorithm::kAuto;
  double bytes = 0;             ///< as comm::MakePlan takes it
  /// An MoE dispatch instead of `op` (comm/moe.h); `bytes` then reports
  /// what each member sends.
  std::optional<comm::MoeDispatch> moe;
  comm::MoeAllToAll moe_algorithm = comm::MoeAllToAll::kAuto;
  comm::GroupFamily group;      ///< every group of this family runs at once
  comm::PlanOptions plan_options;
  bool simulate = false;
  std::optional<net::Routing> routing;  ///< default: the system's nic_routing
  uint64_t seed = 0;
  /// Refuse simulations whose estimated peak memory is larger (0: no limit).
  int64_t max_memory_bytes = 0;
  int threads = 1;  ///< simulator threads (results do not depend on it)
  /// Simulates this process's share of the flows (sim/partition.h; every
  /// rank runs the same request); null: all of them. Not owned.
  sim::Partition* partition = nullptr;
  int64_t max_gpus = 0;          ///< graph size limit (0 = net's default)
  std::function<void(double)> progress;
};

struct CollectiveOutcome {
  perf::ClusterNetwork cluster;
  comm::Plan plan;
  double analytic_s = 0;
  double phase_analytic_s[comm::kMaxPhases] = {};
  bool simulated = false;
  net::Routing routing = net::Routing::kEcmp;
  uint64_t seed = 0;
  net::Topology topology;  ///< built only when simulated
  sim::SimResult sim;
};

/// The parallel groups a collective runs on.
enum class GroupKind { kTp, kCp, kEp, kDp, kPp, kAll };
/// "tp", "cp", "ep", "dp", "pp", "all".
const std::vector<std::string>& GroupKindNames();

/// The family of `kind`'s groups of strategy `s` (s.gpus() GPUs) placed by
/// `p`, as estimate places them (ep on the expert layers' grid, with
/// s.expert_tp()): the stride and size of the group holding
/// rank 0 (comm::LayoutOfMembers: exact for rank orders; for a placement
/// file, the strided layout with the same domains, members per domain and
/// rail alignment). Requires a placement valid for `s`.
comm::GroupFamily PlacedGroupFamily(const spec::Strategy& s, const spec::Placement& p, GroupKind kind,
                                    int64_t hb_domain_size);

/// The HB domain as the request's ranks see it, for PlacedGroupFamily: the
/// GPUs used of each domain (network_options.gpus_per_domain) when given,
/// else the domain size (hb_domain_size, or the system's).
int64_t JobDomainSize(const CollectiveRequest& r);

/// Throws Error naming the flag when the request cannot run: the algorithm
/// does not apply to the group (--algorithm), the group does not fit the
/// cluster (--gpus), the ideal network cannot be simulated (--simulate), the
/// graph is over its size limit (--max-gpus) or the simulation's estimated
/// memory over max_memory_bytes (--max-memory).
CollectiveOutcome RunCollective(const CollectiveRequest& request);

}  // namespace railsim::study
