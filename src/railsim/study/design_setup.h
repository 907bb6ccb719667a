// One design of a cluster, ready to study: its built graph and, with a
// training job, the performance context timing the job on it. The failure
// study, the report's sweeps and the tests that need a graph and a job
// together start here.
#pragma once

#include <cstdint>
#include <optional>

#include "railsim/comm/collective.h"
#include "railsim/net/topology.h"
#include "railsim/perf/context.h"
#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"

namespace railsim::study {

/// The cluster, and optionally the training job.
struct ClusterSetup {
  spec::SystemSpec system;
  int64_t gpus = 0;
  int64_t hb_domain_size = 0;  ///< 0: the system's
  /// Radix, oversubscription, and the GPUs of each HB domain the job uses
  /// (gpus_per_domain: `gpus` is then the job's; the domains are built whole).
  perf::NetworkOptions network;
  std::optional<spec::ModelSpec> model;  ///< with `strategy`: the job timed
  spec::Strategy strategy;
};

/// One design's built graph and, with a job, its performance context (its
/// domain_use maps the job's GPUs to the graph's).
struct DesignSetup {
  net::Design design = net::Design::kRailOptimized;
  perf::PerfContext context;
  net::Topology topology;
};

/// The collectives' view of a built design: Rail-only, or any-to-any
/// (rail-optimized and fat-tree).
comm::NetworkKind NetworkKindOf(net::Design design);

/// Builds the graph (and the context) of `design`. Throws Error naming the
/// flag when the cluster cannot be built.
DesignSetup SetUpDesign(const ClusterSetup& setup, net::Design design);

}  // namespace railsim::study
