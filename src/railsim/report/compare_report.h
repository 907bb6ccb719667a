// Formatting the `railsim compare` study as text or one JSON document.
#pragma once

#include <string>

#include "railsim/study/compare.h"

namespace railsim::report {

std::string CompareTable(const study::CompareResult& result);

/// {"scenario": name, "network": [{"gpus", "hb_domain_size", "radix",
/// "designs": [...]}, ...]}
std::string CompareJson(const study::CompareResult& result);

}  // namespace railsim::report
