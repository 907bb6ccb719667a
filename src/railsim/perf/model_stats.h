// Parameter and FLOP counts of a transformer (spec/model.h), whole model and
// per layer: FLOPs of every matrix multiply, 2 FLOPs per multiply-add,
// backward = 2 x forward. Every model is a causal decoder, so a query attends
// to the keys before it: model FLOPs (MFU's numerator) count half the s x s
// attention-score square, the part FlashAttention executes. Hardware FLOPs
// (HFU's numerator) count what the strategy's kernels execute: the causal
// half with FlashAttention, the whole masked square with the materialised
// softmax (`--attention classic`), plus recomputation. A sliding-window
// layer's query attends to at most window_size keys: both count the band,
// s W - W^2 / 2 per head instead of s^2 / 2, under FlashAttention (which
// skips the key blocks outside it), and the whole square with the
// materialised softmax (which masks the band out of it). Megatron-LM's and
// PaLM's published formulas count the whole square for both; with classic
// attention and full recomputation the hardware count is Megatron-LM's
// (SC'21, appendix).
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

/// How much of the seq x seq attention-score square a count includes.
enum class ScoreSquare {
  kCausalHalf,  ///< the keys a causal query attends to: s^2 / 2 (FlashAttention's count)
  kFull,        ///< the whole square, masked or not (the materialised softmax computes it)
};

/// What the strategy's attention kernel executes: the causal half with
/// FlashAttention, the full square with the materialised softmax.
ScoreSquare ExecutedSquare(const spec::Strategy& s);

/// Forward FLOPs of one sequence through one full-attention layer (MoE
/// counted for the top-k experts per token). `moe`: an MoE layer of an MoE
/// model (else its dense MLP).
double LayerForwardFlops(const spec::ModelSpec& m, bool moe, ScoreSquare square);
/// The same summed over all the model's layers, its sliding-window layers
/// with their band.
double LayersForwardFlops(const spec::ModelSpec& m, ScoreSquare square);
/// Forward FLOPs of the attention-score part of a layer (QK^T and PV); of a
/// sliding-window layer with `windowed` (the band under kCausalHalf, the
/// same square under kFull; a window covering the sequence changes nothing).
double AttentionScoreForwardFlops(const spec::ModelSpec& m, ScoreSquare square, bool windowed = false);
/// Forward FLOPs of the output layer for one sequence.
double LogitForwardFlops(const spec::ModelSpec& m, int tp);

/// Model FLOPs of one iteration: 3 x forward with the causal half of the
/// attention scores, no recomputation (MFU's numerator).
double ModelFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);
/// The forward work recomputation redoes in one iteration, as executed (0 without).
double RecomputeFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);
/// Hardware FLOPs: 3 x forward as the attention kernel executes it, plus the
/// recomputed forward work (HFU's numerator and TFLOP/s per GPU).
double HardwareFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s);

}  // namespace railsim::perf
