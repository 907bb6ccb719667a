// PerfContext: everything the iteration-time model needs that does not depend
// on the parallelisation strategy: the model, the system, the cluster size and
// network, and constants derived from them once.
#pragma once

#include <cstdint>

#include "railsim/comm/collective.h"
#include "railsim/perf/compute.h"
#include "railsim/perf/model_stats.h"
#include "railsim/perf/straggler.h"
#include "railsim/spec/model.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/system.h"

namespace railsim::perf {

/// The NIC network to time on: switch radix (0 = 64, or the smallest power
/// of two above it that fits in three tiers) and leaf oversubscription.
struct NetworkOptions {
  int radix = 0;
  double oversubscription = 1;
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
  comm::ClusterFabrics fabrics;
  NetworkShape shape;
};

/// The fabrics of `gpus` GPUs of `system` joined by `network` (HB domain as
/// for MakePerfContext). Throws as MakePerfContext does.
ClusterNetwork MakeClusterNetwork(const spec::SystemSpec& system, int64_t gpus, comm::NetworkKind network,
                                  int64_t hb_domain_size = 0, const NetworkOptions& options = {});

struct PerfContext {
  spec::ModelSpec model;
  spec::SystemSpec system;
  int64_t gpus = 0;
  comm::ClusterFabrics fabrics;  ///< network kind, HB domain size, leaf structure
  NetworkShape shape;
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
};

/// Sets c->stack and replaces the GPU's fixed costs with the stack's where
/// the profile has its own fitted values.
void ApplyStack(spec::Stack stack, PerfContext* c);

/// Default switch radix of the network a job is timed on.
constexpr int kDefaultRadix = 64;

/// Builds a context for `gpus` GPUs of `system` joined by `network`. The HB
/// domain is the system's unless `hb_domain_size` > 0 overrides it; for the
/// ideal network it is all GPUs. The NIC network is sized as net/builder.h
/// builds it (tiers, leaf down- and up-links) so collectives see its latency
/// and oversubscription. Throws Error("--hb-size" / "--gpus") unless the
/// domain size divides the GPU count, Error("--radix") for an odd radix or
/// more than three tiers, Error("--oversubscription") outside [1, radix - 1].
PerfContext MakePerfContext(const spec::ModelSpec& model, const spec::SystemSpec& system,
                            int64_t gpus, comm::NetworkKind network, int64_t hb_domain_size = 0,
                            const NetworkOptions& options = {});

const char* NetworkName(comm::NetworkKind network);

}  // namespace railsim::perf
