#include "railsim/spec/launcher_args.h"

#include <cassert>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/spec/pipeline_split.h"

namespace railsim::spec {
namespace {

// One argument: a Megatron flag ("--sequence-parallel", value "" when bare)
// or a NeMo key ("model.sequence_parallel", value "true").
using Args = std::vector<std::pair<std::string, std::string>>;

// Each strategy field under its railsim flag (what ValidateStrategy names),
// its Megatron-LM flag and its NeMo key.
struct Field {
  const char* railsim;
  const char* megatron;
  const char* nemo;
};
constexpr Field kFields[] = {
    {"--tp", "--tensor-model-parallel-size", "model.tensor_model_parallel_size"},
    {"--pp", "--pipeline-model-parallel-size", "model.pipeline_model_parallel_size"},
    {"--vp", "--num-virtual-stages-per-pipeline-rank", "model.virtual_pipeline_model_parallel_size"},
    {"--cp", "--context-parallel-size", "model.context_parallel_size"},
    {"--ep", "--expert-model-parallel-size", "model.expert_model_parallel_size"},
    {"--expert-tensor-parallel-size", "--expert-tensor-parallel-size", "model.expert_tensor_parallel_size"},
    {"--micro-batch-size", "--micro-batch-size", "model.micro_batch_size"},
    {"--global-batch-size", "--global-batch-size", "model.global_batch_size"},
    {"--dp", "--global-batch-size", "model.global_batch_size"},  // dp is derived; the batch is what to change
    {"--gpus", "--tensor-model-parallel-size", "model.tensor_model_parallel_size"},
    {"--sequence-parallel", "--sequence-parallel", "model.sequence_parallel"},
    {"--tp-comm-overlap", "--tp-comm-overlap", "model.ub_tp_comm_overlap"},
    {"--microbatch-group-size-per-virtual-pipeline-stage", "--microbatch-group-size-per-virtual-pipeline-stage",
     "--microbatch-group-size-per-virtual-pipeline-stage"},
};

std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool b) { return b ? "true" : "false"; }

std::string Number(double v) { return fmt::format("{}", v); }

// Megatron's --moe-layer-freq for the model's MoE layers: 1 when every
// layer is one, k when every k-th is (layer i when i mod k == 0, Megatron's
// reading of an integer), else a list expression of runs, e.g.
// ([0]*3+[1]*58), in single quotes for the shell.
std::string MoeLayerFreq(const ModelSpec& m) {
  const int n = m.num_layers;
  for (int k = 1; k <= n; ++k) {
    bool every_kth = true;
    for (int i = 0; i < n && every_kth; ++i) every_kth = (m.moe_layers[size_t(i)] != 0) == (i % k == 0);
    if (every_kth) return Int(k);
  }
  std::string runs;
  for (int i = 0; i < n;) {
    int j = i;
    while (j < n && m.moe_layers[size_t(j)] == m.moe_layers[size_t(i)]) ++j;
    runs += fmt::format("{}[{}]*{}", runs.empty() ? "" : "+", int(m.moe_layers[size_t(i)]), j - i);
    i = j;
  }
  return "'(" + runs + ")'";
}

// railsim's split of layers over stages without flags, as Megatron-Core's
// --decoder-first/last-pipeline-num-layers {first, last} (0: not given);
// nullopt when Megatron-Core cannot split so (its middle stages share
// evenly, and with interleaving every count is a multiple of vp).
std::optional<std::pair<int, int>> EdgeLayersOf(const Strategy& s, int n) {
  if (HasSplitFlags(s)) return std::pair{s.decoder_first_pipeline_num_layers, s.decoder_last_pipeline_num_layers};
  if (s.pp == 1 || n % s.pp == 0) return std::pair{0, 0};
  const int first = LayersOnRank(s, n, 0), last = LayersOnRank(s, n, s.pp - 1);
  const int middle = s.pp > 2 ? LayersOnRank(s, n, 1) : 0;
  for (int r = 2; r < s.pp - 1; ++r) {
    if (LayersOnRank(s, n, r) != middle) return std::nullopt;
  }
  Strategy megatron = s;
  megatron.decoder_first_pipeline_num_layers = s.pp == 2 || first != middle ? first : 0;
  megatron.decoder_last_pipeline_num_layers = s.pp == 2 || last != middle ? last : 0;
  if (CheckPipelineSplit(megatron, n)) return std::nullopt;
  return std::pair{megatron.decoder_first_pipeline_num_layers, megatron.decoder_last_pipeline_num_layers};
}

// The model as Megatron-LM's architecture flags.
Args MegatronModelArgs(const ModelSpec& m) {
  Args a = {{"--num-layers", Int(m.num_layers)},
            {"--hidden-size", Int(m.hidden_size)},
            {"--ffn-hidden-size", Int(m.ffn_hidden_size)},
            {"--num-attention-heads", Int(m.num_attention_heads)}};
  if (m.num_query_groups != m.num_attention_heads) {
    a.insert(a.end(), {{"--group-query-attention", ""}, {"--num-query-groups", Int(m.num_query_groups)}});
  }
  a.insert(a.end(), {{"--kv-channels", Int(m.kv_channels())},
                     {"--seq-length", Int(m.seq_length)},
                     {"--max-position-embeddings", Int(m.seq_length)},
                     {"--position-embedding-type",
                      m.position_embedding_type == PositionEmbedding::kRope ? "rope" : "learned_absolute"},
                     {"--normalization", m.normalization == Normalization::kRmsNorm ? "RMSNorm" : "LayerNorm"}});
  if (m.swiglu) a.push_back({"--swiglu", ""});
  if (m.untie_embeddings_and_output_weights) a.push_back({"--untie-embeddings-and-output-weights", ""});
  if (!m.add_bias_linear) a.push_back({"--disable-bias-linear", ""});
  if (m.qk_layernorm) a.push_back({"--qk-layernorm", ""});
  a.insert(a.end(), {{"--hidden-dropout", Number(m.hidden_dropout)}, {"--attention-dropout", Number(m.attention_dropout)}});
  if (m.multi_latent_attention) {
    a.push_back({"--multi-latent-attention", ""});
    if (m.mla.q_lora_rank > 0) a.push_back({"--q-lora-rank", Int(m.mla.q_lora_rank)});
    a.insert(a.end(), {{"--kv-lora-rank", Int(m.mla.kv_lora_rank)},
                       {"--qk-head-dim", Int(m.mla.qk_head_dim)},
                       {"--qk-pos-emb-head-dim", Int(m.mla.qk_pos_emb_head_dim)},
                       {"--v-head-dim", Int(m.mla.v_head_dim)}});
  }
  if (m.is_moe()) {
    a.insert(a.end(), {{"--num-experts", Int(m.num_experts)},
                       {"--moe-router-topk", Int(m.moe_router_topk)},
                       {"--moe-ffn-hidden-size", Int(m.moe_ffn_hidden_size)},
                       {"--moe-layer-freq", MoeLayerFreq(m)}});
    if (m.moe_shared_expert_intermediate_size > 0) {
      a.push_back({"--moe-shared-expert-intermediate-size", Int(m.moe_shared_expert_intermediate_size)});
    }
    // railsim times an all-to-all dispatch into grouped expert GEMMs.
    a.insert(a.end(), {{"--moe-token-dispatcher-type", "alltoall"}, {"--moe-grouped-gemm", ""}});
  }
  // A timing run: mock data through the null tokenizer of the model's
  // vocabulary (header comment), and a schedule to run.
  a.insert(a.end(), {{"--tokenizer-type", "NullTokenizer"},
                     {"--vocab-size", Int(m.vocab_size)},
                     {"--mock-data", ""},
                     {"--train-iters", Int(kTimingIterations)},
                     {"--lr", "1.0e-4"}});
  return a;
}

Args MegatronArgs(const Strategy& s, const ModelSpec& m) {
  Args a = MegatronModelArgs(m);
  a.insert(a.end(), {{"--tensor-model-parallel-size", Int(s.tp)}, {"--pipeline-model-parallel-size", Int(s.pp)}});
  if (s.account_for_embedding_in_pipeline_split) a.push_back({"--account-for-embedding-in-pipeline-split", ""});
  if (s.account_for_loss_in_pipeline_split) a.push_back({"--account-for-loss-in-pipeline-split", ""});
  const std::optional<std::pair<int, int>> edges = EdgeLayersOf(s, m.num_layers);
  assert(edges && "LauncherProblem refused the split first");
  if (edges->first > 0) a.push_back({"--decoder-first-pipeline-num-layers", Int(edges->first)});
  if (edges->second > 0) a.push_back({"--decoder-last-pipeline-num-layers", Int(edges->second)});
  if (s.vp > 1) {
    a.push_back({"--num-virtual-stages-per-pipeline-rank", Int(s.vp)});
    if (s.group_size() != s.pp) {
      a.push_back({"--microbatch-group-size-per-virtual-pipeline-stage", Int(s.group_size())});
    }
  }
  a.insert(a.end(), {{"--context-parallel-size", Int(s.cp)}, {"--expert-model-parallel-size", Int(s.ep)}});
  // Megatron-Core's default is tp: written only when it differs.
  if (m.is_moe() && s.expert_tp() != s.tp) a.push_back({"--expert-tensor-parallel-size", Int(s.expert_tp())});
  a.insert(a.end(), {{"--micro-batch-size", Int(s.micro_batch)}, {"--global-batch-size", Int(s.global_batch)}});
  if (s.sequence_parallel) a.push_back({"--sequence-parallel", ""});
  if (s.recompute == Recompute::kSelective) a.push_back({"--recompute-granularity", "selective"});
  if (s.recompute == Recompute::kFull) {
    a.insert(a.end(), {{"--recompute-granularity", "full"}, {"--recompute-method", "uniform"},
                       {"--recompute-num-layers", "1"}});
  }
  if (s.distributed_optimizer()) a.push_back({"--use-distributed-optimizer", ""});
  if (s.dp_sharding == DpSharding::kGradients || s.dp_sharding == DpSharding::kFull) {
    // Megatron-FSDP's required flags (docs/discussions/megatron-fsdp-user-guide).
    a.insert(a.end(), {{"--use-megatron-fsdp", ""},
                       {"--data-parallel-sharding-strategy",
                        s.dp_sharding == DpSharding::kFull ? "optim_grads_params" : "optim_grads"},
                       {"--no-gradient-accumulation-fusion", ""},
                       {"--ckpt-format", "fsdp_dtensor"}});
  }
  if (s.hybrid_sharding()) {
    a.push_back({"--num-distributed-optimizer-instances", Int(s.dp * s.cp / s.shard_group())});
  }
  if (s.main_grads_dtype != MainGradsDtype::kFp32 || s.main_params_dtype != MainParamsDtype::kFp32 ||
      s.exp_avg_dtype != MomentDtype::kFp32 || s.exp_avg_sq_dtype != MomentDtype::kFp32) {
    a.insert(a.end(), {{"--use-precision-aware-optimizer", ""},
                       {"--main-grads-dtype", MainGradsDtypeName(s.main_grads_dtype)},
                       {"--main-params-dtype", MainParamsDtypeName(s.main_params_dtype)},
                       {"--exp-avg-dtype", MomentDtypeName(s.exp_avg_dtype)},
                       {"--exp-avg-sq-dtype", MomentDtypeName(s.exp_avg_sq_dtype)}});
  }
  if (s.overlap_dp_comm) a.push_back({"--overlap-grad-reduce", ""});
  if (s.overlap_dp_comm && s.distributed_optimizer()) a.push_back({"--overlap-param-gather", ""});
  if (s.grad_reduce_16bit) a.push_back({"--grad-reduce-in-bf16", ""});
  if (!s.overlap_p2p_comm) a.push_back({"--no-overlap-p2p-communication", ""});
  if (s.tp_comm_overlap) a.push_back({"--tp-comm-overlap", ""});
  a.push_back({"--bf16", ""});
  switch (s.precision) {
    case Precision::kBf16: break;
    case Precision::kFp8: a.push_back({"--fp8-format", "hybrid"}); break;
    case Precision::kMxfp8: a.insert(a.end(), {{"--fp8-format", "e4m3"}, {"--fp8-recipe", "mxfp8"}}); break;
    case Precision::kFp4: a.insert(a.end(), {{"--fp4-format", "e2m1"}, {"--fp4-recipe", "nvfp4"}}); break;
  }
  if (s.low_precision_params) {
    a.push_back({s.precision == Precision::kFp4 ? "--fp4-param-gather" : "--fp8-param-gather", ""});
  }
  if (s.cuda_graph_impl) a.push_back({"--cuda-graph-impl", CudaGraphImplName(*s.cuda_graph_impl)});
  // The layers railsim keeps in bf16, the defaults included (fp4's 15% at
  // the end): Megatron-LM keeps none unless told.
  const int bf16_start = s.Bf16LayersAtStart(m.num_layers), bf16_end = s.Bf16LayersAtEnd(m.num_layers);
  if (s.bf16_layers_at_start >= 0 || s.bf16_layers_at_end >= 0 || bf16_start > 0 || bf16_end > 0) {
    a.insert(a.end(), {{"--first-last-layers-bf16", ""},
                       {"--num-layers-at-start-in-bf16", Int(bf16_start)},
                       {"--num-layers-at-end-in-bf16", Int(bf16_end)}});
  }
  if (s.attention == Attention::kFlash) a.push_back({"--use-flash-attn", ""});
  return a;
}

Args NemoArgs(const Strategy& s) {
  const char* granularity = s.recompute == Recompute::kSelective ? "selective"
                            : s.recompute == Recompute::kFull    ? "full"
                                                                 : "null";
  const bool full = s.recompute == Recompute::kFull;
  return {{"model.tensor_model_parallel_size", Int(s.tp)},
          {"model.pipeline_model_parallel_size", Int(s.pp)},
          {"model.virtual_pipeline_model_parallel_size", s.vp > 1 ? Int(s.vp) : "null"},
          {"model.context_parallel_size", Int(s.cp)},
          {"model.expert_model_parallel_size", Int(s.ep)},
          {"model.micro_batch_size", Int(s.micro_batch)},
          {"model.global_batch_size", Int(s.global_batch)},
          {"model.sequence_parallel", Bool(s.sequence_parallel)},
          {"model.activations_checkpoint_granularity", granularity},
          {"model.activations_checkpoint_method", full ? "uniform" : "null"},
          {"model.activations_checkpoint_num_layers", full ? "1" : "null"},
          {"model.optim.name", s.distributed_optimizer() ? "distributed_fused_adam" : "fused_adam"},
          {"model.optim.overlap_grad_sync", Bool(s.overlap_dp_comm)},
          {"model.optim.overlap_param_sync", Bool(s.overlap_dp_comm && s.distributed_optimizer())},
          {"model.optim.grad_sync_dtype", s.grad_reduce_16bit ? "bf16" : "fp32"},
          {"model.overlap_p2p_comm", Bool(s.overlap_p2p_comm)},
          {"model.ub_tp_comm_overlap", Bool(s.tp_comm_overlap)},
          {"model.fp8", Bool(s.precision == Precision::kFp8)},
          {"model.fp8_hybrid", Bool(s.precision == Precision::kFp8)},
          {"model.use_flash_attention", Bool(s.attention == Attention::kFlash)}};
}

// Splits text into arguments. Megatron: "--flag" then a value unless the
// next token is another flag. NeMo: "key=value".
Args Tokenize(Launcher launcher, std::string_view text) {
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i < text.size() && text[i] == '#') {  // a comment, to the end of the line
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::string token(text.substr(start, i - start));
    // A value in single quotes (a shell word such as '([0]*3+[1]*58)').
    if (token.size() >= 2 && token.front() == '\'' && token.back() == '\'') token = token.substr(1, token.size() - 2);
    if (i > start && token != "\\") tokens.push_back(token);
  }
  Args args;
  const char* what = LauncherFormatName(launcher);
  for (size_t t = 0; t < tokens.size(); ++t) {
    if (launcher == Launcher::kNemo) {
      size_t eq = tokens[t].find('=');
      if (eq == std::string::npos || eq == 0) {
        throw Error(what, fmt::format("expected key=value, got {}", Quoted(tokens[t])));
      }
      args.push_back({tokens[t].substr(0, eq), tokens[t].substr(eq + 1)});
      continue;
    }
    if (!tokens[t].starts_with("--")) throw Error(what, fmt::format("expected a --flag, got {}", Quoted(tokens[t])));
    const bool has_value = t + 1 < tokens.size() && !tokens[t + 1].starts_with("--");
    args.push_back({tokens[t], has_value ? tokens[t + 1] : ""});
    if (has_value) ++t;
  }
  return args;
}

