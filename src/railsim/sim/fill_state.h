// What the max-min fills share (sim/max_min_fill.h): every directed link's
// capacity and the rates flows take on it, and the groups a fill freezes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace railsim::sim {

/// Per directed link (2 x link + direction).
struct LinkRates {
  std::vector<double> capacity;   ///< bytes/s, at the fabric's efficiency
  std::vector<double> used;       ///< the rates of the frozen flows crossing it (counts times rates)
  std::vector<int64_t> unfrozen;  ///< during a fill: its unfrozen flows over all ranks (0 between fills)

  /// What an unfrozen flow would get on link `l`: an even share of what the
  /// frozen ones leave.
  double Share(int32_t l) const {
    return std::max(0.0, capacity[size_t(l)] - used[size_t(l)]) / double(std::max<int64_t>(1, unfrozen[size_t(l)]));
  }
};

/// Flows frozen at one rate by a fill: an island's flows[begin, end) on this
/// rank (maybe none here when ranks split the flows), to become a group.
struct FrozenRange {
  double level;
  size_t begin, end;
};

}  // namespace railsim::sim
