// The `railsim compare` study: for each (HB domain size, radix) of a scenario,
// all network designs side by side (and, when the scenario names a training
// job, the training side: best iteration time on each network).
#pragma once

#include <vector>

#include "railsim/spec/catalog.h"
#include "railsim/spec/scenario.h"
#include "railsim/study/network_study.h"

namespace railsim::study {

struct NetworkCase {
  net::TopologyParams params;           ///< design field unused
  std::vector<DesignResult> designs;    ///< rail-optimized, rail-only, fat-tree
};

struct CompareResult {
  spec::Scenario scenario;
  std::vector<NetworkCase> network;
};

/// Throws Error naming the scenario entry when a (K, radix) pair cannot be
/// built (for example more than three tiers).
void ValidateScenarioNetworks(const spec::Scenario& scenario);

/// Runs the network side. Requires ValidateScenarioNetworks to pass.
CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class);

}  // namespace railsim::study
