// Software-stack profiles (--stack): what a training framework does by
// default, as one named bundle, instead of defaults nobody sees. A profile
// sets the attention kernel, which communication runs behind compute, the
// optimizer's precision and sharding, and the fixed costs fitted for that
// stack (where runs of it were fitted; otherwise the GPU's own, said so).
// Explicit strategy flags override a profile's defaults.
#pragma once

#include <optional>
#include <string>

#include "railsim/spec/strategy.h"

namespace railsim::spec {

enum class Stack { kMegatron2021, kMegatronCore, kNemo, kTorchtitan, kFsdp };
constexpr Stack kAllStacks[] = {Stack::kMegatron2021, Stack::kMegatronCore, Stack::kNemo, Stack::kTorchtitan,
                                Stack::kFsdp};

/// The largest per-iteration fixed cost a run may be given
/// (--iteration-overhead, a scenario's iteration_overhead).
inline constexpr double kMaxIterationOverheadS = 60;

/// Plain value; the profiles are constants (StackProfileOf).
struct StackProfile {
  Stack stack = Stack::kMegatronCore;
  const char* name = "";        ///< the --stack value
  const char* description = "";
  Attention attention = Attention::kFlash;
  bool overlap_dp_comm = true;    ///< gradient reduce / parameter gather behind compute
  bool overlap_p2p_comm = true;   ///< interleaved pipeline sends behind compute
  bool grad_reduce_16bit = false; ///< gradients reduced in 16-bit
  /// TP-communication overlap wherever it applies (sequence parallelism, tp > 1).
  bool tp_comm_overlap = false;
  /// The stack can overlap TP communication at all (what `search` tries).
  bool has_tp_comm_overlap = true;
  DpSharding dp_sharding = DpSharding::kNone;  ///< when no sharding flag is given
  MainGradsDtype main_grads_dtype = MainGradsDtype::kFp32;
  MainParamsDtype main_params_dtype = MainParamsDtype::kFp32;
  MomentDtype exp_avg_dtype = MomentDtype::kFp32;
  MomentDtype exp_avg_sq_dtype = MomentDtype::kFp32;
  /// Fixed costs fitted on this stack's runs, replacing the GPU's
  /// iteration_overhead / pipeline_chunk_overhead; unset = the GPU's (fitted
  /// on NeMo / Megatron-Core runs).
  std::optional<double> iteration_overhead_s;
  std::optional<double> pipeline_chunk_overhead_s;
  /// Where the fixed costs come from (the GPU preset's: its H100 values were
  /// fitted on NeMo / Megatron-Core runs, the A100's with the SC'21 runs).
  const char* costs_source = "";
};

/// The profile of `stack`.
const StackProfile& StackProfileOf(Stack stack);

/// "megatron-2021", "megatron-core", "nemo", "torchtitan", "fsdp".
const char* StackName(Stack stack);

/// Parses a --stack value; throws Error(where) naming the choices (with a
/// "did you mean") for anything else.
Stack ParseStack(const std::string& text, const std::string& where);

/// Sets the strategy fields the profile decides (attention, overlaps, 16-bit
/// gradient reduction, optimizer dtypes, sharding; TP overlap only where the
/// strategy has sequence parallelism with tp > 1). Callers apply explicit
/// flags after this, so that they win.
void ApplyStackDefaults(const StackProfile& p, Strategy* s);

}  // namespace railsim::spec
