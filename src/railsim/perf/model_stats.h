// Parameter and FLOP counts of a transformer (spec/model.h), whole model and
// per layer, as Megatron-LM counts them: dense FLOPs of every matrix multiply
// (attention scores over the full sequence, causal mask or not), 2 FLOPs per
// multiply-add, backward = 2 x forward.
#pragma once

#include <cstdint>

#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

/// Megatron pads the vocabulary to a multiple of 128 x TP.
int64_t PaddedVocab(const spec::ModelSpec& m, int tp);

struct ParamCounts {
  double attention_per_layer = 0;  ///< QKV (or latent) and output projections, with biases
  double norms_per_layer = 0;
  /// An MoE layer's MLP: every routed expert, the shared experts and the
  /// router; for a dense model, the MLP.
  double mlp_per_layer = 0;
  double dense_mlp_per_layer = 0;  ///< the MLP of an MoE model's dense layers
  double router_per_layer = 0;     ///< in mlp_per_layer
  double shared_expert_per_layer = 0;  ///< in mlp_per_layer
  double expert = 0;               ///< one routed expert
  int moe_layers = 0, dense_layers = 0;
  double embedding = 0;            ///< word (+ learned position) embeddings
  double output_layer = 0;         ///< 0 when tied to the word embedding
  double final_norm = 0;
  double total = 0;
  /// Parameters one token uses: top-k routed experts instead of all.
  double active = 0;
  double per_layer() const { return attention_per_layer + norms_per_layer + mlp_per_layer; }
};

/// Counts with the vocabulary padded for `tp` (Megatron's printed count uses tp's padding).
ParamCounts CountParams(const spec::ModelSpec& m, int tp = 1);

/// Forward FLOPs of one sequence through one layer (attention scores over
/// the full seq x seq square, MoE counted for the top-k experts per token).
/// `moe`: an MoE layer of an MoE model (else its dense MLP).
double LayerForwardFlops(const spec::ModelSpec& m, bool moe);
/// The same summed over all the model's layers.
double LayersForwardFlops(const spec::ModelSpec& m);
/// Forward FLOPs of the attention-score part of a layer (QK^T and PV).
double AttentionScoreForwardFlops(const spec::ModelSpec& m);
/// Forward FLOPs of the output layer for one sequence.
double LogitForwardFlops(const spec::ModelSpec& m, int tp);

/// Model FLOPs of one iteration: 3 x forward, no recomputation (MFU's numerator).
double ModelFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);
/// The forward work recomputation redoes in one iteration (0 without).
double RecomputeFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);
/// Hardware FLOPs: model FLOPs plus the recomputed forward work (HFU's
/// numerator; what Megatron-LM reports as TFLOP/s per GPU).
double HardwareFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);

}  // namespace railsim::perf
