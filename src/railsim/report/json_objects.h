// JSON building blocks shared by report/ formatters. Internal to report/:
// nlohmann::json must not leak into other layers, so only report/*.cc include this.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"
#include "railsim/study/network_study.h"

namespace railsim::report {

/// Insertion-ordered, so documents print in a fixed, readable key order.
using Json = nlohmann::ordered_json;

/// One design's parameters and bill of materials.
Json DesignObject(const study::DesignResult& result);
/// DesignObject of each, plus cost_saving and power_saving.
Json DesignsArray(const std::vector<study::DesignResult>& results);

/// A strategy's degrees and switches, with the keys of `estimate --format json`.
Json StrategyObject(const spec::Strategy& s);
/// Model, system, network timed, GPUs, HB domain, placement.
Json ContextObject(const perf::PerfContext& c);

}  // namespace railsim::report
