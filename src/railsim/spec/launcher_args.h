// Launcher arguments: a job as the Megatron-LM command line that runs it, or
// as the NeMo (Hydra) overrides of its strategy, so a result of `estimate` or
// `search` pastes into a launch script; and the reverse, so the two can be
// checked against each other (and a pasted line read back).
//
// Megatron-LM (the version kMegatronLmVersion names; every flag written is in
// its megatron/training/arguments.py, whose names tests/data holds): two
// comment lines, then the model (--num-layers, --hidden-size,
// --ffn-hidden-size, --num-attention-heads, --group-query-attention
// --num-query-groups, --kv-channels, --seq-length, --max-position-embeddings,
// --position-embedding-type, --normalization, --swiglu,
// --untie-embeddings-and-output-weights, --disable-bias-linear,
// --qk-layernorm, the dropouts; MLA's --multi-latent-attention,
// --q-lora-rank, --kv-lora-rank, --qk-head-dim, --qk-pos-emb-head-dim,
// --v-head-dim; MoE's --num-experts, --moe-router-topk,
// --moe-ffn-hidden-size, --moe-layer-freq,
// --moe-shared-expert-intermediate-size, --moe-token-dispatcher-type alltoall,
// --moe-grouped-gemm), a timing run on mock data (--tokenizer-type
// NullTokenizer --vocab-size, --mock-data, --train-iters, --lr), then the
// strategy: --tensor-model-parallel-size, --pipeline-model-parallel-size,
// the uneven split (--account-for-embedding-in-pipeline-split,
// --account-for-loss-in-pipeline-split, --decoder-first-pipeline-num-layers,
// --decoder-last-pipeline-num-layers; railsim's own split of layers pp does
// not divide as the last two), --num-virtual-stages-per-pipeline-rank,
// --microbatch-group-size-per-virtual-pipeline-stage,
// --context-parallel-size, --expert-model-parallel-size (and
// --expert-tensor-parallel-size when it is not tp), --micro-batch-size,
// --global-batch-size, --sequence-parallel, --recompute-granularity/-method/
// -num-layers, --use-distributed-optimizer (Megatron-FSDP's
// --use-megatron-fsdp --data-parallel-sharding-strategy for ZeRO-2/3,
// --num-distributed-optimizer-instances for hybrid sharding),
// --use-precision-aware-optimizer with the four dtypes, --overlap-grad-reduce,
// --overlap-param-gather, --grad-reduce-in-bf16,
// --no-overlap-p2p-communication, --tp-comm-overlap, --bf16, --fp8-format
// hybrid (or e4m3 with --fp8-recipe mxfp8), --fp4-format e2m1 --fp4-recipe
// nvfp4, --fp8-param-gather / --fp4-param-gather, --first-last-layers-bf16
// with --num-layers-at-start-in-bf16 and --num-layers-at-end-in-bf16 (the
// layers railsim keeps in bf16, defaults included), --use-flash-attn.
// NeMo: the strategy as model.* overrides of megatron_gpt_config.yaml
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

/// The Megatron-LM whose arguments LauncherArgs writes: main at this commit,
/// whose megatron/training/arguments.py (after core_r0.14.0: it names
/// v0.14's checkpoint format) tests/data/megatron-arguments-000c4ac.txt copies.
constexpr const char* kMegatronLmVersion = "commit 000c4ac24f61159c138b0975def722c65245983c";
/// The iterations a timing run's --train-iters asks for.
constexpr int kTimingIterations = 100;

/// "megatron-args" and "nemo-overrides": the --format names.
const char* LauncherFormatName(Launcher launcher);

/// Why `launcher` cannot run `s` as railsim models it ("" when it can):
/// NeMo overrides have no keys for mxfp8, fp4, low-precision weights, bf16
/// layers, the uneven split or an expert tensor-parallel size not tp; Megatron-LM cannot split the layers as
/// railsim's own uneven split does when its middle stages differ (or with
/// interleaving are not multiples of vp), nor drop the master weights.
/// Requires: `s` valid for `model` (ValidateStrategy).
std::string LauncherProblem(Launcher launcher, const Strategy& s, const ModelSpec& model);

/// The arguments, one per line, each but the last ending " \" (a shell
/// continuation); Megatron-LM's after two comment lines naming the version
/// and what to replace for a training run. Requires: `s` valid for `model`
/// (ValidateStrategy). Throws Error("--format") with LauncherProblem's
/// message when there is one.
std::string LauncherArgs(Launcher launcher, const Strategy& s, const ModelSpec& model);

/// Reads arguments as LauncherArgs writes them (whitespace-separated; "\"
/// continuations, blank lines and # comments ignored, single quotes around a
/// value removed) into a strategy on `gpus` GPUs: dp is gpus / (tp x pp x
/// cp), as the launchers derive it. Megatron-LM's model flags, when given,
/// must describe `model` (its bare ones, --swiglu and the like, are checked
/// when --num-layers is given); the run's (--tokenizer-type, --mock-data,
/// --train-iters, --lr, ...) are read and not checked. Throws Error naming
/// the launcher's flag or key for an unknown one, a bad value, a model
/// mismatch or a strategy ValidateStrategy refuses.
Strategy ParseLauncherArgs(Launcher launcher, std::string_view text, const ModelSpec& model, int64_t gpus);

}  // namespace railsim::spec
