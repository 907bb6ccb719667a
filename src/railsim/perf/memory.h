// Per-GPU memory of a training strategy: weights, gradients, optimizer
// states, activations of the micro-batches in flight, and a fixed reserve.
//
// Mixed precision as Megatron-LM: 16-bit weights (2 B/param), fp32 gradient
// accumulation (4 B/param), Adam with fp32 master weights and two moments
// (12 B/param, sharded over data-parallel ranks by the distributed
// optimizer). Activations follow Korthikanti et al. ("Reducing Activation
// Recomputation in Large Transformer Models", 2022), generalised to GQA,
// SwiGLU, MoE, dropout-free models and FlashAttention; 1F1B keeps up to pp
// micro-batches in flight on the first stage, interleaving a factor
// (1 + (pp - 1) / (pp x vp)) more.
#pragma once

#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

/// Parameters held by one GPU of a pipeline stage, split by how they are
/// data-parallel (dense ones over dp x cp ranks, expert ones over dp x cp / ep).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};

enum class Stage { kFirst, kLast, kOnly, kMiddle };

/// Parameters on one GPU of `stage` (kOnly when pp == 1).
StageParams ParamsOnGpu(const PerfContext& c, const spec::Strategy& s, Stage stage);

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserved_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
};

/// Memory of the most loaded GPU (the first or the last pipeline stage).
/// Requires a valid strategy.
MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s);

}  // namespace railsim::perf
