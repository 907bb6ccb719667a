#include "railsim/perf/context.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

PerfContext MakePerfContext(const spec::ModelSpec& model, const spec::SystemSpec& system,
                            int64_t gpus, comm::NetworkKind network, int64_t hb_domain_size) {
  if (gpus < 1 || gpus > spec::kMaxModelGpus) {
    throw Error("--gpus", fmt::format("expected an integer in [1, {}], got {}", spec::kMaxModelGpus, gpus));
  }
  int64_t k = hb_domain_size > 0 ? hb_domain_size : system.hb_domain_size;
  if (network == comm::NetworkKind::kIdeal) k = gpus;
  if (k > gpus || gpus % k != 0) {
    throw Error(hb_domain_size > 0 ? "--hb-size" : "--gpus",
                fmt::format("expected the HB domain size {} to divide --gpus {}", k, gpus));
  }
  PerfContext c;
  c.model = model;
  c.system = system;
  c.gpus = gpus;
  c.fabrics.network = network;
  c.fabrics.hb_domain_size = k;
  c.fabrics.hb = {system.hb_bw_Bps, system.hb_efficiency, system.hb_latency_s};
  c.fabrics.nic = {system.nic_bw_Bps, system.nic_efficiency, system.nic_latency_s};
  c.fabrics.hb_in_network_allreduce_efficiency = system.hb_in_network_allreduce_efficiency;
  c.gpu = GpuModel::From(system.gpu);
  return c;
}

const char* NetworkName(comm::NetworkKind network) {
  switch (network) {
    case comm::NetworkKind::kRailOnly: return "rail-only";
    case comm::NetworkKind::kRailOptimized: return "rail-optimized";
    case comm::NetworkKind::kIdeal: return "ideal";
  }
  return "?";
}

}  // namespace railsim::perf
