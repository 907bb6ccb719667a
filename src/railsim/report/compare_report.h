// Formatting the `railsim compare` study: one side-by-side table per HB
// domain size (rail-optimized, Rail-only, ideal), the verdict in sentences,
// or one JSON document.
#pragma once

#include <string>
#include <vector>

#include "railsim/study/compare.h"

namespace railsim::report {

std::string CompareTable(const study::CompareResult& result);

/// {"scenario": name, "network": [{"gpus", "hb_domain_size", "radix",
/// "designs": [...]}, ...], "training": [...], "moe": {...}, "verdict": [...]}
std::string CompareJson(const study::CompareResult& result);

/// The verdict in plain sentences with their numbers: what Rail-only saves
/// per HB domain size, what it costs in iteration time, what the HB domain
/// buys against the ideal network, and where Rail-only is the wrong choice.
std::vector<std::string> CompareVerdict(const study::CompareResult& result);

}  // namespace railsim::report
