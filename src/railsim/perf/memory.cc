#include "railsim/perf/memory.h"

#include <algorithm>

namespace railsim::perf {
namespace {

double LayersOn(const spec::ModelSpec& m, const spec::Strategy& s, Stage stage) {
  switch (stage) {
    case Stage::kOnly: return m.num_layers;
    case Stage::kFirst: return s.layers_on_first(m.num_layers);
    case Stage::kLast: return s.layers_on_last(m.num_layers);
    case Stage::kMiddle: return s.layers_on_middle(m.num_layers);
  }
  return 0;
}

// Bytes per parameter of Megatron's mixed-precision Adam.
constexpr double kWeightBytes = 2;     // bf16/fp16 weights
constexpr double kGradientBytes = 4;   // fp32 main gradients
constexpr double kOptimizerBytes = 12; // fp32 master weights, Adam m and v

// Activations one layer keeps for its backward pass, per micro-batch, on one
// GPU, without recomputation (`keep_scores`) or with selective recomputation.
double LayerActivationBytes(const PerfContext& c, const spec::Strategy& s, bool keep_scores) {
  const spec::ModelSpec& m = c.model;
  const double t = s.tp;
  const double b = double(s.micro_batch);
  const double sl = double(m.seq_length) / s.cp;  // tokens of the local sequence shard
  const double h = m.hidden_size;
  const double kv = double(m.num_query_groups) * m.kv_channels();
  const double f = m.ffn_hidden_size;
  const double sbh = sl * b * h;
  const double rep_div = s.sequence_parallel ? t : 1;
  const double masks = m.hidden_dropout > 0 ? 2 : 0;
  // Norm inputs (2 x 2sbh), QKV and fc1 inputs (2 x 2sbh), dropout masks.
  double replicated = (8 + masks) * sbh / rep_div;
  // Q, K, V and the attention output; MLP intermediate tensors.
  double split = (4 * sbh + 4 * sl * b * kv) / t;
  double mlp = (m.swiglu ? 6 : 4) * sl * b * f / t;
  if (m.is_moe()) {
    // Each token's top-k expert activations, its permuted copies, fp32 router logits.
    mlp = mlp * m.moe_router_topk + 2 * sl * b * h * m.moe_router_topk / rep_div +
          4 * sl * b * m.num_experts;
  }
  double scores = 0;
  if (s.attention == spec::Attention::kClassic) {
    // Softmax output; with attention dropout also its mask and output.
    double per_score = 2 + (m.attention_dropout > 0 ? 3 : 0);
    scores = keep_scores ? per_score * m.num_attention_heads * b * sl * m.seq_length / t : 0;
  } else {
    scores = 4 * m.num_attention_heads * b * sl / t;  // fp32 log-sum-exp per query row
  }
  return replicated + split + mlp + scores;
}

double StageActivationBytes(const PerfContext& c, const spec::Strategy& s, Stage stage) {
  const spec::ModelSpec& m = c.model;
  const double t = s.tp;
  const double b = double(s.micro_batch);
  const double sl = double(m.seq_length) / s.cp;
  const double sbh = sl * b * m.hidden_size;
  const double rep_div = s.sequence_parallel ? t : 1;
  const double layers = LayersOn(m, s, stage);
  const double full_layer = LayerActivationBytes(c, s, true);
  double per_layer = full_layer;
  double working_set = 0;
  if (s.recompute == spec::Recompute::kSelective) per_layer = LayerActivationBytes(c, s, false);
  if (s.recompute == spec::Recompute::kFull) {
    per_layer = 2 * sbh / rep_div;  // only each layer's input
    working_set = full_layer;       // one layer recomputed at a time
  }
  bool first = stage == Stage::kFirst || stage == Stage::kOnly;
  bool last = stage == Stage::kLast || stage == Stage::kOnly;
  // Under 1F1B stage i holds pp - i micro-batches: the first pp, the second
  // (the busiest middle stage) pp - 1, the last one.
  double in_flight = 1;
  if (s.pp > 1 && stage != Stage::kLast) {
    int64_t depth = stage == Stage::kFirst ? s.pp : s.pp - 1;
    in_flight = double(std::min<int64_t>(s.num_microbatches(), depth));
    if (s.vp > 1) in_flight *= 1 + double(s.pp - 1) / (double(s.pp) * s.vp);
  }
  double bytes = per_layer * layers * in_flight + working_set;
  if (first) bytes += (2 + (m.hidden_dropout > 0 ? 1 : 0)) * sbh / rep_div * in_flight;
  if (last) {
    // Logits in 16-bit and fp32 for the vocab-parallel cross entropy.
    bytes += 6 * sl * b * double(PaddedVocab(m, s.tp)) / t;
  }
  return bytes;
}

}  // namespace

StageParams ParamsOnGpu(const PerfContext& c, const spec::Strategy& s, Stage stage) {
  const spec::ModelSpec& m = c.model;
  ParamCounts p = CountParams(m, s.tp);
  const double t = s.tp;
  const double layers = LayersOn(m, s, stage);
  StageParams out;
  double mlp_dense = m.is_moe() ? m.hidden_size * double(m.num_experts) : p.mlp_per_layer / t;
  out.dense = layers * (p.attention_per_layer / t + p.norms_per_layer + mlp_dense);
  if (m.is_moe()) {
    double experts = p.mlp_per_layer - m.hidden_size * double(m.num_experts);
    out.expert = layers * experts / (double(s.ep) * t);
  }
  const double word = double(PaddedVocab(m, s.tp)) * m.hidden_size / t;
  const double position = p.embedding - double(PaddedVocab(m, s.tp)) * m.hidden_size;
  bool first = stage == Stage::kFirst || stage == Stage::kOnly;
  bool last = stage == Stage::kLast || stage == Stage::kOnly;
  if (first) out.dense += word + position;
  if (last) {
    out.dense += p.final_norm;
    // The output layer: its own weights when untied; when tied, the last
    // stage keeps a copy of the word embedding unless it is also the first.
    if (m.untie_embeddings_and_output_weights) out.dense += p.output_layer / t;
    else if (!first) out.dense += word;
  }
  return out;
}

MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s) {
  auto for_stage = [&](Stage stage) {
    StageParams p = ParamsOnGpu(c, s, stage);
    MemoryBreakdown mb;
    mb.weights_bytes = kWeightBytes * p.total();
    mb.gradients_bytes = kGradientBytes * p.total();
    double dense_dp = double(s.dp) * s.cp;
    double expert_dp = dense_dp / s.ep;
    mb.optimizer_bytes = s.distributed_optimizer
                             ? kOptimizerBytes * (p.dense / dense_dp + p.expert / expert_dp)
                             : kOptimizerBytes * p.total();
    mb.activations_bytes = StageActivationBytes(c, s, stage);
    mb.reserved_bytes = c.system.gpu.memory_reserved_bytes;
    mb.total_bytes = mb.weights_bytes + mb.gradients_bytes + mb.optimizer_bytes +
                     mb.activations_bytes + mb.reserved_bytes;
    mb.capacity_bytes = c.system.gpu.hbm_bytes;
    mb.fits = mb.total_bytes <= mb.capacity_bytes;
    return mb;
  };
  if (s.pp == 1) return for_stage(Stage::kOnly);
  MemoryBreakdown worst = for_stage(Stage::kFirst);
  for (Stage stage : {Stage::kLast, Stage::kMiddle}) {
    if (stage == Stage::kMiddle && s.pp < 3) break;
    MemoryBreakdown m = for_stage(stage);
    if (m.total_bytes > worst.total_bytes) worst = m;
  }
  return worst;
}

}  // namespace railsim::perf
