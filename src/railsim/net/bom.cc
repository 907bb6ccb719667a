#include "railsim/net/bom.h"

#include <set>

namespace railsim::net {

BillOfMaterials CountBill(const Topology& topology, const spec::PortClass& port_class) {
  BillOfMaterials bom;
  bom.tiers = topology.tiers();
  bom.switches_by_tier.assign(bom.tiers, 0);
  // Partitions of one chassis are several nodes; count each chassis once, in
  // the tier of its first node.
  std::vector<bool> seen(static_cast<size_t>(topology.chassis_count()), false);
  for (const Node& n : topology.nodes()) {
    if (n.kind != NodeKind::kSwitch) continue;
    bom.switch_ports_used += n.ports_used;
    if (seen[n.chassis]) continue;
    seen[n.chassis] = true;
    ++bom.switches;
    ++bom.switches_by_tier[static_cast<int>(n.tier) - 1];
  }
  for (const Link& l : topology.links()) {
    if (IsNetworkLink(l.kind)) ++bom.links;
  }
  bom.switch_ports = bom.switches * topology.params().radix;
  bom.transceivers = 2 * bom.links;
  bom.cables = bom.links;
  bom.switch_cost_usd = static_cast<double>(bom.switch_ports) * port_class.switch_port_cost_usd;
  bom.transceiver_cost_usd = static_cast<double>(bom.transceivers) * port_class.transceiver_cost_usd;
  bom.cost_usd = bom.switch_cost_usd + bom.transceiver_cost_usd;
  bom.switch_power_w = static_cast<double>(bom.switch_ports) * port_class.switch_port_power_w;
  bom.transceiver_power_w = static_cast<double>(bom.transceivers) * port_class.transceiver_power_w;
  bom.power_w = bom.switch_power_w + bom.transceiver_power_w;
  return bom;
}

}  // namespace railsim::net