// The values of one argument, checked; errors name the launcher's flag.
class Reader {
 public:
  explicit Reader(Args args) : args_(std::move(args)) {}

  int64_t Int(const std::string& key, int64_t min, int64_t max) const {
    const std::string& v = Value(key);
    int64_t out = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size() || out < min || out > max) {
      throw Error(key, fmt::format("expected an integer in [{}, {}], got {}", min, max, Quoted(v)));
    }
    return out;
  }
  double Number(const std::string& key) const {
    const std::string& v = Value(key);
    double out = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || end != v.data() + v.size()) throw Error(key, fmt::format("expected a number, got {}", Quoted(v)));
    return out;
  }
  bool Bool(const std::string& key) const {
    const std::string& v = Value(key);
    if (v == "true" || v == "True") return true;
    if (v == "false" || v == "False") return false;
    throw Error(key, fmt::format("expected true or false, got {}", Quoted(v)));
  }
  std::string Choice(const std::string& key, const std::vector<std::string>& allowed) const {
    const std::string& v = Value(key);
    for (const std::string& a : allowed) {
      if (v == a) return v;
    }
    throw Error(key, fmt::format("expected one of {}, got {}{}", fmt::join(allowed, ", "), Quoted(v),
                                 DidYouMean(v, allowed)));
  }
  void Bare(const std::string& key) const {
    if (!Value(key).empty()) throw Error(key, fmt::format("takes no value, got {}", Quoted(Value(key))));
  }
  /// Requires: Has(key).
  const std::string& Value(const std::string& key) const {
    assert(Has(key) && "callers check Has() first");
    return args_[Find(key)].second;
  }
  bool Has(const std::string& key) const { return Find(key) < args_.size(); }
  const Args& args() const { return args_; }

 private:
  size_t Find(const std::string& key) const {
    for (size_t i = 0; i < args_.size(); ++i) {
      if (args_[i].first == key) return i;
    }
    return args_.size();
  }
  Args args_;
};

