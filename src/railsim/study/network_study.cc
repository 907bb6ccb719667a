#include "railsim/study/network_study.h"

#include <cassert>
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
  return {params, net::CountBill(topology, port_class), 0, 0};
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

ClusterCost WholeClusterCost(const DesignResult& result, const spec::ServerClass& server) {
  assert(server.gpus > 0 && "a server holds GPUs");
  ClusterCost c;
  c.server = server.name;
  c.servers = (result.params.gpus + server.gpus - 1) / server.gpus;
  c.servers_cost_usd = double(c.servers) * (server.cost_usd + server.hb_switch_cost_usd);
  c.servers_power_w = double(c.servers) * (server.power_w + server.hb_switch_power_w);
  c.cost_usd = c.servers_cost_usd + result.bom.cost_usd;
  c.power_w = c.servers_power_w + result.bom.power_w;
  c.network_cost_share = c.cost_usd > 0 ? result.bom.cost_usd / c.cost_usd : 0;
  c.network_power_share = c.power_w > 0 ? result.bom.power_w / c.power_w : 0;
  return c;
}

}  // namespace railsim::study
