// PerfContext: everything the iteration-time model needs that does not depend
// on the parallelisation strategy: the model, the system, the cluster size and
// network, and constants derived from them once.
#pragma once

#include <cstdint>

#include "railsim/comm/collective.h"
#include "railsim/perf/compute.h"
#include "railsim/perf/model_stats.h"
#include "railsim/spec/model.h"
#include "railsim/spec/system.h"

namespace railsim::perf {

struct PerfContext {
  spec::ModelSpec model;
  spec::SystemSpec system;
  int64_t gpus = 0;
  comm::ClusterFabrics fabrics;  ///< network kind and effective HB domain size
  GpuModel gpu;
};

/// Builds a context for `gpus` GPUs of `system` joined by `network`. The HB
/// domain is the system's unless `hb_domain_size` > 0 overrides it; for the
/// ideal network it is all GPUs. Throws Error("--hb-size" / "--gpus") unless
/// the domain size divides the GPU count.
PerfContext MakePerfContext(const spec::ModelSpec& model, const spec::SystemSpec& system,
                            int64_t gpus, comm::NetworkKind network, int64_t hb_domain_size = 0);

const char* NetworkName(comm::NetworkKind network);

}  // namespace railsim::perf