// The model's flags, checked against the model when given.
const std::vector<std::string> kMegatronModelFlags = {
    "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads", "--group-query-attention",
    "--num-query-groups", "--kv-channels", "--seq-length", "--max-position-embeddings", "--position-embedding-type",
    "--normalization", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear", "--qk-layernorm",
    "--hidden-dropout", "--attention-dropout", "--multi-latent-attention", "--q-lora-rank", "--kv-lora-rank",
    "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim", "--num-experts", "--moe-router-topk",
    "--moe-ffn-hidden-size", "--moe-layer-freq", "--moe-shared-expert-intermediate-size", "--vocab-size"};
// What a run needs beyond the model and strategy, read and not checked.
const std::vector<std::string> kMegatronRunFlags = {
    "--tokenizer-type", "--mock-data", "--train-iters", "--lr", "--moe-token-dispatcher-type", "--moe-grouped-gemm",
    "--no-gradient-accumulation-fusion", "--ckpt-format"};

const std::vector<std::string> kMegatronStrategyFlags = {
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers",
    "--num-virtual-stages-per-pipeline-rank", "--num-layers-per-virtual-pipeline-stage", "--context-parallel-size",
    "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--micro-batch-size", "--global-batch-size", "--sequence-parallel",
    "--recompute-granularity", "--recompute-method", "--recompute-num-layers", "--use-distributed-optimizer",
    "--use-megatron-fsdp", "--data-parallel-sharding-strategy", "--num-distributed-optimizer-instances",
    "--use-precision-aware-optimizer", "--main-grads-dtype", "--main-params-dtype", "--exp-avg-dtype",
    "--exp-avg-sq-dtype", "--overlap-grad-reduce", "--overlap-param-gather", "--grad-reduce-in-bf16",
    "--no-overlap-p2p-communication", "--tp-comm-overlap", "--bf16", "--fp8-format", "--fp8-recipe", "--fp4-format",
    "--fp4-recipe", "--fp8-param-gather", "--fp4-param-gather", "--cuda-graph-impl", "--first-last-layers-bf16",
    "--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16", "--use-flash-attn",
    "--microbatch-group-size-per-virtual-pipeline-stage"};

