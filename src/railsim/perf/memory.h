// Per-GPU memory of a training strategy: weights, gradients, optimizer
// states, activations of the micro-batches in flight, and a fixed reserve.
//
// Mixed precision as Megatron-LM: 16-bit weights (2 B/param), a main-gradient
// buffer (4 B/param fp32 by default, 2 in bf16), Adam with a master copy and
// two moments (12 B/param all fp32; the strategy's optimizer dtypes shrink
// them). Data-parallel sharding (ZeRO-1/2/3) divides the optimizer states,
// then the gradients, then the weights by the dp x cp ranks (the expert
// data-parallel tp x cp x dp / (ep x etp) for expert parameters); fully sharded weights add the gathered 16-bit weights
// of the layer running and the one prefetched, and one layer's unsharded
// gradient before its reduce-scatter. Activations follow Korthikanti et al. ("Reducing Activation
// Recomputation in Large Transformer Models", 2022), generalised to GQA,
// SwiGLU, MoE, dropout-free models and FlashAttention; 1F1B keeps up to pp
// micro-batches in flight on the first stage, and the interleaved schedule
// as many chunks as Megatron-Core's warm-up runs (MicrobatchesInFlight).
//
// The per-layer quantities depend only on (tp, cp, micro-batch, sequence
// parallelism, attention, ep, etp): LayerMemory holds them so that the search
// computes them once per such group.
#pragma once

#include <optional>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/perf/stage_load.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

/// Bytes and parameters of one layer (and the embedding and output layers)
/// on one GPU, per micro-batch where it applies.
struct LayerMemory {
  double act_layer = 0;            ///< activations kept without recomputation
  double act_layer_selective = 0;  ///< ... with the attention core recomputed
  double act_layer_input = 0;      ///< a layer's input (all full recomputation keeps)
  double act_embedding = 0;        ///< embedding output and dropout mask
  double act_logits = 0;           ///< 16-bit and fp32 logits on the last stage
  double params_layer_dense = 0;   ///< one layer's parameters held on this GPU
  double params_layer_expert = 0;  ///< one layer's expert parameters on this GPU
  double params_embedding = 0;     ///< word (vocab-parallel) and position embeddings
  double params_word = 0;          ///< the word-embedding share alone
  double params_output = 0;        ///< untied output layer share (0 when tied)
  double params_final_norm = 0;
  double params_layer_linear = 0;  ///< GEMM weights of one layer on this GPU (FP8 copies)
  // The same for an MoE model's dense layers (== the layer's in a dense model).
  double act_dense_layer = 0, act_dense_layer_selective = 0;
  double params_dense_layer = 0, params_dense_layer_linear = 0;
  /// What a layer's activations save by keeping its GEMM inputs in the
  /// strategy's low precision (0 in bf16): a layer kept in bf16
  /// (spec::Strategy::bf16_layers) holds this much more than act_layer.
  double act_low_precision_saving = 0, act_dense_low_precision_saving = 0;
};

/// Requires a strategy that passed spec::ValidateStrategy for c.model.
LayerMemory ComputeLayerMemory(const PerfContext& c, const spec::Strategy& s);

/// Parameters held by one GPU of a pipeline stage, split by how they are
/// data-parallel (dense ones over dp x cp ranks, expert ones over the expert
/// data-parallel ranks, spec::Strategy::expert_dp()).
struct StageParams {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};

/// Micro-batches whose activations a stage holds at its peak, in units of
/// the stage's layers, for rank 0 (kFirst), 1 (kMiddle, the middle rank
/// with the most) and pp - 1 (kLast): ChunksInFlight / vp, so under 1F1B
/// pp - r on pipeline rank r and interleaved with N = pp, first stage
/// pp + (pp - 1)/vp, last pp - (pp - 1)/vp. The memory itself weighs each
/// virtual stage's layers (StageLoad::in_flight_layers).
double MicrobatchesInFlight(const spec::Strategy& s, Stage stage);

