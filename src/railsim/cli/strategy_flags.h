// The strategy flags (--tp, --pp, --micro-batch-size, --recompute, ...) that
// estimate, traffic and failures share, declared from request/flag_table.h's
// rows (read by request/job_flags.h).
#pragma once

#include "railsim/request/job_flags.h"

namespace CLI {
class App;
class Option;
}

namespace railsim::cli {

using request::CheckStrategyFlagValues;
using request::MoeFlags;
using request::OptimizerFlags;
using request::ParseMoeFlags;
using request::ParseOptimizerFlags;
using study::ParsePrecision;
using request::ParseStrategy;
using request::StrategyFlags;

/// Declares every row of request::StrategyFlagTable on `sub`; --tp, --pp and
/// --micro-batch-size are required unless `optional` (a command whose job is
/// optional). Returns --data-parallel-sharding's option (its count() says
/// whether it was given; the table's row also sets
/// OptimizerFlags::data_parallel_sharding_given).
CLI::Option* AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional = false);

}  // namespace railsim::cli