std::vector<std::string> MegatronFlags() {
  std::vector<std::string> all = kMegatronStrategyFlags;
  all.insert(all.end(), kMegatronModelFlags.begin(), kMegatronModelFlags.end());
  all.insert(all.end(), kMegatronRunFlags.begin(), kMegatronRunFlags.end());
  return all;
}

const std::vector<std::string> kBareMegatronFlags = {
    "--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
    "--grad-reduce-in-bf16", "--no-overlap-p2p-communication", "--tp-comm-overlap", "--bf16", "--use-flash-attn",
    "--fp8-param-gather", "--fp4-param-gather", "--first-last-layers-bf16", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--use-megatron-fsdp", "--use-precision-aware-optimizer",
    "--group-query-attention", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
    "--qk-layernorm", "--multi-latent-attention", "--mock-data", "--moe-grouped-gemm",
    "--no-gradient-accumulation-fusion"};

// Every key known and given once; the batch sizes given.
void CheckKeys(const Reader& r, const std::vector<std::string>& known, const std::string& micro,
               const std::string& global) {
  std::map<std::string, int> seen;
  for (const auto& [key, value] : r.args()) {
    bool ok = false;
    for (const std::string& k : known) ok = ok || k == key;
    if (!ok) {
      throw Error(key, fmt::format("unknown{}; expected one of {}", DidYouMean(key, known), fmt::join(known, ", ")));
    }
    if (++seen[key] > 1) throw Error(key, "given twice");
  }
  for (const std::string& key : {micro, global}) {
    if (!r.Has(key)) throw Error(key, "required: the launchers need it");
  }
}

