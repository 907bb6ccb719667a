// The --stack profiles: each framework's defaults, with where they come from.
#include "railsim/spec/stack.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"

namespace railsim::spec {
namespace {

StackProfile Megatron2021() {
  // Megatron-LM as the SC'21 paper ran it (Narayanan et al. 2021): the
  // softmax materialised (no FlashAttention), the gradient all-reduce after
  // the backward pass in 16 bit, pipeline sends in the critical path.
  StackProfile p;
  p.stack = Stack::kMegatron2021;
  p.name = "megatron-2021";
  p.description = "Megatron-LM 2021 (SC'21): no FlashAttention, no overlap, 16-bit gradient all-reduce";
  p.attention = Attention::kClassic;
  p.overlap_dp_comm = false;
  p.overlap_p2p_comm = false;
  p.grad_reduce_16bit = true;
  p.has_tp_comm_overlap = false;
  p.costs_source = "the GPU preset's";
  return p;
}

StackProfile MegatronCore() {
  // Megatron-Core's own defaults: overlapped gradient reduction and pipeline
  // sends; the distributed optimizer and TP overlap are opt-in flags there.
  StackProfile p;
  p.stack = Stack::kMegatronCore;
  p.name = "megatron-core";
  p.description = "Megatron-Core: FlashAttention, overlapped DP and pipeline communication";
  p.costs_source = "the GPU preset's";
  return p;
}

StackProfile Nemo() {
  // NeMo's recipes on Megatron-Core: the distributed optimizer
  // (distributed_fused_adam) and TP-communication overlap (ub_tp_comm_overlap)
  // with sequence parallelism.
  StackProfile p = MegatronCore();
  p.stack = Stack::kNemo;
  p.name = "nemo";
  p.description = "NeMo recipes: Megatron-Core with the distributed optimizer and TP-communication overlap";
  p.tp_comm_overlap = true;
  p.dp_sharding = DpSharding::kOptimizer;
  // NeMo's step time (train_step_timing) has no per-step cost beyond what
  // the model times: the H100 fit on NeMo recipes leaves none
  // (H100RefitTest.StepTimeParameters), where Megatron-LM's iteration time
  // pays the GPU's (227 ms on H100); perhaps as NeMo's timer runs around the
  // training step only, Megatron-LM's from one iteration to the next.
  p.iteration_overhead_s = 0.0;
  p.costs_source = "per iteration none (fitted on NeMo's H100 recipes), per chunk the GPU preset's";
  return p;
}

StackProfile Fsdp(Stack stack, const char* name, const char* description) {
  // PyTorch FSDP (FSDP2's fully_shard in torchtitan; llm-foundry, NeMo
  // AutoModel): everything sharded, fp32 sharded parameters and gradients
  // reduced in fp32 (MixedPrecisionPolicy's reduce_dtype), the next layer's
  // all-gather prefetched behind compute.
  StackProfile p;
  p.stack = stack;
  p.name = name;
  p.description = description;
  p.dp_sharding = DpSharding::kFull;
  p.has_tp_comm_overlap = stack == Stack::kTorchtitan;  // async TP; FSDP alone has no TP
  p.costs_source = "the GPU preset's, not fitted on this stack";
  return p;
}

const std::vector<StackProfile>& Profiles() {
  static const std::vector<StackProfile> profiles = {
      Megatron2021(), MegatronCore(), Nemo(),
      Fsdp(Stack::kTorchtitan, "torchtitan", "torchtitan: FSDP2 fully sharded, fp32 reduction, prefetched gathers"),
      Fsdp(Stack::kFsdp, "fsdp", "PyTorch FSDP (llm-foundry, NeMo AutoModel): fully sharded, fp32 reduction")};
  return profiles;
}

}  // namespace

const StackProfile& StackProfileOf(Stack stack) { return Profiles()[size_t(stack)]; }

const char* StackName(Stack stack) { return StackProfileOf(stack).name; }

Stack ParseStack(const std::string& text, const std::string& where) {
  std::vector<std::string> names;
  for (const StackProfile& p : Profiles()) {
    if (text == p.name) return p.stack;
    names.push_back(p.name);
  }
  throw Error(where, fmt::format("expected one of {}, got '{}'{}", fmt::join(names, ", "), text,
                                 DidYouMean(text, names)));
}

void ApplyStackDefaults(const StackProfile& p, Strategy* s) {
  s->attention = p.attention;
  s->overlap_dp_comm = p.overlap_dp_comm;
  s->overlap_p2p_comm = p.overlap_p2p_comm;
  s->grad_reduce_16bit = p.grad_reduce_16bit;
  s->tp_comm_overlap = p.tp_comm_overlap && s->sequence_parallel && s->tp > 1;
  s->dp_sharding = p.dp_sharding;
  s->main_grads_dtype = p.main_grads_dtype;
  s->main_params_dtype = p.main_params_dtype;
  s->exp_avg_dtype = p.exp_avg_dtype;
  s->exp_avg_sq_dtype = p.exp_avg_sq_dtype;
}

}  // namespace railsim::spec
