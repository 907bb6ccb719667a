// Formatting network results: tables and JSON for `railsim network`, `cost`
// and `compare`, and the cabling-plan CSV and whole-graph JSON exports.
#pragma once

#include <string>
#include <vector>

#include "railsim/net/topology.h"
#include "railsim/study/network_study.h"

namespace railsim::report {

/// One design as a two-column table (quantity, value).
std::string NetworkTable(const study::DesignResult& result);
/// One design as a JSON object (keys: design, gpus, hb_domain_size, radix,
/// tiers, switches, switches_by_tier, switch_ports, links, transceivers,
/// cost_usd, power_w, ...), newline-terminated.
std::string NetworkJson(const study::DesignResult& result);

/// Several designs side by side, one row each, with savings. With
/// `clusters` (one per design, same order), a second table: each design's
/// whole cluster and the network's share of its cost and power.
std::string CostTable(const std::vector<study::DesignResult>& results,
                      const std::vector<study::ClusterCost>& clusters = {});
/// {"designs": [...]} where each element is NetworkJson's object plus
/// cost_saving and power_saving, and with `clusters` a "cluster" object
/// (server, servers, servers_cost_usd, servers_power_w, cost_usd, power_w,
/// network_cost_share, network_power_share).
std::string CostJson(const std::vector<study::DesignResult>& results,
                     const std::vector<study::ClusterCost>& clusters = {});

/// One CSV row per design (same quantities as CostJson; the cluster's with
/// a cluster_ prefix).
std::string CostCsv(const std::vector<study::DesignResult>& results,
                    const std::vector<study::ClusterCost>& clusters = {});

/// The cabling plan: one row per network link, with header
/// link,a_device,a_port,b_device,b_port,tier,rail,capacity_gbps.
std::string CablingCsv(const net::Topology& topology);
/// The whole graph: {"params":..., "nodes":[...], "links":[...]}.
std::string GraphJson(const net::Topology& topology);

}  // namespace railsim::report