// Megatron's --moe-layer-freq as MoeLayerFreq writes it (an integer k, or
// runs such as ([0]*3+[1]*58), or a plain list [0,1,1]) for n layers.
std::vector<uint8_t> ParseMoeLayerFreq(const std::string& text, int n) {
  const char* flag = "--moe-layer-freq";
  std::vector<uint8_t> layers;
  int64_t k = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), k);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (k < 1 || k > n) throw Error(flag, fmt::format("expected an integer in [1, {}], got {}", n, k));
    for (int i = 0; i < n; ++i) layers.push_back(i % k == 0 ? 1 : 0);
    return layers;
  }
  auto bad = [&] {
    return Error(flag, fmt::format("expected an integer or a list such as ([0]*3+[1]*58), got {}", Quoted(text)));
  };
  std::string body = text;
  if (body.size() >= 2 && body.front() == '(' && body.back() == ')') body = body.substr(1, body.size() - 2);
  size_t i = 0;
  while (i < body.size()) {
    if (body[i] != '[') throw bad();
    const size_t close = body.find(']', i);
    if (close == std::string::npos) throw bad();
    std::vector<uint8_t> run;
    for (size_t j = i + 1; j < close; j += 2) {
      if ((body[j] != '0' && body[j] != '1') || (j + 1 < close && body[j + 1] != ',')) throw bad();
      run.push_back(uint8_t(body[j] - '0'));
    }
    int64_t times = 1;
    i = close + 1;
    if (i < body.size() && body[i] == '*') {
      size_t digits = i + 1;
      while (digits < body.size() && std::isdigit(static_cast<unsigned char>(body[digits]))) ++digits;
      auto [e, c] = std::from_chars(body.data() + i + 1, body.data() + digits, times);
      if (c != std::errc() || e != body.data() + digits || times > n) throw bad();
      i = digits;
    }
    for (int64_t t = 0; t < times; ++t) layers.insert(layers.end(), run.begin(), run.end());
    if (i < body.size() && body[i++] != '+') throw bad();
  }
  if (int(layers.size()) != n) {
    throw Error(flag, fmt::format("expected a pattern of num_layers {} entries, got {}", n, layers.size()));
  }
  return layers;
}

// The model flags given describe `m`. Bare ones (--swiglu, ...) are checked
// when the text carries the model (--num-layers given): their absence says
// something then.
void CheckModelFlags(const Reader& r, const ModelSpec& m) {
  auto expect_int = [&](const char* flag, int64_t want) {
    if (!r.Has(flag)) return;
    const int64_t got = r.Int(flag, 0, int64_t{1} << 40);
    if (got != want) throw Error(flag, fmt::format("expected the model's {}, got {}", want, got));
  };
  auto expect_number = [&](const char* flag, double want) {
    if (r.Has(flag) && r.Number(flag) != want) {
      throw Error(flag, fmt::format("expected the model's {}, got {}", want, r.Value(flag)));
    }
  };
  auto expect_choice = [&](const char* flag, const std::string& want, const std::vector<std::string>& allowed) {
    if (r.Has(flag) && r.Choice(flag, allowed) != want) {
      throw Error(flag, fmt::format("expected the model's {}, got {}", want, r.Value(flag)));
    }
  };
  expect_int("--num-layers", m.num_layers);
  expect_int("--hidden-size", m.hidden_size);
  expect_int("--ffn-hidden-size", m.ffn_hidden_size);
  expect_int("--num-attention-heads", m.num_attention_heads);
  expect_int("--num-query-groups", m.num_query_groups);
  expect_int("--kv-channels", m.kv_channels());
  expect_int("--seq-length", m.seq_length);
  expect_int("--vocab-size", m.vocab_size);
  if (r.Has("--max-position-embeddings") && r.Int("--max-position-embeddings", 1, kMaxSeqLength) < m.seq_length) {
    throw Error("--max-position-embeddings", fmt::format("expected at least seq_length {}, got {}", m.seq_length,
                                                         r.Value("--max-position-embeddings")));
  }
  expect_choice("--position-embedding-type",
                m.position_embedding_type == PositionEmbedding::kRope ? "rope" : "learned_absolute",
                {"learned_absolute", "rope"});
  expect_choice("--normalization", m.normalization == Normalization::kRmsNorm ? "RMSNorm" : "LayerNorm",
                {"LayerNorm", "RMSNorm"});
  expect_number("--hidden-dropout", m.hidden_dropout);
  expect_number("--attention-dropout", m.attention_dropout);
  expect_int("--q-lora-rank", m.mla.q_lora_rank);
  expect_int("--kv-lora-rank", m.mla.kv_lora_rank);
  expect_int("--qk-head-dim", m.mla.qk_head_dim);
  expect_int("--qk-pos-emb-head-dim", m.mla.qk_pos_emb_head_dim);
  expect_int("--v-head-dim", m.mla.v_head_dim);
  expect_int("--num-experts", m.num_experts);
  expect_int("--moe-router-topk", m.moe_router_topk);
  expect_int("--moe-ffn-hidden-size", m.moe_ffn_hidden_size);
  expect_int("--moe-shared-expert-intermediate-size", m.moe_shared_expert_intermediate_size);
  if (r.Has("--moe-layer-freq")) {
    if (!m.is_moe()) throw Error("--moe-layer-freq", "applies to MoE models only (num_experts is 0)");
    if (ParseMoeLayerFreq(r.Value("--moe-layer-freq"), m.num_layers) != m.moe_layers) {
      throw Error("--moe-layer-freq", fmt::format("expected the model's MoE layers, got {}", Quoted(r.Value("--moe-layer-freq"))));
    }
  }
  if (!r.Has("--num-layers")) return;
  for (auto [flag, want] : {std::pair{"--group-query-attention", m.num_query_groups != m.num_attention_heads},
                            std::pair{"--swiglu", m.swiglu},
                            std::pair{"--untie-embeddings-and-output-weights", m.untie_embeddings_and_output_weights},
                            std::pair{"--disable-bias-linear", !m.add_bias_linear},
                            std::pair{"--qk-layernorm", m.qk_layernorm},
                            std::pair{"--multi-latent-attention", m.multi_latent_attention}}) {
    if (r.Has(flag) != want) {
      throw Error(flag, want ? "expected: the model has it" : "expected absent: the model does not have it");
    }
  }
  if (m.is_moe() && !r.Has("--num-experts")) throw Error("--num-experts", fmt::format("expected the model's {}", m.num_experts));
}

