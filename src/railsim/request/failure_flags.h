// `railsim failures` as its user gives it: text values named by their flags
// (from the command line or the Python module), validated and run. What given
// failures do to each design and its job (--fail, --fail-file), and a Monte
// Carlo of a training run's failures (run when no failure is given or when
// --trials or --days is).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/study/failures.h"
#include "railsim/request/job_flags.h"

namespace railsim::request {

struct FailureFlags {
  std::string network = "all";
  std::string system = "dgx-h100";
  std::string gpus, hb_size, radix, oversubscription = "1";
  std::string gpus_per_domain;  ///< "": all K
  ModelFlags model;
  std::string global_batch, attention = "flash";
  StrategyFlags strategy;
  std::string fail, fail_file;
  std::string trials, days, seed = "1";
  std::string failure_catalog = "h100-fleet";
  // Restart plus half an interval is 15 min lost per interruption, within the
  // 16.7 min bound Llama 3's run implies (tests/data/failure-rates.md, section 5).
  std::string checkpoint_interval = "20min", restart_time = "5min";
  std::string spare_policy, target_availability = "0.999";
  bool no_simulate = false;
  // Given at all, even as "" (an empty value is an error, not a default).
  bool fail_given = false, policy_given = false;
};

/// What the run found, per design in the order --network lists them.
struct FailureStudy {
  study::ClusterSetup setup;
  int radix = 0;
  /// One per design that has one of the devices given (empty: none given).
  std::vector<study::FailureImpact> explicit_failures;
  std::vector<study::MonteCarloResult> monte_carlo;     ///< one per design (empty: not run)
  std::optional<study::MonteCarloOptions> options;      ///< with monte_carlo
  /// Devices a design does not have, one sentence each (for stderr and the
  /// JSON's "notes").
  std::vector<std::string> notes;
};

/// Validates every flag of `f` (Error naming the flag), then runs the study.
/// Switch and link names differ between designs (rail-optimized's spine0 is
/// Rail-only's rail0/spine0): with several designs, a device some of them
/// lack is left out of their analysis with a note, and only a name no
/// design has is refused.
/// `progress` (may be empty) gets the share of the Monte Carlo's trials done.
FailureStudy RunFailureFlags(const FailureFlags& f, const std::function<void(double)>& progress = {});

}  // namespace railsim::request
