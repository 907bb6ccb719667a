#include "railsim/report/network_report.h"

#include <cassert>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "railsim/core/units.h"
#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/table.h"

namespace railsim::report {

Json DesignObject(const study::DesignResult& r) {
  const net::TopologyParams& p = r.params;
  const net::BillOfMaterials& b = r.bom;
  Json j;
  j["design"] = net::DesignName(p.design);
  j["gpus"] = p.gpus;
  j["hb_domain_size"] = p.hb_domain_size;
  j["rails"] = p.rails();
  j["gpus_per_rail"] = p.gpus / p.rails();
  j["gpus_per_nic"] = p.gpus_per_nic;
  j["nics"] = p.nics();
  j["radix"] = p.radix;
  j["port_speed"] = units::FormatBitRate(p.port_speed_Bps);
  j["oversubscription"] = p.oversubscription;
  j["tiers"] = b.tiers;
  j["switches"] = b.switches;
  j["switches_by_tier"] = b.switches_by_tier;
  j["switch_ports"] = b.switch_ports;
  j["switch_ports_used"] = b.switch_ports_used;
  j["links"] = b.links;
  j["transceivers"] = b.transceivers;
  j["cables"] = b.cables;
  j["switch_cost_usd"] = b.switch_cost_usd;
  j["transceiver_cost_usd"] = b.transceiver_cost_usd;
  j["cost_usd"] = b.cost_usd;
  j["switch_power_w"] = b.switch_power_w;
  j["transceiver_power_w"] = b.transceiver_power_w;
  j["power_w"] = b.power_w;
  return j;
}

Json DesignsArray(const std::vector<study::DesignResult>& results) {
  Json designs = Json::array();
  for (const study::DesignResult& r : results) {
    Json j = DesignObject(r);
    j["cost_saving"] = r.cost_saving;
    j["power_saving"] = r.power_saving;
    designs.push_back(j);
  }
  return designs;
}

namespace {

std::string TierList(const std::vector<int64_t>& by_tier) {
  static const char* kNames[] = {"leaf", "spine", "core"};
  std::string out;
  for (size_t i = 0; i < by_tier.size(); ++i) {
    if (i > 0) out += " + ";
    out += Grouped(by_tier[i]) + " " + kNames[i];
  }
  return out;
}

}  // namespace

std::string NetworkTable(const study::DesignResult& r) {
  const net::TopologyParams& p = r.params;
  const net::BillOfMaterials& b = r.bom;
  TextTable t;
  t.AddColumn("quantity", TextTable::Align::kLeft);
  t.AddColumn("value", TextTable::Align::kLeft);
  t.AddRow({"design", net::DesignName(p.design)});
  t.AddRow({"GPUs", fmt::format("{} ({} rails x {} GPUs; HB domain {})", Grouped(p.gpus), p.rails(),
                                Grouped(p.gpus / p.rails()), p.hb_domain_size)});
  if (p.gpus_per_nic > 1) {
    t.AddRow({"NICs", fmt::format("{} ({} GPUs share each)", Grouped(p.nics()), p.gpus_per_nic)});
  }
  t.AddRow({"switch radix", fmt::format("{} x {}", p.radix, units::FormatBitRate(p.port_speed_Bps))});
  if (p.oversubscription != 1) t.AddRow({"leaf oversubscription", fmt::format("{}:1", p.oversubscription)});
  t.AddRow({"tiers", std::to_string(b.tiers)});
  t.AddRow({"switches", fmt::format("{} ({})", Grouped(b.switches), TierList(b.switches_by_tier))});
  t.AddRow({"switch ports", fmt::format("{} ({} used)", Grouped(b.switch_ports), Grouped(b.switch_ports_used))});
  t.AddRow({"links (cables)", Grouped(b.links)});
  t.AddRow({"transceivers", Grouped(b.transceivers)});
  t.AddRow({"cost", fmt::format("{} (switches {}, transceivers {})", Dollars(b.cost_usd),
                                Dollars(b.switch_cost_usd), Dollars(b.transceiver_cost_usd))});
  t.AddRow({"power", fmt::format("{} (switches {}, transceivers {})", Watts(b.power_w),
                                 Watts(b.switch_power_w), Watts(b.transceiver_power_w))});
  return t.Render();
}

std::string NetworkJson(const study::DesignResult& r) { return DesignObject(r).dump(2) + "\n"; }

std::string CostTable(const std::vector<study::DesignResult>& results,
                      const std::vector<study::ClusterCost>& clusters) {
  TextTable t;
  t.AddColumn("design", TextTable::Align::kLeft);
  for (const char* h : {"tiers", "switches", "ports", "links", "transceivers", "cost", "power",
                        "cost saving", "power saving"}) {
    t.AddColumn(h);
  }
  for (const study::DesignResult& r : results) {
    const net::BillOfMaterials& b = r.bom;
    t.AddRow({net::DesignName(r.params.design), std::to_string(b.tiers), Grouped(b.switches),
              Grouped(b.switch_ports), Grouped(b.links), Grouped(b.transceivers), Dollars(b.cost_usd),
              Watts(b.power_w), Percent(r.cost_saving), Percent(r.power_saving)});
  }
  if (clusters.empty()) return t.Render();
  assert(clusters.size() == results.size() && "one cluster per design");
  TextTable w;
  w.AddColumn("whole cluster", TextTable::Align::kLeft);
  for (const char* h : {"servers", "servers cost", "servers power", "cluster cost", "cluster power",
                        "network cost share", "network power share"}) {
    w.AddColumn(h);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const study::ClusterCost& c = clusters[i];
    w.AddRow({net::DesignName(results[i].params.design), Grouped(c.servers) + " x " + c.server,
              Dollars(c.servers_cost_usd), Watts(c.servers_power_w), Dollars(c.cost_usd), Watts(c.power_w),
              Percent(c.network_cost_share), Percent(c.network_power_share)});
  }
  return t.Render() + "\n" + w.Render();
}

std::string CostJson(const std::vector<study::DesignResult>& results,
                     const std::vector<study::ClusterCost>& clusters) {
  Json doc;
  doc["designs"] = DesignsArray(results);
  for (size_t i = 0; i < clusters.size(); ++i) {
    const study::ClusterCost& c = clusters[i];
    Json j;
    j["server"] = c.server;
    j["servers"] = c.servers;
    j["servers_cost_usd"] = c.servers_cost_usd;
    j["servers_power_w"] = c.servers_power_w;
    j["cost_usd"] = c.cost_usd;
    j["power_w"] = c.power_w;
    j["network_cost_share"] = c.network_cost_share;
    j["network_power_share"] = c.network_power_share;
    doc["designs"][i]["cluster"] = j;
  }
  return doc.dump(2) + "\n";
}

std::string CostCsv(const std::vector<study::DesignResult>& results,
                    const std::vector<study::ClusterCost>& clusters) {
  std::vector<std::string> header = {"design", "gpus", "hb_domain_size", "radix", "port_speed", "oversubscription",
                                     "tiers", "switches", "switch_ports", "switch_ports_used", "links",
                                     "transceivers", "cost_usd", "power_w", "cost_saving", "power_saving"};
  if (!clusters.empty()) {
    header.insert(header.end(), {"cluster_server", "cluster_servers", "cluster_servers_cost_usd",
                                 "cluster_servers_power_w", "cluster_cost_usd", "cluster_power_w",
                                 "cluster_network_cost_share", "cluster_network_power_share"});
  }
  CsvTable t(header);
  for (size_t i = 0; i < results.size(); ++i) {
    const study::DesignResult& r = results[i];
    const net::TopologyParams& p = r.params;
    const net::BillOfMaterials& b = r.bom;
    std::vector<std::string> row = {
        net::DesignName(p.design), std::to_string(p.gpus), std::to_string(p.hb_domain_size),
        std::to_string(p.radix), units::FormatBitRate(p.port_speed_Bps), CsvNumber(p.oversubscription),
        std::to_string(b.tiers), std::to_string(b.switches), std::to_string(b.switch_ports),
        std::to_string(b.switch_ports_used), std::to_string(b.links), std::to_string(b.transceivers),
        CsvNumber(b.cost_usd), CsvNumber(b.power_w), CsvNumber(r.cost_saving), CsvNumber(r.power_saving)};
    if (!clusters.empty()) {
      const study::ClusterCost& c = clusters[i];
      row.insert(row.end(), {c.server, std::to_string(c.servers), CsvNumber(c.servers_cost_usd),
                             CsvNumber(c.servers_power_w), CsvNumber(c.cost_usd), CsvNumber(c.power_w),
                             CsvNumber(c.network_cost_share), CsvNumber(c.network_power_share)});
    }
    t.AddRow(row);
  }
  return t.Render();
}

std::string CablingCsv(const net::Topology& topology) {
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "link,a_device,a_port,b_device,b_port,tier,rail,capacity_gbps\n");
  int64_t row = 0;
  for (const net::Link& l : topology.links()) {
    if (!net::IsNetworkLink(l.kind)) continue;
    fmt::format_to(std::back_inserter(out), "{},{},{},{},{},{},{},{:g}\n", row++,
                   topology.NodeName(l.a), l.port_a, topology.NodeName(l.b), l.port_b,
                   net::LinkKindName(l.kind), l.rail, l.capacity_Bps * 8 / 1e9);
  }
  return fmt::to_string(out);
}

