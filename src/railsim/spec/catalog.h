// Catalog: what a switch port and a transceiver cost and draw, per port speed,
// with the source of each number. The network layer prices a bill of
// materials with it; users replace it with --catalog FILE.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::spec {

/// Prices and power of one port speed class (e.g. 400 Gb/s).
struct PortClass {
  double port_speed_Bps = 0;
  double switch_port_cost_usd = 0;
  double transceiver_cost_usd = 0;
  double switch_port_power_w = 0;
  double transceiver_power_w = 0;
  std::map<std::string, std::string> sources;
};

/// A GPU server (one HB domain or a slice of one: a DGX H100 node, a
/// GB200 NVL72 rack) with what it costs and draws, and the HB domain's own
/// switches where they are bought separately (0 when inside the server).
struct ServerClass {
  std::string name;
  int64_t gpus = 0;  ///< GPUs per server
  double cost_usd = 0;
  double power_w = 0;
  double hb_switch_cost_usd = 0;  ///< per server
  double hb_switch_power_w = 0;   ///< per server
  std::map<std::string, std::string> sources;
};

/// How a cluster's cost per day of use is counted: its purchase spread
/// evenly over its lifetime, plus the energy it draws with the data centre's
/// overhead (PUE) at a price per kWh. Defaults are railsim's assumptions;
/// a catalog's "operating" object replaces them.
struct OperatingCost {
  double lifetime_years = 4;
  double electricity_usd_per_kwh = 0.08;
  double pue = 1.25;
  std::map<std::string, std::string> sources = {
      {"lifetime_years", "assumption: GPU clusters are commonly depreciated over 4-6 years; 4 for AI accelerators"},
      {"electricity_usd_per_kwh",
       "assumption: about the US average industrial retail price in 2023-2024 (EIA Electric Power Monthly, "
       "table 5.6.A: about 8 cents per kWh)"},
      {"pue", "assumption: new AI data centres report 1.1-1.4 (Uptime Institute's 2024 survey average: 1.56)"}};
};

struct Catalog {
  std::string name;
  std::string description;
  std::vector<PortClass> port_classes;  ///< distinct speeds
  std::vector<ServerClass> servers;     ///< distinct names; may be empty
  OperatingCost operating;

  /// The class for `port_speed_Bps`, or nullopt when the catalog has none.
  std::optional<PortClass> Find(double port_speed_Bps) const;
  /// The server named `name`, or nullopt.
  std::optional<ServerClass> FindServer(std::string_view name) const;
};

/// Parses and validates a catalog JSON document. Throws Error naming the field.
Catalog ParseCatalogJson(std::string_view text);

std::string CatalogToJson(const Catalog& catalog);

}  // namespace railsim::spec
