// Time of one micro-batch through one transformer layer (and through the
// embedding and output layers) on one GPU: compute, the tensor- and
// context-parallel communication it waits for, and what recomputation would
// redo. These depend only on (tp, cp, micro-batch, sequence parallelism,
// attention kernel, ep, etp), so the search computes them once per such tuple and
// reuses them across pipeline, data-parallel and optimizer choices.
#pragma once

#include "railsim/comm/moe.h"

#include "railsim/perf/context.h"
#include "railsim/perf/memory.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

/// Seconds for one micro-batch through one block (layer, embedding or output).
struct BlockCost {
  double fwd = 0;                  ///< forward compute (GEMMs, attention, elementwise)
  double bwd = 0;                  ///< backward compute
  double recompute_selective = 0;  ///< the attention core's forward, redone
  double tp_fwd = 0;               ///< tensor-parallel collectives in forward
  double tp_bwd = 0;               ///< ... in backward
  double cp_fwd = 0;               ///< context-parallel exchange not hidden by attention
  double cp_bwd = 0;
};

struct LayerCosts {
  BlockCost layer;        ///< a transformer layer (an MoE layer in an MoE model)
  BlockCost dense_layer;  ///< a layer with the dense MLP (== layer in a dense model)
  /// The same two kept in bf16 under a low precision (Strategy::bf16_layers;
  /// == layer and dense_layer in bf16).
  BlockCost bf16_layer, bf16_dense_layer;
  /// What a sliding-window layer (spec::ModelSpec::window_layers) changes in
  /// any of the four above, added once per such layer: its attention core
  /// over the band of keys within the window instead of the causal half, and
  /// with context parallelism the K/V all-gather that replaces the ring.
  /// Either sign (a narrow window computes less and hides less); all zero
  /// when the window covers the sequence or with classic attention (the
  /// materialised softmax computes the whole masked square anyway).
  BlockCost window_change;
  BlockCost embedding;  ///< first stage only
  BlockCost output;     ///< last stage: final norm, logits, cross entropy
  double p2p_bytes = 0;       ///< activation sent between pipeline stages, per GPU
  double a2a_bytes = 0;       ///< per GPU per MoE all-to-all (dispatch or combine)
  comm::MoeDispatch moe_dispatch;  ///< what one dispatch sends, per GPU (--moe-dispatch-precision)
  comm::MoeDispatch moe_combine;   ///< what one combine sends back, per GPU (bf16)
  double cp_chunk_bytes = 0;  ///< K and V sent per context-parallel ring step
  /// K and V all-gathered over the context-parallel group by a sliding-window
  /// layer (cp x cp_chunk_bytes; 0 when window_change is zero or cp == 1).
  double cp_window_gather_bytes = 0;
  LayerMemory memory;         ///< activations and parameters per layer on one GPU
};

/// Requires a strategy that passed spec::ValidateStrategy for c.model.
LayerCosts ComputeLayerCosts(const PerfContext& c, const spec::Strategy& s);

}  // namespace railsim::perf
