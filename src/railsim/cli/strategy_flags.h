// The strategy flags (--tp, --pp, --micro-batch-size, --recompute, ...) that
// estimate, traffic and failures share (read by study/job_flags.h).
#pragma once

#include "railsim/study/job_flags.h"

namespace CLI {
class App;
class Option;
}

namespace railsim::cli {

using study::CheckStrategyFlagValues;
using study::MoeFlags;
using study::OptimizerFlags;
using study::ParseMoeFlags;
using study::ParseOptimizerFlags;
using study::ParsePrecision;
using study::ParseStrategy;
using study::StrategyFlags;

/// Declares --moe-alltoall, --moe-imbalance, --moe-max-domains, --moe-overlap,
/// --moe-dispatch-precision.
void AddMoeFlags(CLI::App* sub, MoeFlags* f);

/// Declares --main-grads-dtype, --main-params-dtype, --exp-avg-dtype,
/// --exp-avg-sq-dtype, --data-parallel-sharding and --fsdp-shard-group-size.
/// Returns --data-parallel-sharding's option: the caller sets
/// f->data_parallel_sharding_given from its count() after parsing.
CLI::Option* AddOptimizerFlags(CLI::App* sub, OptimizerFlags* f);

/// Declares the flags on `sub`; --tp, --pp and --micro-batch-size are
/// required unless `optional` (a command whose job is optional). Returns
/// --data-parallel-sharding's option (see AddOptimizerFlags).
CLI::Option* AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional = false);

}  // namespace railsim::cli