// The virtual stages per rank: --num-virtual-stages-per-pipeline-rank, or
// --num-layers-per-virtual-pipeline-stage over the split's layers per rank
// (the embedding and loss counted when they are), as arguments.py derives it.
int ReadVirtualStages(const Reader& r, const ModelSpec& m, const Strategy& s) {
  const char* stages = "--num-virtual-stages-per-pipeline-rank";
  const char* per_stage = "--num-layers-per-virtual-pipeline-stage";
  if (r.Has(stages) && r.Has(per_stage)) throw Error(per_stage, fmt::format("give it or {}, not both", stages));
  if (r.Has(stages)) return int(r.Int(stages, 1, kMaxModelGpus));
  if (!r.Has(per_stage)) return 1;
  if (HasSplitFlags(s) && (s.decoder_first_pipeline_num_layers > 0 || s.decoder_last_pipeline_num_layers > 0)) {
    throw Error(per_stage, fmt::format("does not apply to an uneven split; give {}", stages));
  }
  const int layers = m.num_layers + (s.account_for_embedding_in_pipeline_split ? 1 : 0) +
                     (s.account_for_loss_in_pipeline_split ? 1 : 0);
  const int64_t per = r.Int(per_stage, 1, layers);
  if (layers % (per * s.pp) != 0) {
    throw Error(per_stage, fmt::format("expected a divisor of the {} layers / pipeline stages {}, got {}", layers,
                                       s.pp, per));
  }
  return int(layers / (per * s.pp));
}

// Data-parallel sharding and the optimizer's precision.
void ReadOptimizer(const Reader& r, Strategy* s) {
  s->dp_sharding = r.Has("--use-distributed-optimizer") ? DpSharding::kOptimizer : DpSharding::kNone;
  const char* strategy = "--data-parallel-sharding-strategy";
  if (r.Has("--use-megatron-fsdp")) {
    if (!r.Has(strategy)) throw Error("--use-megatron-fsdp", fmt::format("needs {}", strategy));
    const std::string sharding = r.Choice(strategy, {"optim", "optim_grads", "optim_grads_params"});
    s->dp_sharding = sharding == "optim_grads_params" ? DpSharding::kFull
                     : sharding == "optim_grads"      ? DpSharding::kGradients
                                                      : DpSharding::kOptimizer;
  } else if (r.Has(strategy)) {
    throw Error(strategy, "needs --use-megatron-fsdp");
  }
  const bool aware = r.Has("--use-precision-aware-optimizer");
  for (const char* flag : {"--main-grads-dtype", "--main-params-dtype", "--exp-avg-dtype", "--exp-avg-sq-dtype"}) {
    if (r.Has(flag) && !aware) throw Error(flag, "needs --use-precision-aware-optimizer");
  }
  if (!aware) return;
  auto bf16 = [&](const char* flag) { return r.Has(flag) && r.Choice(flag, {"fp32", "bf16"}) == "bf16"; };
  s->main_grads_dtype = bf16("--main-grads-dtype") ? MainGradsDtype::kBf16 : MainGradsDtype::kFp32;
  s->exp_avg_dtype = bf16("--exp-avg-dtype") ? MomentDtype::kBf16 : MomentDtype::kFp32;
  s->exp_avg_sq_dtype = bf16("--exp-avg-sq-dtype") ? MomentDtype::kBf16 : MomentDtype::kFp32;
  if (r.Has("--main-params-dtype") && r.Choice("--main-params-dtype", {"fp32", "fp16"}) == "fp16") {
    s->main_params_dtype = MainParamsDtype::kFp16;
  }
}

