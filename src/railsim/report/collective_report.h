// Formatting `railsim collective` and `railsim alltoall` results: a table for
// people, one JSON document for scripts, and the per-link CSV export.
#pragma once

#include <optional>
#include <string>

#include "railsim/study/collective_study.h"

namespace railsim::report {

/// The collective, its plan's phases with analytic times, and (simulated)
/// the simulated time, busiest links and bytes by tier.
std::string CollectiveTable(const study::CollectiveRequest& r, const study::CollectiveOutcome& o);
/// {"op", "algorithm", "group", "bytes", "time_s", "analytic_time_s",
///  "simulated", "phases": [...], "network": {...}, and when simulated
///  "simulated_time_s", "flows", "links_busiest", "bytes_by_tier", "routing",
///  "seed", "events"}.
std::string CollectiveJson(const study::CollectiveRequest& r, const study::CollectiveOutcome& o);

/// The all-to-all, and for Rail-only the same inputs on the rail-optimized
/// network (`baseline`) with the overhead.
std::string AllToAllTable(const study::CollectiveRequest& r, const study::CollectiveOutcome& o,
                          const std::optional<study::CollectiveOutcome>& baseline);
/// As CollectiveJson plus "time_s", "hb_bw_Bps", "nic_bw_Bps", "schedule",
/// "bytes_per_pair" and, for Rail-only, "overhead_vs_rail_optimized",
/// "rail_optimized_time_s" (simulated or analytic: "rail_optimized_simulated")
/// and, when simulated, "rail_optimized_flows" and "flows_simulated_total"
/// (every flow simulated, both networks).
std::string AllToAllJson(const study::CollectiveRequest& r, const study::CollectiveOutcome& o,
                         const std::optional<study::CollectiveOutcome>& baseline);

/// One row per directed link that carried bytes: name, tier, rail, bytes,
/// busy time, utilisation. Requires a simulated outcome.
std::string LinksCsv(const study::CollectiveOutcome& o);

}  // namespace railsim::report
