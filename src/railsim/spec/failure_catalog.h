// Failure catalog: how often each kind of cluster component fails and how
// long it stays out of service, with the source of every number. The
// failure study (study/failures.h) draws its Monte Carlo from it; users
// replace it with --failure-catalog FILE. The default preset's rates come
// from published fleet data (tests/data/failure-rates.md); its repair times
// are labelled assumptions, as no published value exists.
#pragma once

#include <array>
#include <map>
#include <string>
#include <string_view>

namespace railsim::spec {

/// Component kinds, each with its unit of count: per GPU (gpu, hbm), per NIC,
/// per transceiver, per cable of the NIC network, per switch chassis of a
/// tier, per host (a server of gpus_per_host GPUs).
enum class Component : uint8_t {
  kGpu, kHbm, kNic, kTransceiver, kCable, kLeafSwitch, kSpineSwitch, kCoreSwitch, kHost
};
constexpr int kComponents = 9;
/// "gpu", "hbm", "nic", "transceiver", "cable", "leaf_switch", "spine_switch",
/// "core_switch", "host": the catalog's keys.
const char* ComponentName(Component c);
/// True for parts of the NIC network (NIC, optics, cables, switches).
bool IsNetworkComponent(Component c);

struct ComponentRates {
  double rate_per_year = 0;  ///< failures per component-year (exponential)
  double mttr_hours = 0;     ///< mean time out of service (exponential)
  std::map<std::string, std::string> sources;
};

struct FailureCatalog {
  std::string name;
  std::string description;
  int gpus_per_host = 8;
  std::array<ComponentRates, kComponents> components{};
  /// The optical circuit switch layer a Rail-only cluster may add to patch
  /// spare GPUs into a rail (spare policy "ocs").
  double ocs_port_cost_usd = 0;
  double ocs_port_power_w = 0;
  std::map<std::string, std::string> ocs_sources;

  const ComponentRates& of(Component c) const { return components[static_cast<size_t>(c)]; }
};

/// Parses and validates a failure catalog JSON document. Every component key
/// must be present; rates in [0, 1000] per year, repair times in (0, 10^5] h.
/// Throws Error naming the JSON pointer.
FailureCatalog ParseFailureCatalogJson(std::string_view text);

std::string FailureCatalogToJson(const FailureCatalog& catalog);

}  // namespace railsim::spec
