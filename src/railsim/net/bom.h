// Bill of materials of a built network: switches per tier, ports, links,
// transceivers and cables, priced and powered from a catalog port class.
//
// Cost and power follow the paper: every switch chassis is paid and powered
// for all its ports (used or spare), every network link is an optical cable
// with one transceiver at each end. NICs, GPUs and the HB fabric are the same
// in every design and are left out.
#pragma once

#include <cstdint>
#include <vector>

#include "railsim/net/topology.h"
#include "railsim/spec/catalog.h"

namespace railsim::net {

struct BillOfMaterials {
  int tiers = 0;
  int64_t switches = 0;                  ///< physical chassis
  std::vector<int64_t> switches_by_tier; ///< leaf first; size == tiers
  int64_t switch_ports = 0;              ///< switches x radix
  int64_t switch_ports_used = 0;
  int64_t links = 0;                     ///< network cables (NIC-leaf and switch-switch)
  int64_t transceivers = 0;              ///< two per link
  int64_t cables = 0;
  double switch_cost_usd = 0;
  double transceiver_cost_usd = 0;
  double cost_usd = 0;
  double switch_power_w = 0;
  double transceiver_power_w = 0;
  double power_w = 0;
};

/// Counts `topology` and prices it with `port_class`.
BillOfMaterials CountBill(const Topology& topology, const spec::PortClass& port_class);

}  // namespace railsim::net
