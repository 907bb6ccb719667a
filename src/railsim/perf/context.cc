#include "railsim/perf/context.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {
namespace {

net::TopologyParams Params(comm::NetworkKind network, int64_t gpus, int64_t k, int radix, double r,
                           const spec::SystemSpec& system) {
  net::TopologyParams p;
  p.design = network == comm::NetworkKind::kRailOnly ? net::Design::kRailOnly : net::Design::kRailOptimized;
  p.gpus = gpus;
  p.hb_domain_size = static_cast<int>(k);
  p.radix = radix;
  p.oversubscription = r;
  p.port_speed_Bps = system.nic_bw_Bps;
  p.gpus_per_nic = system.gpus_per_nic;
  return p;
}

// 64, or the next power of two that holds the cluster in three tiers.
int DefaultRadix(comm::NetworkKind network, int64_t gpus, int64_t k, const spec::SystemSpec& system) {
  int radix = kDefaultRadix;
  while (radix < 65536 && net::TiersNeeded(Params(network, gpus, k, radix, 1, system)) > 3) radix *= 2;
  return radix;
}

NetworkShape ShapeNetwork(comm::NetworkKind network, int64_t gpus, int64_t k, const NetworkOptions& o,
                          const spec::SystemSpec& system) {
  NetworkShape shape;
  if (network == comm::NetworkKind::kIdeal) return shape;
  const int reference_radix = DefaultRadix(network, gpus, k, system);
  shape.radix = o.radix > 0 ? o.radix : reference_radix;
  shape.oversubscription = o.oversubscription;
  if (shape.radix < 2 || shape.radix % 2 != 0 || shape.radix > 65536) {
    throw Error("--radix", fmt::format("expected an even integer in [2, 65536], got {}", shape.radix));
  }
  if (!(o.oversubscription >= 1) || !(o.oversubscription <= shape.radix - 1)) {
    throw Error("--oversubscription", fmt::format("expected a ratio in [1, {}] (leaf down:up), got {}",
                                                  shape.radix - 1, o.oversubscription));
  }
  net::TopologyParams p = Params(network, gpus, k, shape.radix, o.oversubscription, system);
  shape.tiers = net::TiersNeeded(p);
  if (shape.tiers > 3) {
    throw Error("--radix", fmt::format("{} GPUs need more than three switch tiers at radix {}; use a larger "
                                       "radix (at least {})",
                                       gpus, shape.radix, reference_radix));
  }
  shape.reference_tiers = net::TiersNeeded(Params(network, gpus, k, reference_radix, 1, system));
  // A leaf's down-ports hold NICs; each NIC serves gpus_per_nic GPUs.
  if (shape.tiers > 1) shape.leaf_gpus = net::LeafDownPorts(shape.radix, o.oversubscription) * system.gpus_per_nic;
  return shape;
}

// The most GPUs of a domain of `k` that a job of `gpus` GPUs can use in
// every domain it occupies: the largest divisor of `gpus` up to `k`.
int64_t LargestDivisorUpTo(int64_t gpus, int64_t k) {
  for (int64_t d = std::min(gpus, k); d > 1; --d) {
    if (gpus % d == 0) return d;
  }
  return 1;
}

// The HB domains as built and the GPUs the job uses in each, checked.
comm::DomainUse CheckDomainUse(const spec::SystemSpec& system, int64_t gpus, comm::NetworkKind network,
                               int64_t hb_domain_size, int64_t gpus_per_domain) {
  const int64_t k = hb_domain_size > 0 ? hb_domain_size : system.hb_domain_size;
  if (gpus_per_domain < 0 || gpus_per_domain > k) {
    throw Error("--gpus-per-domain", fmt::format("expected an integer in [1, {}] (the GPUs of one HB domain), got {}",
                                                 k, gpus_per_domain));
  }
  if (network == comm::NetworkKind::kIdeal) return {gpus, gpus};  // one domain of every GPU
  if (k % system.gpus_per_nic != 0) {
    throw Error("--hb-size", fmt::format("expected a multiple of {}'s gpus_per_nic {} (the GPUs that share a NIC "
                                         "stay in one HB domain), got {}",
                                         system.name, system.gpus_per_nic, k));
  }
  const int64_t used = gpus_per_domain > 0 ? gpus_per_domain : k;
  if (used < k) {
    if (gpus % used != 0) {
      throw Error("--gpus", fmt::format("expected a multiple of --gpus-per-domain {}, got {}", used, gpus));
    }
    if (gpus / used > spec::kMaxModelGpus / k) {
      throw Error("--gpus-per-domain",
                  fmt::format("{} GPUs, {} of each HB domain of {}, occupy more than the {} GPUs railsim models; use "
                              "more GPUs of each domain",
                              gpus, used, k, spec::kMaxModelGpus));
    }
    return {k, used};
  }
  if (k > gpus || gpus % k != 0) {
    const int64_t n = LargestDivisorUpTo(gpus, k);
    throw Error(hb_domain_size > 0 ? "--hb-size" : "--gpus",
                fmt::format("expected the HB domain size {} to divide --gpus {}; a job that uses part of each "
                            "domain takes --gpus-per-domain (such as {}: {} HB domain{} of {}, {} GPU{} used in each)",
                            k, gpus, n, gpus / n, gpus / n == 1 ? "" : "s", k, n, n == 1 ? "" : "s"));
  }
  return {k, k};
}

}  // namespace