Strategy ReadMegatron(const Reader& r, const ModelSpec& m) {
  CheckKeys(r, MegatronFlags(), "--micro-batch-size", "--global-batch-size");
  for (const std::string& flag : kBareMegatronFlags) {
    if (r.Has(flag)) r.Bare(flag);
  }
  CheckModelFlags(r, m);
  Strategy s;
  auto degree = [&](const char* flag) { return r.Has(flag) ? int(r.Int(flag, 1, kMaxModelGpus)) : 1; };
  s.tp = degree("--tensor-model-parallel-size");
  s.pp = degree("--pipeline-model-parallel-size");
  s.cp = degree("--context-parallel-size");
  s.ep = degree("--expert-model-parallel-size");
  if (r.Has("--expert-tensor-parallel-size")) s.etp = degree("--expert-tensor-parallel-size");
  s.account_for_embedding_in_pipeline_split = r.Has("--account-for-embedding-in-pipeline-split");
  s.account_for_loss_in_pipeline_split = r.Has("--account-for-loss-in-pipeline-split");
  for (auto [flag, field] : {std::pair{"--decoder-first-pipeline-num-layers", &s.decoder_first_pipeline_num_layers},
                             std::pair{"--decoder-last-pipeline-num-layers", &s.decoder_last_pipeline_num_layers}}) {
    if (r.Has(flag)) *field = int(r.Int(flag, 1, kMaxModelLayers));
  }
  s.vp = ReadVirtualStages(r, m, s);
  s.micro_batch = r.Int("--micro-batch-size", 1, kMaxGlobalBatch);
  s.global_batch = r.Int("--global-batch-size", 1, kMaxGlobalBatch);
  if (r.Has("--microbatch-group-size-per-virtual-pipeline-stage")) {
    s.microbatch_group_size_per_vp_stage =
        r.Int("--microbatch-group-size-per-virtual-pipeline-stage", 1, kMaxGlobalBatch);
  }
  s.sequence_parallel = r.Has("--sequence-parallel");
  if (r.Has("--recompute-granularity")) {
    const bool full = r.Choice("--recompute-granularity", {"selective", "full"}) == "full";
    s.recompute = full ? Recompute::kFull : Recompute::kSelective;
    if (full) {
      // railsim models full recomputation of every layer.
      if (!r.Has("--recompute-method") || !r.Has("--recompute-num-layers")) {
        throw Error("--recompute-granularity", "full needs --recompute-method uniform --recompute-num-layers 1");
      }
      r.Choice("--recompute-method", {"uniform"});
      r.Int("--recompute-num-layers", 1, 1);
    }
  }
  for (const char* flag : {"--recompute-method", "--recompute-num-layers"}) {
    if (r.Has(flag) && s.recompute != Recompute::kFull) throw Error(flag, "only with --recompute-granularity full");
  }
  ReadOptimizer(r, &s);
  s.overlap_dp_comm = r.Has("--overlap-grad-reduce");
  if (r.Has("--overlap-param-gather") && !(s.overlap_dp_comm && s.distributed_optimizer())) {
    throw Error("--overlap-param-gather", "needs --overlap-grad-reduce and --use-distributed-optimizer");
  }
  s.grad_reduce_16bit = r.Has("--grad-reduce-in-bf16");
  s.overlap_p2p_comm = !r.Has("--no-overlap-p2p-communication");
  s.tp_comm_overlap = r.Has("--tp-comm-overlap");
  if (r.Has("--fp8-format")) {
    r.Choice("--fp8-format", {"hybrid", "e4m3"});
    s.precision = Precision::kFp8;
    if (r.Has("--fp8-recipe") && r.Choice("--fp8-recipe", {"delayed", "tensorwise", "mxfp8"}) == "mxfp8") {
      s.precision = Precision::kMxfp8;
    }
  } else if (r.Has("--fp8-recipe")) {
    throw Error("--fp8-recipe", "needs --fp8-format");
  }
  if (r.Has("--fp4-format")) {
    if (r.Has("--fp8-format")) throw Error("--fp4-format", "expected one of --fp8-format and --fp4-format");
    r.Choice("--fp4-format", {"e2m1"});
    if (r.Has("--fp4-recipe")) r.Choice("--fp4-recipe", {"nvfp4"});
    s.precision = Precision::kFp4;
  }
  s.low_precision_params = r.Has("--fp8-param-gather") || r.Has("--fp4-param-gather");
  if (r.Has("--first-last-layers-bf16")) {
    s.bf16_layers_at_start = r.Has("--num-layers-at-start-in-bf16")
                                 ? int(r.Int("--num-layers-at-start-in-bf16", 0, kMaxModelLayers)) : 1;
    s.bf16_layers_at_end = r.Has("--num-layers-at-end-in-bf16")
                               ? int(r.Int("--num-layers-at-end-in-bf16", 0, kMaxModelLayers)) : 1;
  }
  s.attention = r.Has("--use-flash-attn") ? Attention::kFlash : Attention::kClassic;
  if (r.Has("--cuda-graph-impl")) {
    s.cuda_graph_impl = CudaGraphImplFromName(r.Choice("--cuda-graph-impl", CudaGraphImplNames()));
  }
  return s;
}

Strategy ReadNemo(const Reader& r) {
  std::vector<std::string> known;
  for (const auto& [key, value] : NemoArgs(Strategy())) known.push_back(key);
  CheckKeys(r, known, "model.micro_batch_size", "model.global_batch_size");
  Strategy s;
  auto degree = [&](const char* key) { return r.Has(key) ? int(r.Int(key, 1, kMaxModelGpus)) : 1; };
  auto flag = [&](const char* key, bool fallback) { return r.Has(key) ? r.Bool(key) : fallback; };
  auto nullable = [&](const char* key) { return !r.Has(key) || r.Value(key) == "null"; };
  s.tp = degree("model.tensor_model_parallel_size");
  s.pp = degree("model.pipeline_model_parallel_size");
  s.vp = nullable("model.virtual_pipeline_model_parallel_size")
             ? 1
             : int(r.Int("model.virtual_pipeline_model_parallel_size", 1, kMaxModelGpus));
  s.cp = degree("model.context_parallel_size");
  s.ep = degree("model.expert_model_parallel_size");
  s.micro_batch = r.Int("model.micro_batch_size", 1, kMaxGlobalBatch);
  s.global_batch = r.Int("model.global_batch_size", 1, kMaxGlobalBatch);
  s.sequence_parallel = flag("model.sequence_parallel", false);
  if (!nullable("model.activations_checkpoint_granularity")) {
    const bool full = r.Choice("model.activations_checkpoint_granularity", {"selective", "full"}) == "full";
    s.recompute = full ? Recompute::kFull : Recompute::kSelective;
  }
  if (s.recompute == Recompute::kFull) {
    // railsim models full recomputation of every layer.
    for (const char* key : {"model.activations_checkpoint_method", "model.activations_checkpoint_num_layers"}) {
      if (nullable(key)) throw Error(key, "required with model.activations_checkpoint_granularity=full");
    }
    r.Choice("model.activations_checkpoint_method", {"uniform"});
    r.Int("model.activations_checkpoint_num_layers", 1, 1);
  } else {
    for (const char* key : {"model.activations_checkpoint_method", "model.activations_checkpoint_num_layers"}) {
      if (!nullable(key)) throw Error(key, "expected null unless model.activations_checkpoint_granularity=full");
    }
  }
  if (r.Has("model.optim.name")) {
    s.dp_sharding = r.Choice("model.optim.name", {"distributed_fused_adam", "fused_adam"}) == "distributed_fused_adam"
                        ? DpSharding::kOptimizer
                        : DpSharding::kNone;
  }
  s.overlap_dp_comm = flag("model.optim.overlap_grad_sync", true);
  if (flag("model.optim.overlap_param_sync", false) && !(s.overlap_dp_comm && s.distributed_optimizer())) {
    throw Error("model.optim.overlap_param_sync",
                "needs model.optim.overlap_grad_sync=true and model.optim.name=distributed_fused_adam");
  }
  if (r.Has("model.optim.grad_sync_dtype")) {
    s.grad_reduce_16bit = r.Choice("model.optim.grad_sync_dtype", {"bf16", "fp32"}) == "bf16";
  }
  s.overlap_p2p_comm = flag("model.overlap_p2p_comm", true);
  s.tp_comm_overlap = flag("model.ub_tp_comm_overlap", false);
  const bool fp8 = flag("model.fp8", false);
  if (r.Has("model.fp8_hybrid") && r.Bool("model.fp8_hybrid") && !fp8) {
    throw Error("model.fp8_hybrid", "needs model.fp8=true");
  }
  s.precision = fp8 ? Precision::kFp8 : Precision::kBf16;
  s.attention = flag("model.use_flash_attention", true) ? Attention::kFlash : Attention::kClassic;
  return s;
}

