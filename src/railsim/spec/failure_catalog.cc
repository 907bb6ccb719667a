#include "railsim/spec/failure_catalog.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

// A component failing 1000 times a year, or out for over eleven years, is a
// typing error.
constexpr double kMaxRatePerYear = 1000;
constexpr double kMaxMttrHours = 1e5;
constexpr double kMaxUsd = 1e9;
constexpr double kMaxWatts = 1e6;

}  // namespace

const char* ComponentName(Component c) {
  switch (c) {
    case Component::kGpu: return "gpu";
    case Component::kHbm: return "hbm";
    case Component::kNic: return "nic";
    case Component::kTransceiver: return "transceiver";
    case Component::kCable: return "cable";
    case Component::kLeafSwitch: return "leaf_switch";
    case Component::kSpineSwitch: return "spine_switch";
    case Component::kCoreSwitch: return "core_switch";
    case Component::kHost: return "host";
  }
  return "?";
}

bool IsNetworkComponent(Component c) {
  return c != Component::kGpu && c != Component::kHbm && c != Component::kHost;
}

FailureCatalog ParseFailureCatalogJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  FailureCatalog catalog;
  catalog.name = r.Name("name");
  catalog.description = r.StringOr("description", "");
  catalog.gpus_per_host = static_cast<int>(r.IntOr("gpus_per_host", 8, 1, 1 << 20));
  JsonReader components = r.Object("components");
  for (int i = 0; i < kComponents; ++i) {
    JsonReader c = components.Object(ComponentName(Component(i)));
    ComponentRates& rates = catalog.components[size_t(i)];
    rates.rate_per_year = c.Number("rate_per_year", 0, kMaxRatePerYear);
    rates.mttr_hours = c.Number("mttr_hours", 0, kMaxMttrHours);
    if (rates.mttr_hours <= 0) {
      throw Error(c.PointerTo("mttr_hours"), fmt::format("expected a repair time > 0 hours, got 0"));
    }
    rates.sources = c.StringMapOr("sources");
    c.Finish();
  }
  components.Finish();
  if (r.Has("ocs")) {
    JsonReader o = r.Object("ocs");
    catalog.ocs_port_cost_usd = o.Number("port_cost_usd", 0, kMaxUsd);
    catalog.ocs_port_power_w = o.Number("port_power_w", 0, kMaxWatts);
    catalog.ocs_sources = o.StringMapOr("sources");
    o.Finish();
  }
  r.Finish();
  return catalog;
}

std::string FailureCatalogToJson(const FailureCatalog& catalog) {
  nlohmann::ordered_json j;
  j["name"] = catalog.name;
  j["description"] = catalog.description;
  j["gpus_per_host"] = catalog.gpus_per_host;
  nlohmann::ordered_json components;
  for (int i = 0; i < kComponents; ++i) {
    const ComponentRates& rates = catalog.components[size_t(i)];
    nlohmann::ordered_json c;
    c["rate_per_year"] = rates.rate_per_year;
    c["mttr_hours"] = rates.mttr_hours;
    c["sources"] = SourcesJson(rates.sources);
    components[ComponentName(Component(i))] = c;
  }
  j["components"] = components;
  j["ocs"] = {{"port_cost_usd", catalog.ocs_port_cost_usd},
              {"port_power_w", catalog.ocs_port_power_w},
              {"sources", SourcesJson(catalog.ocs_sources)}};
  return j.dump(2) + "\n";
}

}  // namespace railsim::spec
