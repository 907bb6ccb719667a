// Network studies: build a design and count it, or compare all designs on the
// same cluster with Rail-only's savings relative to rail-optimized.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "railsim/net/bom.h"
#include "railsim/net/topology.h"
#include "railsim/spec/catalog.h"

namespace railsim::study {

struct DesignResult {
  net::TopologyParams params;
  net::BillOfMaterials bom;
  double cost_saving = 0;   ///< 1 - cost / rail-optimized cost; 0 for rail-optimized
  double power_saving = 0;  ///< likewise for power
};

/// A design's network as a share of the whole cluster it connects: the GPU
/// servers (with their HB domains' own switches) plus the network.
struct ClusterCost {
  std::string server;
  int64_t servers = 0;  ///< ceil(gpus / GPUs per server)
  double servers_cost_usd = 0;
  double servers_power_w = 0;
  double cost_usd = 0;   ///< servers + network
  double power_w = 0;
  double network_cost_share = 0;   ///< network cost / cost_usd
  double network_power_share = 0;  ///< network power / power_w
};

/// The whole cluster of `result`'s GPUs on `server` machines. Never throws.
ClusterCost WholeClusterCost(const DesignResult& result, const spec::ServerClass& server);

/// Called with each topology once it is built (for exports), before it is freed.
using TopologyVisitor = std::function<void(const net::Topology&)>;

/// The catalog's port class for `port_speed_Bps`. Throws Error(where) naming
/// the speeds the catalog has when it has none for this one.
spec::PortClass PortClassFor(const spec::Catalog& catalog, double port_speed_Bps, const std::string& where);

/// Builds the design in `params` and counts it. Requires valid params.
DesignResult EvaluateDesign(const net::TopologyParams& params, const spec::PortClass& port_class,
                            const TopologyVisitor& visit = {});

/// Rail-optimized, Rail-only and fat-tree on the same cluster (params.design is
/// ignored), in that order, with savings relative to rail-optimized.
std::vector<DesignResult> CompareDesigns(const net::TopologyParams& params, const spec::PortClass& port_class,
                                         const TopologyVisitor& visit = {});

}  // namespace railsim::study
