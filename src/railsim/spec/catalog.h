// Catalog: what a switch port and a transceiver cost and draw, per port speed,
// with the source of each number. The network layer prices a bill of
// materials with it; users replace it with --catalog FILE.
#pragma once

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

struct Catalog {
  std::string name;
  std::string description;
  std::vector<PortClass> port_classes;  ///< distinct speeds

  /// The class for `port_speed_Bps`, or nullopt when the catalog has none.
  std::optional<PortClass> Find(double port_speed_Bps) const;
};

/// Parses and validates a catalog JSON document. Throws Error naming the field.
Catalog ParseCatalogJson(std::string_view text);

std::string CatalogToJson(const Catalog& catalog);

}  // namespace railsim::spec
