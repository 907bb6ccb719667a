#include "railsim/perf/model_stats.h"

namespace railsim::perf {

int64_t PaddedVocab(const spec::ModelSpec& m, int tp) {
  int64_t multiple = int64_t{128} * tp;
  return (m.vocab_size + multiple - 1) / multiple * multiple;
}

ParamCounts CountParams(const spec::ModelSpec& m, int tp) {
  const double h = m.hidden_size;
  const double kv = double(m.num_query_groups) * m.kv_channels();
  const double f = m.ffn_hidden_size;
  const double v = double(PaddedVocab(m, tp));
  const double bias = m.add_bias_linear ? 1 : 0;
  ParamCounts p;
  p.attention_per_layer = h * (h + 2 * kv) + h * h + bias * (h + 2 * kv + h);
  double norm = m.normalization == spec::Normalization::kLayerNorm ? 2 * h : h;
  p.norms_per_layer = 2 * norm;
  double mlp = (m.swiglu ? 3 : 2) * h * f + bias * ((m.swiglu ? 2 : 1) * f + h);
  p.mlp_per_layer = m.is_moe() ? m.num_experts * mlp + h * m.num_experts : mlp;
  p.embedding = v * h + (m.position_embedding_type == spec::PositionEmbedding::kLearnedAbsolute
                             ? double(m.seq_length) * h
                             : 0);
  p.output_layer = m.untie_embeddings_and_output_weights ? v * h : 0;
  p.final_norm = norm;
  p.total = m.num_layers * p.per_layer() + p.embedding + p.output_layer + p.final_norm;
  return p;
}

double AttentionScoreForwardFlops(const spec::ModelSpec& m) {
  // QK^T and PV: 2 x (2 s^2 d_head) per query head, a heads: 4 s^2 h.
  return 4.0 * double(m.seq_length) * m.seq_length * m.hidden_size;
}

double LayerForwardFlops(const spec::ModelSpec& m) {
  const double s = m.seq_length;
  const double h = m.hidden_size;
  const double kv = double(m.num_query_groups) * m.kv_channels();
  const double f = m.ffn_hidden_size;
  double projections = 2 * s * (h * (h + 2 * kv) + h * h);
  double mlp = 2 * s * (m.swiglu ? 3 : 2) * h * f;
  if (m.is_moe()) mlp = mlp * m.moe_router_topk + 2 * s * h * m.num_experts;
  return projections + AttentionScoreForwardFlops(m) + mlp;
}

double LogitForwardFlops(const spec::ModelSpec& m, int tp) {
  return 2.0 * m.seq_length * m.hidden_size * double(PaddedVocab(m, tp));
}

double ModelFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  double per_sequence = m.num_layers * LayerForwardFlops(m) + LogitForwardFlops(m, s.tp);
  return 3.0 * double(s.global_batch) * per_sequence;
}

double RecomputeFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  double per_sequence = 0;
  if (s.recompute == spec::Recompute::kFull) per_sequence = m.num_layers * LayerForwardFlops(m);
  if (s.recompute == spec::Recompute::kSelective) per_sequence = m.num_layers * AttentionScoreForwardFlops(m);
  return double(s.global_batch) * per_sequence;
}

double HardwareFlopsPerIteration(const spec::ModelSpec& m, const spec::Strategy& s) {
  return ModelFlopsPerIteration(m, s) + RecomputeFlopsPerIteration(m, s);
}

}  // namespace railsim::perf
