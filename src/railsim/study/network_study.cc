#include "railsim/study/network_study.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"

namespace railsim::study {

spec::PortClass PortClassFor(const spec::Catalog& catalog, double port_speed_Bps, const std::string& where) {
  std::optional<spec::PortClass> c = catalog.Find(port_speed_Bps);
  if (!c) {
    std::vector<std::string> speeds;
    for (const spec::PortClass& pc : catalog.port_classes) speeds.push_back(units::FormatBitRate(pc.port_speed_Bps));
    throw Error(where, fmt::format("catalog '{}' has no prices for {} (it has {}); pass "
                                   "--catalog FILE with a port class for this speed",
                                   catalog.name, units::FormatBitRate(port_speed_Bps), fmt::join(speeds, ", ")));
  }
  return *c;
}

DesignResult EvaluateDesign(const net::TopologyParams& params, const spec::PortClass& port_class,
                            const TopologyVisitor& visit) {
  net::Topology topology = net::BuildTopology(params);
  if (visit) visit(topology);
  return {params, net::CountBill(topology, port_class), 0, 0, std::nullopt};
}

std::vector<DesignResult> CompareDesigns(const net::TopologyParams& params, const spec::PortClass& port_class,
                                         const TopologyVisitor& visit) {
  std::vector<DesignResult> results;
  for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree}) {
    net::TopologyParams p = params;
    p.design = d;
    results.push_back(EvaluateDesign(p, port_class, visit));
  }
  const net::BillOfMaterials& base = results[0].bom;
  for (DesignResult& r : results) {
    r.cost_saving = base.cost_usd > 0 ? 1 - r.bom.cost_usd / base.cost_usd : 0;
    r.power_saving = base.power_w > 0 ? 1 - r.bom.power_w / base.power_w : 0;
  }
  return results;
}

ClusterCost WholeClusterCost(const DesignResult& result, const spec::ServerClass& server,
                             const spec::PortClass& hb_port_class) {
  assert(server.gpus > 0 && "a server holds GPUs");
  ClusterCost c;
  c.server = server.name;
  c.servers = (result.params.gpus + server.gpus - 1) / server.gpus;
  c.servers_cost_usd = double(c.servers) * (server.cost_usd + server.hb_switch_cost_usd);
  c.servers_power_w = double(c.servers) * (server.power_w + server.hb_switch_power_w);
  const HbFabricCost hb = EstimateHbFabricCost(result.params.gpus, result.params.hb_domain_size, server.gpus,
                                               result.params.hb_bw_Bps, hb_port_class);
  c.hb_fabric_cost_usd = hb.cost_usd;
  c.hb_fabric_power_w = hb.power_w;
  c.cost_usd = c.servers_cost_usd + c.hb_fabric_cost_usd + result.bom.cost_usd;
  c.power_w = c.servers_power_w + c.hb_fabric_power_w + result.bom.power_w;
  c.network_cost_share = c.cost_usd > 0 ? result.bom.cost_usd / c.cost_usd : 0;
  c.network_power_share = c.power_w > 0 ? result.bom.power_w / c.power_w : 0;
  return c;
}

double ClusterCostPerDay(const ClusterCost& cluster, const spec::OperatingCost& operating) {
  const double capital = cluster.cost_usd / (operating.lifetime_years * 365.25);
  const double energy = cluster.power_w / 1000 * 24 * operating.pue * operating.electricity_usd_per_kwh;
  return capital + energy;
}

double CostPerPflopsDay(double cluster_usd_per_day, double model_flops_per_s) {
  return model_flops_per_s > 0 ? cluster_usd_per_day / (model_flops_per_s / 1e15) : 0;
}

HbFabricCost EstimateHbFabricCost(int64_t gpus, int64_t hb_domain_size, int64_t server_gpus, double hb_bw_Bps,
                                  const spec::PortClass& port_class) {
  HbFabricCost c;
  if (hb_domain_size <= server_gpus || port_class.port_speed_Bps <= 0 || hb_bw_Bps <= 0) return c;
  c.links_per_gpu = int64_t(std::ceil(hb_bw_Bps / port_class.port_speed_Bps - 1e-9));
  const double links = double(gpus) * double(c.links_per_gpu);
  c.cost_usd = links * (3 * port_class.switch_port_cost_usd + 4 * port_class.transceiver_cost_usd);
  c.power_w = links * (3 * port_class.switch_port_power_w + 4 * port_class.transceiver_power_w);
  return c;
}

spec::PortClass FastestPortClass(const spec::Catalog& catalog) {
  assert(!catalog.port_classes.empty() && "a catalog has a port class");
  return *std::max_element(catalog.port_classes.begin(), catalog.port_classes.end(),
                           [](const spec::PortClass& a, const spec::PortClass& b) {
                             return a.port_speed_Bps < b.port_speed_Bps;
                           });
}

}  // namespace railsim::study
