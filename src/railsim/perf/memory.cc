#include "railsim/perf/memory.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "railsim/perf/compute.h"
#include "railsim/perf/model_stats.h"

namespace railsim::perf {
namespace {

// The 16-bit weights of the layer running and of the one prefetched: what
// fully sharded data parallelism (FSDP2's default) keeps gathered at once.
constexpr double kGatheredLayers = 2;

double StageActivationBytes(const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load) {
  // Each layer's activations once per micro-batch in flight through its
  // virtual stage (StageLoad's in-flight counts).
  const double moe_layers = load.in_flight_moe_layers, dense_layers = load.in_flight_layers - moe_layers;
  const double bf16_moe_layers = load.in_flight_bf16_moe_layers;
  const double bf16_dense_layers = load.in_flight_bf16_layers - bf16_moe_layers;
  double all_layers = lm.act_layer * moe_layers + lm.act_dense_layer * dense_layers;
  double working_set = 0;
  if (s.recompute == spec::Recompute::kSelective) {
    all_layers = lm.act_layer_selective * moe_layers + lm.act_dense_layer_selective * dense_layers;
  }
  // Layers kept in bf16 save nothing by the low precision.
  all_layers += lm.act_low_precision_saving * bf16_moe_layers + lm.act_dense_low_precision_saving * bf16_dense_layers;
  if (s.recompute == spec::Recompute::kFull) {
    all_layers = lm.act_layer_input * load.in_flight_layers;  // only each layer's input
    working_set = load.moe_layers > 0 ? lm.act_layer : lm.act_dense_layer;  // one layer recomputed at a time
  }
  double bytes = all_layers + working_set;
  const double in_flight = double(ChunksInFlight(s, load.rank)) / s.vp;
  if (load.stage == Stage::kFirst || load.stage == Stage::kOnly) bytes += lm.act_embedding * in_flight;
  if (load.stage == Stage::kLast || load.stage == Stage::kOnly) bytes += lm.act_logits;
  return bytes;
}

}  // namespace

double MicrobatchesInFlight(const spec::Strategy& s, Stage stage) {
  if (s.pp == 1 || stage == Stage::kOnly) return 1;
  const int rank = stage == Stage::kFirst ? 0 : stage == Stage::kMiddle ? 1 : s.pp - 1;
  return double(ChunksInFlight(s, rank)) / s.vp;
}

BytesPerParam OptimizerBytesPerParam(const spec::Strategy& s) {
  BytesPerParam b;
  b.weights = 2;
  const bool bf16_buffer = s.main_grads_dtype == spec::MainGradsDtype::kBf16 || s.grad_reduce_16bit;
  b.gradients = bf16_buffer ? 2 : 4;
  // Megatron's optimizer reads fp32 gradients: with a 16-bit buffer (and not
  // the precision-aware bf16 main gradients) it keeps an fp32 copy of its shard.
  const bool fp32_grad_copy = bf16_buffer && s.main_grads_dtype == spec::MainGradsDtype::kFp32;
  b.master = s.main_params_dtype == spec::MainParamsDtype::kFp32   ? 4
             : s.main_params_dtype == spec::MainParamsDtype::kFp16 ? 2
                                                                   : 0;
  b.grad_copy = fp32_grad_copy ? 4 : 0;
  auto moment = [](spec::MomentDtype d) { return d == spec::MomentDtype::kBf16 ? 2.0 : 4.0; };
  b.moments = moment(s.exp_avg_dtype) + moment(s.exp_avg_sq_dtype);
  return b;
}

double ShardParams(const StageParams& p, const spec::Strategy& s) { return ShardRanks(s).Of(p); }

double OptimizerShardParams(const StageParams& p, const spec::Strategy& s) {
  return s.distributed_optimizer() ? ShardParams(p, s) : p.total();
}

LayerMemory ComputeLayerMemory(const PerfContext& c, const spec::Strategy& s) {
  const spec::ModelSpec& m = c.model;
  const double t = s.tp;
  const double b = double(s.micro_batch);
  const double sl = double(m.seq_length) / s.cp;  // tokens of the local sequence shard
  const double h = m.hidden_size;
  const double kv = double(m.num_query_groups) * m.kv_channels();
  const double f = m.ffn_hidden_size;
  const double fe = m.is_moe() ? m.moe_ffn_hidden_size : f;
  const double sbh = sl * b * h;
  const double rep_div = s.sequence_parallel ? t : 1;
  const double vocab = double(PaddedVocab(m, s.tp));
  LayerMemory lm;

  // Activations. Norm inputs (2 x 2sbh), QKV and fc1 inputs (2 x 2sbh) and
  // dropout masks are replicated across TP ranks unless sequence-parallel.
  double replicated = (8 + (m.hidden_dropout > 0 ? 2 : 0)) * sbh / rep_div;
  // Q, K, V and the attention output; MLP intermediate tensors.
  double split = (4 * sbh + 4 * sl * b * kv) / t;
  if (m.multi_latent_attention) {
    // Q and K of qk + rotary dims per head, V and the attention output of
    // v dims per head (16-bit, split by heads), and the latents the
    // up-projections read (replicated).
    const spec::LatentAttention& a = m.mla;
    const double heads = m.num_attention_heads;
    split = 2 * sl * b * heads * (2.0 * (a.qk_head_dim + a.qk_pos_emb_head_dim) + 2.0 * a.v_head_dim) / t;
    replicated += 2 * sl * b * double(a.q_lora_rank + a.kv_lora_rank + a.qk_pos_emb_head_dim) / rep_div;
  }
  const double dense_mlp = (m.swiglu ? 6 : 4) * sl * b * f / t;
  double mlp = dense_mlp;
  if (m.is_moe()) {
    // Each token's top-k expert activations, its permuted copies, fp32 router
    // logits, and the shared experts' activations.
    // The busiest expert rank holds `imbalance` times the mean of them.
    const double load = s.expert_load_imbalance();
    mlp = load * ((m.swiglu ? 6 : 4) * sl * b * fe / t * m.moe_router_topk +
                  2 * sl * b * h * m.moe_router_topk / rep_div) +
          4 * sl * b * m.num_experts + (m.swiglu ? 6 : 4) * sl * b * m.moe_shared_expert_intermediate_size / t;
  }
  const double dense_fc2_input = sl * b * f / t;
  double scores = 0, scores_selective = 0;
  if (s.attention == spec::Attention::kClassic) {
    // Softmax output; with attention dropout also its mask and output.
    double per_score = 2 + (m.attention_dropout > 0 ? 3 : 0);
    scores = per_score * m.num_attention_heads * b * sl * m.seq_length / t;
  } else {
    scores = scores_selective = 4 * m.num_attention_heads * b * sl / t;  // fp32 log-sum-exp per row
  }
  // Transformer Engine keeps the GEMM inputs it needs for backward in the
  // GEMM format: the QKV and fc1 inputs, the attention output and the fc2
  // input each save (2 - saved_input_bytes) bytes per element.
  double saving = 0, dense_saving = 0;
  if (s.precision != spec::Precision::kBf16) {
    const double per_element = 2 - GemmFormatOf(s.precision).saved_input_bytes;
    const double fc2_input = sl * b * fe / t * (m.is_moe() ? m.moe_router_topk : 1);  // elements
    const double attention_inputs = 2 * sbh / rep_div + sbh / t;  // QKV and fc1 inputs, attention output
    saving = per_element * (attention_inputs + fc2_input);
    dense_saving = per_element * (attention_inputs + dense_fc2_input);
  }
  lm.act_low_precision_saving = saving;
  lm.act_dense_low_precision_saving = dense_saving;
  lm.act_layer = replicated + split + mlp + scores - saving;
  lm.act_layer_selective = replicated + split + mlp + scores_selective - saving;
  lm.act_dense_layer = replicated + split + dense_mlp + scores - dense_saving;
  lm.act_dense_layer_selective = replicated + split + dense_mlp + scores_selective - dense_saving;
  lm.act_layer_input = 2 * sbh / rep_div;
  lm.act_embedding = (2 + (m.hidden_dropout > 0 ? 1 : 0)) * sbh / rep_div;
  lm.act_logits = 6 * sl * b * vocab / t;

  // Parameters on this GPU.
  ParamCounts p = CountParams(m, s.tp);
  // An MoE layer keeps its router whole and its shared experts TP-split
  // with the attention; its routed experts are split over ep x etp.
  double mlp_dense = m.is_moe() ? p.router_per_layer + p.shared_expert_per_layer / t : p.mlp_per_layer / t;
  lm.params_layer_dense = p.attention_per_layer / t + p.norms_per_layer + mlp_dense;
  if (m.is_moe()) lm.params_layer_expert = m.num_experts * p.expert / (double(s.ep) * s.expert_tp());
  lm.params_dense_layer = p.attention_per_layer / t + p.norms_per_layer + p.dense_mlp_per_layer / t;
  lm.params_word = vocab * h / t;
  lm.params_embedding = lm.params_word + (p.embedding - vocab * h);  // + learned positions, replicated
  lm.params_output = p.output_layer / t;
  lm.params_final_norm = p.final_norm;
  lm.params_layer_linear = lm.params_layer_dense + lm.params_layer_expert - p.norms_per_layer - p.router_per_layer;
  lm.params_dense_layer_linear = lm.params_dense_layer - p.norms_per_layer;
  return lm;
}

namespace {

StageParams ParamsWithLayers(const PerfContext& c, const LayerMemory& lm, const StageLoad& load) {
  StageParams out;
  const double layers = load.layers, moe_layers = load.moe_layers;
  out.dense = moe_layers * lm.params_layer_dense + (layers - moe_layers) * lm.params_dense_layer;
  out.expert = moe_layers * lm.params_layer_expert;
  bool first = load.stage == Stage::kFirst || load.stage == Stage::kOnly;
  bool last = load.stage == Stage::kLast || load.stage == Stage::kOnly;
  if (first) out.dense += lm.params_embedding;
  if (last) {
    out.dense += lm.params_final_norm;
    // The output layer: its own weights when untied; when tied, the last
    // stage keeps a copy of the word embedding unless it is also the first.
    if (c.model.untie_embeddings_and_output_weights) out.dense += lm.params_output;
    else if (!first) out.dense += lm.params_word;
  }
  return out;
}

}  // namespace

StageParams ParamsOnGpu(const PerfContext& c, const LayerMemory& lm, const StageLoad& load) {
  return ParamsWithLayers(c, lm, load);
}

namespace {

// The parts of a rank's memory that the recomputation does not change,
// rounded up: weights, their low-precision copies, gradients and optimizer
// states.
void FillStateParts(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load,
                    const BytesPerParam& per, const ShardRanks& shard_ranks, MemoryBreakdown* mb) {
  const double layers = load.layers, moe_layers = load.moe_layers;
  const StageParams p = ParamsWithLayers(c, lm, load);
  const double shard = shard_ranks.Of(p);
  const spec::DpSharding sharding = s.dp_sharding;
  const bool full = sharding == spec::DpSharding::kFull;
  mb->weights_bytes = per.weights * (full ? shard : p.total());
  mb->gradients_bytes = per.gradients * (full || sharding == spec::DpSharding::kGradients ? shard : p.total());
  mb->optimizer_bytes = per.optimizer() * (s.distributed_optimizer() ? shard : p.total());
  if (full) {
    // The unit gathered: the largest layer on the stage (or the word
    // embedding / output layer share it holds).
    double unit = layers > moe_layers ? lm.params_dense_layer : 0;
    if (moe_layers > 0) unit = std::max(unit, lm.params_layer_dense + lm.params_layer_expert);
    if (load.stage != Stage::kMiddle) unit = std::max(unit, lm.params_word);
    mb->weights_bytes += kGatheredLayers * per.weights * unit;
    mb->gradients_bytes += per.gradients * unit;
  }
  const double bf16_layers = load.bf16_layers, bf16_moe_layers = load.bf16_moe_layers;
  if (s.precision != spec::Precision::kBf16) {
    // The low-precision layers' GEMM weights: their quantized copies (not
    // sharded, a limit), and with --fp8-params only those (no 16-bit copy).
    const double low_moe = moe_layers - bf16_moe_layers;
    const double low_dense = (layers - moe_layers) - (bf16_layers - bf16_moe_layers);
    const double linear = lm.params_layer_linear * low_moe + lm.params_dense_layer_linear * low_dense;
    mb->fp8_weights_bytes = GemmFormatOf(s.precision).weight_copy_bytes * linear;
    if (s.low_precision_params) mb->weights_bytes -= per.weights * linear * (full ? shard / p.total() : 1.0);
  }
  // Whole bytes: shares of a parameter round up.
  for (double* part : {&mb->weights_bytes, &mb->fp8_weights_bytes, &mb->gradients_bytes, &mb->optimizer_bytes}) {
    *part = std::ceil(*part);
  }
}

// Their sum, in the order total_bytes adds them.
double StateSum(const MemoryBreakdown& mb) {
  return mb.weights_bytes + mb.fp8_weights_bytes + mb.gradients_bytes + mb.optimizer_bytes;
}

// The most loaded stage's memory; with `stop_when_over`, the first stage
// found over capacity instead (enough to prune, and the first stage, which
// holds the most activations, is tried first).
MemoryBreakdown StageMemory(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm,
                            const std::vector<StageLoad>& loads, bool stop_when_over) {
  // Runs for every strategy whose first rank fits (the search's second test).
  const BytesPerParam per = OptimizerBytesPerParam(s);
  const ShardRanks shard_ranks(s);
  const MemoryLimit limit(c);
  auto for_stage = [&](const StageLoad& load) {
    MemoryBreakdown mb;
    FillStateParts(c, s, lm, load, per, shard_ranks, &mb);
    mb.activations_bytes = std::ceil(StageActivationBytes(s, lm, load));
    mb.reserved_bytes = limit.reserved_bytes;
    mb.total_bytes = StateSum(mb) + mb.activations_bytes + mb.reserved_bytes;
    mb.capacity_bytes = limit.capacity_bytes;
    mb.fits = mb.total_bytes <= mb.capacity_bytes;
    return mb;
  };
  // The first rank holds the most activations and is tried first; then the
  // last, then the middle ranks, each of which may hold a different share
  // of the layers, of the MoE layers and of the bf16 ones (each run of
  // middle ranks that hold the same layers once: its first rank is its
  // fullest, FoldedStageLoads).
  const size_t last = loads.size() - 1;
  MemoryBreakdown worst = for_stage(loads[0]);
  auto consider = [&](size_t i) {
    MemoryBreakdown stage = for_stage(loads[i]);
    if (stage.total_bytes > worst.total_bytes) worst = stage;
  };
  if (last > 0) {
    if (!worst.fits && stop_when_over) return worst;
    consider(last);
  }
  for (size_t i = 1; i < last; ++i) {
    if (!worst.fits && stop_when_over) return worst;
    consider(i);
  }
  return worst;
}

}  // namespace

MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm,
                               const std::vector<StageLoad>& folded) {
  return StageMemory(c, s, lm, folded, false);
}

MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm) {
  return EstimateMemory(c, s, lm, FoldedStageLoads(c.model, s));
}

std::optional<MemoryBreakdown> MemoryIfFits(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm,
                                            const std::vector<StageLoad>& folded) {
  // Stopping early changes nothing when every stage fits: then all were seen.
  MemoryBreakdown worst = StageMemory(c, s, lm, folded, true);
  if (!worst.fits) return std::nullopt;
  return worst;
}

MemoryBreakdown EstimateMemory(const PerfContext& c, const spec::Strategy& s) {
  return EstimateMemory(c, s, ComputeLayerMemory(c, s));
}

double StageStateBytes(const PerfContext& c, const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load) {
  MemoryBreakdown mb;
  FillStateParts(c, s, lm, load, OptimizerBytesPerParam(s), ShardRanks(s), &mb);
  return StateSum(mb);
}

double StageActivationBytesRounded(const spec::Strategy& s, const LayerMemory& lm, const StageLoad& load) {
  return std::ceil(StageActivationBytes(s, lm, load));
}

MemoryLimit::MemoryLimit(const PerfContext& c)
    : reserved_bytes(std::ceil(c.system.gpu.memory_reserved_bytes)), capacity_bytes(std::floor(c.system.gpu.hbm_bytes)) {}

}  // namespace railsim::perf