/// Bytes per parameter a GPU keeps before sharding, by what data-parallel
/// sharding divides: the 16-bit weights (2), the main-gradient buffer (4 in
/// fp32, 2 in bf16 or with --grad-reduce-in-bf16) and the optimizer states
/// (master copy 4 / 2 / 0, an fp32 copy of the gradient shard when a 16-bit
/// buffer feeds an fp32-gradient optimizer, and the two moments, 4 or 2 each).
struct BytesPerParam {
  double weights = 0;
  double gradients = 0;
  double master = 0;     ///< master copy of the weights
  double grad_copy = 0;  ///< fp32 copy of the gradient shard
  double moments = 0;    ///< Adam's exp_avg and exp_avg_sq
  double optimizer() const { return master + grad_copy + moments; }
};
BytesPerParam OptimizerBytesPerParam(const spec::Strategy& s);

/// Parameters whose optimizer states one GPU keeps: all of them, or with the
/// distributed optimizer its shard (dense over dp x cp, experts over expert_dp()).
double OptimizerShardParams(const StageParams& p, const spec::Strategy& s);
/// The ranks a data-parallel shard spans: the shard group for the dense
/// parameters, expert_dp() for the experts. Read once per strategy: the
/// search sizes every pipeline stage of every strategy with them.
struct ShardRanks {
  explicit ShardRanks(const spec::Strategy& s) : dense(double(s.shard_group())), expert(double(s.expert_dp())) {}
  /// The shard of `p` over the data-parallel ranks, whatever the sharding.
  double Of(const StageParams& p) const { return p.dense / dense + p.expert / expert; }
  double dense, expert;
};
double ShardParams(const StageParams& p, const spec::Strategy& s);

/// Parameters on one GPU of the pipeline rank `load` describes (StageLoads).
StageParams ParamsOnGpu(const PerfContext& c, const LayerMemory& lm, const StageLoad& load);

/// Bytes on one GPU, each a whole number (parts rounded up, capacity down).
struct MemoryBreakdown {
  double weights_bytes = 0;
  /// Quantized copies of the low-precision layers' GEMM weights (FP8: the
  /// weight and its transpose; mxfp8 and fp4: row- and column-wise copies).
  double fp8_weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;
  double reserved_bytes = 0;
  double total_bytes = 0;
  double capacity_bytes = 0;
  bool fits = false;
};

/// Memory of the most loaded GPU (every pipeline rank's StageLoad is tried;
/// on a tie the first rank, then the last, then the lowest middle one). Requires a valid strategy; `lm` from
/// ComputeLayerMemory for its group.
MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm);
MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s);
/// The same from the strategy's FoldedStageLoads (the search's fast path).
MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm,
                               const std::vector<StageLoad>& folded);

/// EstimateMemory(c, s, lm, folded) when it fits; nullopt as soon as a stage
/// is over capacity, without looking at the others (the search's test of
/// the strategies whose first rank fits, StageStateBytes below).
std::optional<MemoryBreakdown> MemoryIfFits(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm,
                                            const std::vector<StageLoad>& folded);

/// One rank's memory in the two parts the search varies separately, each
/// rounded up as MemoryBreakdown's parts are: what the layout, precision and
/// optimizer choice hold (weights, their low-precision copies, gradients,
/// optimizer states; the recomputation and the micro-batches in flight leave
/// it alone) and the activations (the optimizer choice leaves them alone).
/// MemoryLimit(c).Over(state, activations) is exactly !fits of that rank's
/// MemoryBreakdown, so the search can compute each part once and prune
/// without the whole breakdown.
double StageStateBytes(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load);
double StageActivationBytesRounded(const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load);
struct MemoryLimit {
  explicit MemoryLimit(const PerfContext& c);
  /// Adds in MemoryBreakdown::total_bytes's order, so the sums are equal.
  bool Over(double state_bytes, double activation_bytes) const {
    return !(state_bytes + activation_bytes + reserved_bytes <= capacity_bytes);
  }
  double reserved_bytes, capacity_bytes;
};

}  // namespace railsim::perf
