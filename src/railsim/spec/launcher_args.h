// Launcher arguments: a strategy as the Megatron-LM command-line flags or the
// NeMo (Hydra) overrides that run it, so a result of `estimate` or `search`
// pastes into a launch script; and the reverse, so the two can be checked
// against each other (and a pasted line read back).
//
// Megatron-LM: --tensor-model-parallel-size, --pipeline-model-parallel-size,
// --num-layers-per-virtual-pipeline-stage (or, when pp x vp does not divide
// the layers, --virtual-pipeline-model-parallel-size), --context-parallel-size,
// --expert-model-parallel-size (and --expert-tensor-parallel-size when it is
// not tp), --micro-batch-size, --global-batch-size,
// --sequence-parallel, --recompute-granularity/-method/-num-layers,
// --use-distributed-optimizer, --overlap-grad-reduce, --overlap-param-gather,
// --grad-reduce-in-bf16, --no-overlap-p2p-communication, --tp-comm-overlap,
// --bf16, --fp8-format hybrid (or e4m3 with --fp8-recipe mxfp8), --fp4-format
// e2m1 --fp4-recipe nvfp4, --fp8-param-gather / --fp4-param-gather,
// --first-last-layers-bf16 with --num-layers-at-start-in-bf16 and
// --num-layers-at-end-in-bf16, --use-flash-attn.
// NeMo: the same as model.* overrides of megatron_gpt_config.yaml
// (model.tensor_model_parallel_size=8, model.optim.name=distributed_fused_adam, ...).
//
// Only what a launcher carries is written: the MoE dispatch settings
// (--moe-alltoall, ...) are railsim's model of the network, not launch flags.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"

namespace railsim::spec {

enum class Launcher { kMegatron, kNemo };

/// "megatron-args" and "nemo-overrides": the --format names.
const char* LauncherFormatName(Launcher launcher);

/// The arguments, one per line, each but the last ending " \" (a shell
/// continuation). Requires: `s` valid for `model` (ValidateStrategy). Throws
/// Error("--format") for NeMo overrides of what they cannot say (mxfp8, fp4,
/// low-precision weights, bf16 layers, an expert tensor-parallel size not tp).
std::string LauncherArgs(Launcher launcher, const Strategy& s, const ModelSpec& model);

/// Reads arguments as LauncherArgs writes them (whitespace-separated; "\"
/// continuations and blank lines ignored) into a strategy on `gpus` GPUs: dp
/// is gpus / (tp x pp x cp), as the launchers derive it. Throws Error naming
/// the launcher's flag or key for an unknown one, a bad value or a strategy
/// ValidateStrategy refuses.
Strategy ParseLauncherArgs(Launcher launcher, std::string_view text, const ModelSpec& model, int64_t gpus);

}  // namespace railsim::spec
