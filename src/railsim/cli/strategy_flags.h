// The strategy flags (--tp, --pp, --micro-batch-size, --recompute, ...) that
// estimate, traffic and failures share, and their validation against a job.
#pragma once

#include <string>

#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"

namespace CLI {
class App;
class Option;
}

namespace railsim::cli {

// How MoE tokens are dispatched (also on search).
struct MoeFlags {
  std::string alltoall = "auto", imbalance = "1", max_domains = "any", dispatch_precision = "bf16";
  bool overlap = false;
};

/// Declares --moe-alltoall, --moe-imbalance, --moe-max-domains, --moe-overlap,
/// --moe-dispatch-precision.
void AddMoeFlags(CLI::App* sub, MoeFlags* f);
/// Writes them into `s` (validated against the model by spec::ValidateStrategy).
void ParseMoeFlags(const MoeFlags& f, spec::Strategy* s);

// Optimizer precision and data-parallel sharding, with Megatron-Core's names.
struct OptimizerFlags {
  std::string main_grads_dtype = "fp32", main_params_dtype = "fp32", exp_avg_dtype = "fp32",
              exp_avg_sq_dtype = "fp32";
  std::string data_parallel_sharding;
  std::string fsdp_shard_group_size = "all";
  /// Set by AddOptimizerFlags: whether --data-parallel-sharding was given
  /// (without it: none, or the distributed optimizer's).
  const CLI::Option* sharding_option = nullptr;
};

/// Declares --main-grads-dtype, --main-params-dtype, --exp-avg-dtype,
/// --exp-avg-sq-dtype, --data-parallel-sharding and --fsdp-shard-group-size.
void AddOptimizerFlags(CLI::App* sub, OptimizerFlags* f);
/// Writes them into `s`; throws Error naming the flag for an unknown value.
/// A --data-parallel-sharding given overrides --distributed-optimizer.
void ParseOptimizerFlags(const OptimizerFlags& f, spec::Strategy* s);

struct StrategyFlags {
  std::string tp, pp, dp, cp = "1", ep = "1", vp = "1", micro_batch;
  std::string recompute = "none";
  bool sequence_parallel = false, distributed_optimizer = false, no_dp_overlap = false;
  bool grad_reduce_in_bf16 = false;
  bool tp_comm_overlap = false, no_p2p_overlap = false;
  std::string precision = "bf16";
  OptimizerFlags optimizer;
  MoeFlags moe;
};

/// Declares the flags on `sub`; --tp, --pp and --micro-batch-size are
/// required unless `optional` (a command whose job is optional).
void AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional = false);

/// Parses every value given, without a job to check it against: what a
/// command whose job is optional does when none is given, so that no flag
/// it accepts goes unread. Throws Error naming the flag.
void CheckStrategyFlagValues(const StrategyFlags& f);

/// --precision: bf16, or fp8 when the context's GPU has an FP8 peak.
spec::Precision ParsePrecision(const std::string& text, const perf::PerfContext& c);

/// Throws Error naming the flag unless the strategy is valid for the job in
/// `c` (its model, GPUs and placement).
spec::Strategy ParseStrategy(const StrategyFlags& f, const perf::PerfContext& c, int64_t global_batch,
                             spec::Attention attention);

}  // namespace railsim::cli
