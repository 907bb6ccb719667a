// Network studies: build a design and count it, or compare all designs on the
// same cluster with Rail-only's savings relative to rail-optimized.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/net/bom.h"
#include "railsim/net/topology.h"
#include "railsim/spec/catalog.h"

namespace railsim::study {

/// A design's network as a share of the whole cluster it connects: the GPU
/// servers (with their HB domains' own switches), the switch fabric that
/// joins servers into larger HB domains (EstimateHbFabricCost), plus the
/// network.
struct ClusterCost {
  std::string server;
  int64_t servers = 0;  ///< ceil(gpus / GPUs per server)
  double servers_cost_usd = 0;
  double servers_power_w = 0;
  double hb_fabric_cost_usd = 0;  ///< 0 when a server holds the HB domain
  double hb_fabric_power_w = 0;
  double cost_usd = 0;   ///< servers + HB fabric + network
  double power_w = 0;
  double network_cost_share = 0;   ///< network cost / cost_usd
  double network_power_share = 0;  ///< network power / power_w
};

struct DesignResult {
  net::TopologyParams params;
  net::BillOfMaterials bom;
  double cost_saving = 0;   ///< 1 - cost / rail-optimized cost; 0 for rail-optimized
  double power_saving = 0;  ///< likewise for power
  /// The whole cluster around the network, when the study knows its
  /// servers (compare with a catalog server); unset otherwise.
  std::optional<ClusterCost> cluster;
};

/// The whole cluster of `result`'s GPUs on `server` machines, HB domains
/// larger than a server joined by a fabric of `hb_port_class` ports (the
/// catalog's fastest, FastestPortClass). Never throws.
ClusterCost WholeClusterCost(const DesignResult& result, const spec::ServerClass& server,
                             const spec::PortClass& hb_port_class);

/// What the whole cluster costs per day of use: its price over its lifetime
/// in days (365.25 a year) plus a day of its power, times the PUE, at the
/// electricity price. Never throws.
double ClusterCostPerDay(const ClusterCost& cluster, const spec::OperatingCost& operating);

/// The cost of one PFLOP/s-day of model FLOPs: a day of the cluster over the
/// PFLOP/s a job delivers on it (model FLOPs per iteration / iteration
/// time). 0 when nothing is delivered. Never throws.
double CostPerPflopsDay(double cluster_usd_per_day, double model_flops_per_s);

/// The switch fabric that joins K GPUs into one HB domain when K is larger
/// than a server's own (a DGX GH200's 256 GPUs joined by NVLink switches):
/// a two-tier non-blocking fabric carrying each GPU's HB bandwidth, priced
/// with `port_class` (the catalog's fastest, as NVLink switch ports run at
/// the top line rate). Each GPU link takes one switch port at the GPU's
/// tier, an up- and a down-port between tiers (3 ports) and a transceiver at
/// each end of both hops (4). An estimate: NVIDIA publishes no NVLink
/// switch prices, so the catalog's Ethernet/InfiniBand prices stand in.
struct HbFabricCost {
  int64_t links_per_gpu = 0;  ///< ceil(HB bandwidth / port speed); 0 when the server holds the domain
  double cost_usd = 0;        ///< the whole cluster's HB fabrics
  double power_w = 0;
};

/// 0 for everything when `hb_domain_size` <= `server_gpus` (the domain's
/// switches are in the server, priced with it). Never throws.
HbFabricCost EstimateHbFabricCost(int64_t gpus, int64_t hb_domain_size, int64_t server_gpus, double hb_bw_Bps,
                                  const spec::PortClass& port_class);

/// The catalog's fastest port class. Requires a catalog with one.
spec::PortClass FastestPortClass(const spec::Catalog& catalog);

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
