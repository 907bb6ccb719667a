#include "railsim/perf/model_stats.h"

#include "railsim/perf/compute.h"

namespace railsim::perf {

int64_t PaddedVocab(const spec::ModelSpec& m, int tp) {
  int64_t multiple = int64_t{128} * tp;
  return (m.vocab_size + multiple - 1) / multiple * multiple;
}

namespace {

// Projections of one token through attention, as a list of matrix sizes:
// their sum is the attention's weight count, twice it its forward FLOPs.
double AttentionProjectionWeights(const spec::ModelSpec& m) {
  const double h = m.hidden_size;
  const double heads = m.num_attention_heads;
  if (m.multi_latent_attention) {
    const spec::LatentAttention& a = m.mla;
    const double qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank * heads * qk : h * heads * qk;
    const double kv = h * (a.kv_lora_rank + a.qk_pos_emb_head_dim) +
                      double(a.kv_lora_rank) * heads * (a.qk_head_dim + a.v_head_dim);
    return q + kv + heads * a.v_head_dim * h;
  }
  const double q = heads * m.kv_channels();
  const double kv = double(m.num_query_groups) * m.kv_channels();
  return h * (q + 2 * kv) + q * h;
}

// The MLP's matrices (what its FLOPs count), and with biases its weights.
double MlpMatrices(const spec::ModelSpec& m, double width) { return (m.swiglu ? 3 : 2) * double(m.hidden_size) * width; }
double MlpWeights(const spec::ModelSpec& m, double width) {
  const double bias = m.add_bias_linear ? 1 : 0;
  return MlpMatrices(m, width) + bias * ((m.swiglu ? 2 : 1) * width + m.hidden_size);
}

}  // namespace

ParamCounts CountParams(const spec::ModelSpec& m, int tp) {
  const double h = m.hidden_size;
  const double v = double(PaddedVocab(m, tp));
  const double bias = m.add_bias_linear ? 1 : 0;
  ParamCounts p;
  const double q = double(m.num_attention_heads) * m.kv_channels();
  const double kv = double(m.num_query_groups) * m.kv_channels();
  p.attention_per_layer = AttentionProjectionWeights(m) + bias * (q + 2 * kv + h);
  const double norm = m.normalization == spec::Normalization::kLayerNorm ? 2 * h : h;
  p.norms_per_layer = 2 * norm;
  if (m.multi_latent_attention) p.norms_per_layer += m.mla.q_lora_rank + m.mla.kv_lora_rank;
  if (m.qk_layernorm) p.norms_per_layer += 2.0 * m.kv_channels();
  p.moe_layers = m.is_moe() ? m.moe_layer_count() : 0;
  p.dense_layers = m.num_layers - p.moe_layers;
  p.dense_mlp_per_layer = MlpWeights(m, m.ffn_hidden_size);
  if (m.is_moe()) {
    p.expert = MlpWeights(m, m.moe_ffn_hidden_size);
    p.router_per_layer = h * m.num_experts;
    p.shared_expert_per_layer =
        m.moe_shared_expert_intermediate_size > 0 ? MlpWeights(m, m.moe_shared_expert_intermediate_size) : 0;
    p.mlp_per_layer = m.num_experts * p.expert + p.shared_expert_per_layer + p.router_per_layer;
  } else {
    p.mlp_per_layer = p.dense_mlp_per_layer;
  }
  p.embedding = v * h + (m.position_embedding_type == spec::PositionEmbedding::kLearnedAbsolute
                             ? double(m.seq_length) * h
                             : 0);
  p.output_layer = m.untie_embeddings_and_output_weights ? v * h : 0;
  p.final_norm = norm;
  const double common = p.attention_per_layer + p.norms_per_layer;
  const double outside = p.embedding + p.output_layer + p.final_norm;
  p.total = m.num_layers * common + p.moe_layers * p.mlp_per_layer + p.dense_layers * p.dense_mlp_per_layer +
            outside;
  const double active_mlp =
      m.is_moe() ? m.moe_router_topk * p.expert + p.shared_expert_per_layer + p.router_per_layer : 0;
  p.active = m.num_layers * common + p.moe_layers * active_mlp + p.dense_layers * p.dense_mlp_per_layer + outside;
  return p;
}

ScoreSquare ExecutedSquare(const spec::Strategy& s) {
  return s.attention == spec::Attention::kClassic ? ScoreSquare::kFull : ScoreSquare::kCausalHalf;
}

double AttentionScoreForwardFlops(const spec::ModelSpec& m, ScoreSquare square, bool windowed) {
  // QK^T and PV over the full square: 2 s^2 (d_qk + d_v) per head (4 s^2 h
  // for plain multi-head attention); half of it under the causal mask, as
  // perf/layer_cost.cc times FlashAttention, and with a sliding window the
  // band, 2 s (s W - W^2 / 2) / s (d_qk + d_v) per head.
  const double s = m.seq_length;
  const double d_qk = m.multi_latent_attention ? m.mla.qk_head_dim + m.mla.qk_pos_emb_head_dim : m.kv_channels();
  const double d_v = m.multi_latent_attention ? m.mla.v_head_dim : m.kv_channels();
  const double keys = square == ScoreSquare::kFull ? s : MeanKeysAttended(s, windowed ? m.window_size : 0);
  return 2.0 * s * keys * m.num_attention_heads * (d_qk + d_v);
}

double LayerForwardFlops(const spec::ModelSpec& m, bool moe, ScoreSquare square) {
  const double s = m.seq_length;
  const double h = m.hidden_size;
  double mlp = 2 * s * MlpMatrices(m, m.ffn_hidden_size);
  if (m.is_moe() && moe) {
    mlp = 2 * s * (m.moe_router_topk * MlpMatrices(m, m.moe_ffn_hidden_size) + h * m.num_experts);
    if (m.moe_shared_expert_intermediate_size > 0) {
      mlp += 2 * s * MlpMatrices(m, m.moe_shared_expert_intermediate_size);
    }
  }
  return 2 * s * AttentionProjectionWeights(m) + AttentionScoreForwardFlops(m, square) + mlp;
}

namespace {

// What the sliding-window layers' attention scores save against full
// attention, summed over them (0 without a window).
double WindowSaving(const spec::ModelSpec& m, ScoreSquare square) {
  const int windowed = m.window_layer_count();
  if (windowed == 0) return 0;
  return windowed * (AttentionScoreForwardFlops(m, square) - AttentionScoreForwardFlops(m, square, true));
}

}  // namespace

double LayersForwardFlops(const spec::ModelSpec& m, ScoreSquare square) {
  const int moe = m.is_moe() ? m.moe_layer_count() : 0;
  return moe * LayerForwardFlops(m, true, square) + (m.num_layers - moe) * LayerForwardFlops(m, false, square) -
         WindowSaving(m, square);
}

double LogitForwardFlops(const spec::ModelSpec& m, int tp) {
  return 2.0 * m.seq_length * m.hidden_size * double(PaddedVocab(m, tp));
}

double ModelFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  double per_sequence = LayersForwardFlops(m, ScoreSquare::kCausalHalf) + LogitForwardFlops(m, s.tp);
  return 3.0 * double(s.global_batch) * per_sequence;
}

double RecomputeFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  const ScoreSquare square = ExecutedSquare(s);
  double per_sequence = 0;
  if (s.recompute == spec::Recompute::kFull) per_sequence = LayersForwardFlops(m, square);
  if (s.recompute == spec::Recompute::kSelective) {
    per_sequence = m.num_layers * AttentionScoreForwardFlops(m, square) - WindowSaving(m, square);
  }
  return double(s.global_batch) * per_sequence;
}

double HardwareFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  double per_sequence = LayersForwardFlops(m, ExecutedSquare(s)) + LogitForwardFlops(m, s.tp);
  return 3.0 * double(s.global_batch) * per_sequence + RecomputeFlopsPerIteration(m, s);
}

}  // namespace railsim::perf