std::string GraphJson(const net::Topology& topology) {
  // Written by hand rather than through a JSON DOM: a 65,536-GPU graph has
  // about 300k links and the DOM would cost seconds and hundreds of MB.
  const net::TopologyParams& p = topology.params();
  fmt::memory_buffer out;
  auto put = std::back_inserter(out);
  fmt::format_to(put,
                 "{{\n  \"params\": {{\"design\": \"{}\", \"gpus\": {}, \"hb_domain_size\": {}, "
                 "\"radix\": {}, \"port_speed\": \"{}\", \"oversubscription\": {}, \"tiers\": {}}},\n"
                 "  \"nodes\": [\n",
                 net::DesignName(p.design), p.gpus, p.hb_domain_size, p.radix,
                 units::FormatBitRate(p.port_speed_Bps), p.oversubscription, topology.tiers());
  const auto& nodes = topology.nodes();
  static const char* kKinds[] = {"gpu", "nic", "hb", "switch"};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const net::Node& n = nodes[i];
    fmt::format_to(put, "    {{\"id\": {}, \"name\": \"{}\", \"kind\": \"{}\"", i,
                   topology.NodeName(static_cast<net::NodeId>(i)), kKinds[static_cast<int>(n.kind)]);
    if (n.kind == net::NodeKind::kSwitch) {
      fmt::format_to(put, ", \"tier\": \"{}\", \"chassis\": {}, \"ports_used\": {}",
                     net::TierName(n.tier), n.chassis, n.ports_used);
    }
    if (n.rail >= 0) fmt::format_to(put, ", \"rail\": {}", n.rail);
    fmt::format_to(put, "}}{}\n", i + 1 < nodes.size() ? "," : "");
  }
  fmt::format_to(put, "  ],\n  \"links\": [\n");
  const auto& links = topology.links();
  for (size_t i = 0; i < links.size(); ++i) {
    const net::Link& l = links[i];
    fmt::format_to(put,
                   "    {{\"id\": {}, \"a\": {}, \"a_port\": {}, \"b\": {}, \"b_port\": {}, "
                   "\"kind\": \"{}\", \"rail\": {}, \"capacity_gbps\": {:g}}}{}\n",
                   i, l.a, l.port_a, l.b, l.port_b, net::LinkKindName(l.kind), l.rail,
                   l.capacity_Bps * 8 / 1e9, i + 1 < links.size() ? "," : "");
  }
  fmt::format_to(put, "  ]\n}}\n");
  return fmt::to_string(out);
}

}  // namespace railsim::report
