// PerfContext: everything the iteration-time model needs that does not depend
// on the parallelisation strategy: the model, the system, the cluster size and
// network, and constants derived from them once.
#pragma once

#include <cstdint>
#include <optional>

#include "railsim/comm/collective.h"
#include "railsim/net/topology.h"
#include "railsim/perf/compute.h"
#include "railsim/perf/model_stats.h"
#include "railsim/perf/straggler.h"
#include "railsim/spec/model.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/system.h"

namespace railsim::perf {

/// The NIC network to time on: switch radix (0 = 64, or the smallest power
/// of two above it that fits in three tiers) and leaf oversubscription; and
/// how many GPUs of each HB domain the job uses (0 = all K; else the job's
/// GPUs fill the first N of each domain, the rest stay idle, and the network
/// is built for the whole domains: comm::DomainUse).
struct NetworkOptions {
  int radix = 0;
  double oversubscription = 1;
  int64_t gpus_per_domain = 0;
};

/// The built network a context times (what its JSON names).
struct NetworkShape {
  int radix = 0;
  double oversubscription = 1;
  int tiers = 0;            ///< switch tiers of the NIC network (0 for the ideal one)
  int reference_tiers = 0;  ///< at the default radix and full bisection
  int64_t leaf_gpus = 0;    ///< GPUs under one leaf (0: one switch per fabric)
};

/// The cluster's fabrics as the collectives see them, and the built NIC
/// network they stand for.
struct ClusterNetwork {
  comm::ClusterFabrics fabrics;  ///< hb_domain_size: the job's GPUs per domain
  NetworkShape shape;            ///< of the whole domains
  comm::DomainUse domain_use;    ///< the domains as built, and the GPUs used in each
};

/// The fabrics of a job of `gpus` GPUs of `system` joined by `network` (HB
/// domain and GPUs used per domain as for MakePerfContext). Throws as
/// MakePerfContext does.
ClusterNetwork MakeClusterNetwork(const spec::SystemSpec& system, int64_t gpus, comm::NetworkKind network,
                                  int64_t hb_domain_size = 0, const NetworkOptions& options = {});

/// The graph the network of a job of `job_gpus` GPUs stands for, to build and
/// simulate: `design` over the whole HB domains, at the shape's radix and
/// oversubscription, each NIC (shared by the system's gpus_per_nic GPUs) at
/// the port speed that gives each GPU the fabrics' NIC bandwidth, NVLink at
/// the fabrics' HB bandwidth.
net::TopologyParams GraphParams(const spec::SystemSpec& system, const ClusterNetwork& cluster, net::Design design,
                                int64_t job_gpus);

struct PerfContext {
  spec::ModelSpec model;
  spec::SystemSpec system;
  int64_t gpus = 0;  ///< the job's
  /// Network kind, leaf structure, and the HB domain as the job's ranks see
  /// it: hb_domain_size is the GPUs of each domain the job uses.
  comm::ClusterFabrics fabrics;
  NetworkShape shape;  ///< the NIC network of the whole domains
  /// The HB domains as built (size K) and the GPUs the job uses in each
  /// (--gpus-per-domain; all K by default). Placements and collectives work
  /// on the job's GPUs; the built graph's ids come from domain_use.GpuId.
  comm::DomainUse domain_use;
  GpuModel gpu;
  /// Where ranks run (default: Megatron's order); every strategy timed in
  /// this context is placed so. A placement file fixes the degrees: only
  /// strategies with them may be timed (spec::ValidatePlacement).
  spec::Placement placement;
  /// The gradient-norm all-reduce of one fp32 number over every GPU before
  /// the optimizer step (the same for every strategy).
  double grad_norm_allreduce_s = 0;
  /// The expected maximum of n standard normals for every data-parallel
  /// size n a strategy here can have: how many standard deviations of drift
  /// the slowest replica adds to a step (perf/straggler.h).
  ExpectedMaxTable expected_slowest;
  /// The software stack (--stack) the job runs on: its fixed costs are in
  /// `gpu`, its strategy defaults are the callers' (spec::ApplyStackDefaults).
  spec::Stack stack = spec::Stack::kMegatronCore;

  /// K: GPUs per HB domain as built (a context made by hand, with the
  /// default domain_use, has whole domains of fabrics.hb_domain_size).
  int64_t built_hb_domain_size() const { return domain_use.whole() ? fabrics.hb_domain_size : domain_use.size; }
};

/// Sets c->stack and replaces the GPU's fixed costs with the stack's where
/// the profile has its own fitted values. `iteration_overhead_s`, when
/// given, is the run's own per-iteration cost (--iteration-overhead): how
/// the run is timed and logged, which neither the GPU nor the stack knows.
void ApplyStack(spec::Stack stack, PerfContext* c, std::optional<double> iteration_overhead_s = std::nullopt);

/// Default switch radix of the network a job is timed on.
constexpr int kDefaultRadix = 64;

/// Builds a context for a job of `gpus` GPUs of `system` joined by
/// `network`. The HB domain is the system's unless `hb_domain_size` > 0
/// overrides it; for the ideal network it is all GPUs. The job uses
/// options.gpus_per_domain GPUs of each domain (0: all of them); the cluster
/// is built of whole domains, gpus / N of them. The NIC network is sized as
/// net/builder.h builds it for the whole domains (tiers, leaf down- and
/// up-links) so collectives see its latency and oversubscription. Throws
/// Error("--gpus-per-domain") outside [1, K], Error("--hb-size" / "--gpus")
/// unless the GPUs used per domain divide the GPU count, Error("--radix") for
/// an odd radix or more than three tiers, Error("--oversubscription")
/// outside [1, radix - 1].
PerfContext MakePerfContext(const spec::ModelSpec& model, const spec::SystemSpec& system,
                            int64_t gpus, comm::NetworkKind network, int64_t hb_domain_size = 0,
                            const NetworkOptions& options = {});

const char* NetworkName(comm::NetworkKind network);

}  // namespace railsim::perf