net::TopologyParams GraphParams(const spec::SystemSpec& system, const ClusterNetwork& cluster, net::Design design,
                                int64_t job_gpus) {
  net::TopologyParams p;
  p.design = design;
  p.gpus = cluster.domain_use.BuiltGpus(job_gpus);
  p.hb_domain_size = static_cast<int>(cluster.domain_use.size);
  p.radix = cluster.shape.radix;
  p.oversubscription = cluster.shape.oversubscription;
  p.gpus_per_nic = system.gpus_per_nic;
  p.port_speed_Bps = cluster.fabrics.nic.bw_Bps * system.gpus_per_nic;
  p.hb_bw_Bps = cluster.fabrics.hb.bw_Bps;
  return p;
}

ClusterNetwork MakeClusterNetwork(const spec::SystemSpec& system, int64_t gpus, comm::NetworkKind network,
                                  int64_t hb_domain_size, const NetworkOptions& options) {
  if (gpus < 1 || gpus > spec::kMaxModelGpus) {
    throw Error("--gpus", fmt::format("expected an integer in [1, {}], got {}", spec::kMaxModelGpus, gpus));
  }
  ClusterNetwork n;
  n.domain_use = CheckDomainUse(system, gpus, network, hb_domain_size, options.gpus_per_domain);
  const int64_t k = n.domain_use.size;
  comm::ClusterFabrics& f = n.fabrics;
  f.network = network;
  f.hb_domain_size = n.domain_use.used;
  f.hb = {system.hb_bw_Bps, system.hb_efficiency, system.hb_latency_s};
  // Training's collectives send from every GPU of a node at once: GPUs that
  // share a NIC each get their share of it.
  f.nic = {system.nic_share_Bps(), system.nic_efficiency, system.nic_latency_s};
  f.hb_in_network_allreduce_efficiency = system.hb_in_network_allreduce_efficiency;
  f.nccl = system.nccl;
  // The NIC network is built for the whole domains: every GPU has its NIC.
  n.shape = ShapeNetwork(network, n.domain_use.BuiltGpus(gpus), k, options, system);
  // Each tier more than the default network's adds a switch on the way up
  // and one on the way down.
  f.nic.latency_s = std::max(
      0.0, system.nic_latency_s + 2.0 * (n.shape.tiers - n.shape.reference_tiers) * system.switch_latency_s);
  f.leaf_gpus = n.shape.leaf_gpus;
  if (n.shape.leaf_gpus > 0) {
    double up = std::ceil(double(n.shape.leaf_gpus) / options.oversubscription - 1e-9);
    f.leaf_uplink_ratio = double(n.shape.leaf_gpus) / up;
  }
  f.rail_leaves = true;
  return n;
}

PerfContext MakePerfContext(const spec::ModelSpec& model, const spec::SystemSpec& system,
                            int64_t gpus, comm::NetworkKind network, int64_t hb_domain_size,
                            const NetworkOptions& options) {
  ClusterNetwork n = MakeClusterNetwork(system, gpus, network, hb_domain_size, options);
  PerfContext c;
  c.model = model;
  c.system = system;
  c.gpus = gpus;
  c.fabrics = n.fabrics;
  c.shape = n.shape;
  c.domain_use = n.domain_use;
  c.gpu = GpuModel::From(system.gpu);
  c.grad_norm_allreduce_s = comm::AllReduceTime(4, comm::LayoutOf(gpus, 1, c.fabrics.hb_domain_size), c.fabrics);
  // Only a GPU with jitter waits for stragglers (ComposeIteration skips the
  // lookup otherwise), so only then is the table worth its ~0.2 ms.
  if (system.gpu.straggler_jitter > 0) c.expected_slowest = ExpectedMaxTable(gpus);
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

void ApplyStack(spec::Stack stack, PerfContext* c, std::optional<double> iteration_overhead_s) {
  const spec::StackProfile& p = spec::StackProfileOf(stack);
  c->stack = stack;
  c->gpu.iteration_overhead_s =
      iteration_overhead_s.value_or(p.iteration_overhead_s.value_or(c->system.gpu.iteration_overhead_s));
  c->gpu.chunk_overhead_s = p.pipeline_chunk_overhead_s.value_or(c->system.gpu.pipeline_chunk_overhead_s);
}

}  // namespace railsim::perf
