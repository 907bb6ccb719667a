// Formatting of the failure study (study/failures.h): tables and JSON of
// explicit failures and of the Monte Carlo, per design.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "railsim/study/failures.h"

namespace railsim::report {

/// What the command ran, for the header and the JSON's top level.
struct FailureRun {
  const study::ClusterSetup* setup = nullptr;
  int radix = 0;
  std::vector<study::FailureImpact> explicit_failures;  ///< one per design (empty: none given)
  std::vector<study::MonteCarloResult> monte_carlo;     ///< one per design (empty: not run)
  std::optional<study::MonteCarloOptions> options;      ///< with monte_carlo
  std::vector<std::string> notes;                       ///< devices a design lacks (JSON "notes")
};

std::string FailureTable(const FailureRun& run);
std::string FailureJson(const FailureRun& run);

}  // namespace railsim::report