// A railsim flag in a ValidateStrategy error becomes the launcher's.
Error Renamed(const Error& e, Launcher launcher) {
  for (const Field& f : kFields) {
    if (e.where() == f.railsim) return Error(launcher == Launcher::kNemo ? f.nemo : f.megatron, e.message());
  }
  return e;
}

}  // namespace

const char* LauncherFormatName(Launcher launcher) {
  return launcher == Launcher::kNemo ? "nemo-overrides" : "megatron-args";
}

std::string LauncherProblem(Launcher launcher, const Strategy& s, const ModelSpec& model) {
  if (launcher == Launcher::kNemo) {
    if (s.precision == Precision::kMxfp8 || s.precision == Precision::kFp4 || s.low_precision_params ||
        s.bf16_layers_at_start >= 0 || s.bf16_layers_at_end >= 0) {
      return fmt::format("nemo-overrides write bf16 and fp8 strategies only (the megatron_gpt_config.yaml keys); for "
                         "{} use --format megatron-args", PrecisionName(s.precision));
    }
    if (HasSplitFlags(s)) {
      return "nemo-overrides have no keys for Megatron-Core's uneven pipeline split (megatron_gpt_config.yaml); use "
             "--format megatron-args";
    }
    if (s.cuda_graph_impl) {
      return "nemo-overrides have no key for --cuda-graph-impl (megatron_gpt_config.yaml); use --format megatron-args";
    }
    if (s.expert_tp() != s.tp) {
      return "nemo-overrides write the experts' tensor parallelism as tp only; for another "
             "--expert-tensor-parallel-size use --format megatron-args";
    }
    return "";
  }
  if (!EdgeLayersOf(s, model.num_layers)) {
    std::string counts;
    for (int r = 0; r < s.pp; ++r) counts += fmt::format("{}{}", r ? ", " : "", LayersOnRank(s, model.num_layers, r));
    return fmt::format("Megatron-LM cannot split {} layers over {} stages{} as railsim does ({}): Megatron-Core's "
                       "middle stages hold equal shares{}; give --decoder-first-pipeline-num-layers and "
                       "--decoder-last-pipeline-num-layers, or --account-for-embedding-in-pipeline-split and "
                       "--account-for-loss-in-pipeline-split",
                       model.num_layers, s.pp, s.vp > 1 ? fmt::format(" of {} virtual stages", s.vp) : "", counts,
                       s.vp > 1 ? ", each stage's a multiple of the virtual stages" : "");
  }
  if (s.main_params_dtype == MainParamsDtype::kNone) {
    return "Megatron-LM keeps a master copy of the weights (its --main-params-dtype is fp32 or fp16); railsim's "
           "--main-params-dtype none has no launch flag";
  }
  return "";
}

std::string LauncherArgs(Launcher launcher, const Strategy& s, const ModelSpec& model) {
  if (std::string problem = LauncherProblem(launcher, s, model); !problem.empty()) throw Error("--format", problem);
  const Args args = launcher == Launcher::kNemo ? NemoArgs(s) : MegatronArgs(s, model);
  std::string out;
  if (launcher == Launcher::kMegatron) {
    out = fmt::format("# Megatron-LM {} (flag names from megatron/training/arguments.py)\n"
                      "# {}: a timing run on mock data; to train, replace --mock-data, --tokenizer-type, --train-iters "
                      "and --lr with the run's data, tokenizer and schedule (NullTokenizer adds one token to "
                      "--vocab-size)\n",
                      kMegatronLmVersion, model.name.empty() ? std::string("the model") : model.name);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& [key, value] = args[i];
    out += launcher == Launcher::kNemo ? key + "=" + value : value.empty() ? key : key + " " + value;
    out += i + 1 < args.size() ? " \\\n" : "\n";
  }
  return out;
}

Strategy ParseLauncherArgs(Launcher launcher, std::string_view text, const ModelSpec& model, int64_t gpus) {
  Reader r(Tokenize(launcher, text));
  Strategy s = launcher == Launcher::kNemo ? ReadNemo(r) : ReadMegatron(r, model);
  const int64_t others = int64_t{s.tp} * s.pp * s.cp;
  if (gpus % others != 0) {
    throw Error(launcher == Launcher::kNemo ? "model.tensor_model_parallel_size" : "--tensor-model-parallel-size",
                fmt::format("tp x pp x cp = {} does not divide the {} GPUs", others, gpus));
  }
  s.dp = gpus / others;
  const char* instances = "--num-distributed-optimizer-instances";
  if (launcher == Launcher::kMegatron && r.Has(instances)) {
    // Replicas of the sharded state: each shards over dp x cp / instances ranks.
    const int64_t replicas = r.Int(instances, 1, s.dp * s.cp);
    if ((s.dp * s.cp) % replicas != 0) {
      throw Error(instances, fmt::format("expected a divisor of dp x cp = {}, got {}", s.dp * s.cp, replicas));
    }
    if (replicas > 1) s.fsdp_shard_group_size = s.dp * s.cp / replicas;
  }
  try {
    ValidateStrategy(model, gpus, s);
  } catch (const Error& e) {
    throw Renamed(e, launcher);
  }
  return s;
}

}  // namespace railsim::spec
