#include "railsim/spec/catalog.h"

#include <cmath>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/units.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

// Prices and watts beyond these are typing errors, not hardware.
constexpr double kMaxUsd = 1e9;
constexpr double kMaxWatts = 1e6;

}  // namespace

std::optional<PortClass> Catalog::Find(double port_speed_Bps) const {
  for (const PortClass& c : port_classes) {
    // "1.6Tbps" and "1600Gbps" may parse a rounding apart.
    if (std::fabs(c.port_speed_Bps - port_speed_Bps) <= 1e-9 * port_speed_Bps) return c;
  }
  return std::nullopt;
}

std::optional<ServerClass> Catalog::FindServer(std::string_view name) const {
  for (const ServerClass& s : servers) {
    if (s.name == name) return s;
  }
  return std::nullopt;
}

Catalog ParseCatalogJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  Catalog catalog;
  catalog.name = r.Name("name");
  catalog.description = r.StringOr("description", "");
  const nlohmann::json& classes = r.Array("port_classes");
  if (classes.empty()) throw Error("/port_classes", "expected at least one port class");
  for (size_t i = 0; i < classes.size(); ++i) {
    JsonReader c(classes[i], fmt::format("/port_classes/{}", i));
    PortClass p;
    p.port_speed_Bps = c.Bandwidth("port_speed");
    p.switch_port_cost_usd = c.Number("switch_port_cost_usd", 0, kMaxUsd);
    p.transceiver_cost_usd = c.Number("transceiver_cost_usd", 0, kMaxUsd);
    p.switch_port_power_w = c.Number("switch_port_power_w", 0, kMaxWatts);
    p.transceiver_power_w = c.Number("transceiver_power_w", 0, kMaxWatts);
    p.sources = c.StringMapOr("sources");
    c.Finish();
    if (catalog.Find(p.port_speed_Bps)) {
      throw Error(c.PointerTo("port_speed"),
                  fmt::format("duplicate port speed {}", units::FormatBitRate(p.port_speed_Bps)));
    }
    catalog.port_classes.push_back(p);
  }
  if (r.Has("servers")) {
    const nlohmann::json& servers = r.Array("servers");
    for (size_t i = 0; i < servers.size(); ++i) {
      JsonReader c(servers[i], fmt::format("/servers/{}", i));
      ServerClass s;
      s.name = c.String("name");
      s.gpus = c.Int("gpus", 1, 1 << 20);
      s.cost_usd = c.Number("cost_usd", 0, kMaxUsd);
      s.power_w = c.Number("power_w", 0, kMaxWatts);
      s.hb_switch_cost_usd = c.NumberOr("hb_switch_cost_usd", 0, 0, kMaxUsd);
      s.hb_switch_power_w = c.NumberOr("hb_switch_power_w", 0, 0, kMaxWatts);
      s.sources = c.StringMapOr("sources");
      c.Finish();
      if (catalog.FindServer(s.name)) throw Error(c.PointerTo("name"), fmt::format("duplicate server {}", Quoted(s.name)));
      catalog.servers.push_back(s);
    }
  }
  if (r.Has("operating")) {
    JsonReader o = r.Object("operating");
    OperatingCost& op = catalog.operating;
    op.lifetime_years = o.Number("lifetime_years", 0.1, 100);
    op.electricity_usd_per_kwh = o.Number("electricity_usd_per_kwh", 0, 100);
    op.pue = o.Number("pue", 1, 10);
    op.sources = o.StringMapOr("sources");
    o.Finish();
  }
  r.Finish();
  return catalog;
}

std::string CatalogToJson(const Catalog& catalog) {
  nlohmann::ordered_json j;
  j["name"] = catalog.name;
  j["description"] = catalog.description;
  j["port_classes"] = nlohmann::ordered_json::array();
  for (const PortClass& p : catalog.port_classes) {
    nlohmann::ordered_json c;
    c["port_speed"] = units::FormatBitRate(p.port_speed_Bps);
    c["switch_port_cost_usd"] = p.switch_port_cost_usd;
    c["transceiver_cost_usd"] = p.transceiver_cost_usd;
    c["switch_port_power_w"] = p.switch_port_power_w;
    c["transceiver_power_w"] = p.transceiver_power_w;
    c["sources"] = SourcesJson(p.sources);
    j["port_classes"].push_back(c);
  }
  if (!catalog.servers.empty()) {
    j["servers"] = nlohmann::ordered_json::array();
    for (const ServerClass& s : catalog.servers) {
      nlohmann::ordered_json c;
      c["name"] = s.name;
      c["gpus"] = s.gpus;
      c["cost_usd"] = s.cost_usd;
      c["power_w"] = s.power_w;
      c["hb_switch_cost_usd"] = s.hb_switch_cost_usd;
      c["hb_switch_power_w"] = s.hb_switch_power_w;
      c["sources"] = SourcesJson(s.sources);
      j["servers"].push_back(c);
    }
  }
  const OperatingCost& op = catalog.operating;
  j["operating"] = {{"lifetime_years", op.lifetime_years},
                    {"electricity_usd_per_kwh", op.electricity_usd_per_kwh},
                    {"pue", op.pue},
                    {"sources", SourcesJson(op.sources)}};
  return j.dump(2) + "\n";
}

}  // namespace railsim::spec
