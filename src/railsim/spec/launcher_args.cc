#include "railsim/spec/launcher_args.h"

#include <cassert>
#include <cctype>
#include <charconv>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"

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
    {"--vp", "--num-layers-per-virtual-pipeline-stage", "model.virtual_pipeline_model_parallel_size"},
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

Args MegatronArgs(const Strategy& s, const ModelSpec& m) {
  Args a = {{"--tensor-model-parallel-size", Int(s.tp)}, {"--pipeline-model-parallel-size", Int(s.pp)}};
  if (s.vp > 1) {
    // The per-stage layer count only exists for an even split.
    if (m.num_layers % (s.pp * s.vp) == 0) {
      a.push_back({"--num-layers-per-virtual-pipeline-stage", Int(m.num_layers / (s.pp * s.vp))});
    } else {
      a.push_back({"--virtual-pipeline-model-parallel-size", Int(s.vp)});
    }
    if (s.group_size() != s.pp) {
      a.push_back({"--microbatch-group-size-per-virtual-pipeline-stage", Int(s.group_size())});
    }
  }
  a.insert(a.end(), {{"--context-parallel-size", Int(s.cp)},
                     {"--expert-model-parallel-size", Int(s.ep)},
                     {"--micro-batch-size", Int(s.micro_batch)},
                     {"--global-batch-size", Int(s.global_batch)}});
  // Megatron-Core's default is tp: written only when it differs.
  if (m.is_moe() && s.expert_tp() != s.tp) a.push_back({"--expert-tensor-parallel-size", Int(s.expert_tp())});
  if (s.sequence_parallel) a.push_back({"--sequence-parallel", ""});
  if (s.recompute == Recompute::kSelective) a.push_back({"--recompute-granularity", "selective"});
  if (s.recompute == Recompute::kFull) {
    a.insert(a.end(), {{"--recompute-granularity", "full"}, {"--recompute-method", "uniform"},
                       {"--recompute-num-layers", "1"}});
  }
  if (s.distributed_optimizer()) a.push_back({"--use-distributed-optimizer", ""});
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
  if (s.bf16_layers_at_start >= 0 || s.bf16_layers_at_end >= 0) {
    a.insert(a.end(), {{"--first-last-layers-bf16", ""},
                       {"--num-layers-at-start-in-bf16", Int(std::max(s.bf16_layers_at_start, 0))},
                       {"--num-layers-at-end-in-bf16", Int(std::max(s.bf16_layers_at_end, 0))}});
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
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start && text.substr(start, i - start) != "\\") tokens.emplace_back(text.substr(start, i - start));
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

const std::vector<std::string> kMegatronFlags = {
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
    "--virtual-pipeline-model-parallel-size", "--context-parallel-size", "--expert-model-parallel-size",
    "--micro-batch-size", "--global-batch-size", "--sequence-parallel", "--recompute-granularity",
    "--recompute-method", "--recompute-num-layers", "--use-distributed-optimizer", "--overlap-grad-reduce",
    "--overlap-param-gather", "--grad-reduce-in-bf16", "--no-overlap-p2p-communication", "--tp-comm-overlap",
    "--bf16", "--fp8-format", "--fp8-recipe", "--fp4-format", "--fp4-recipe", "--fp8-param-gather",
    "--fp4-param-gather", "--first-last-layers-bf16", "--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16",
    "--use-flash-attn", "--microbatch-group-size-per-virtual-pipeline-stage", "--expert-tensor-parallel-size"};

const std::vector<std::string> kBareMegatronFlags = {
    "--sequence-parallel", "--use-distributed-optimizer", "--overlap-grad-reduce", "--overlap-param-gather",
    "--grad-reduce-in-bf16", "--no-overlap-p2p-communication", "--tp-comm-overlap", "--bf16", "--use-flash-attn",
    "--fp8-param-gather", "--fp4-param-gather", "--first-last-layers-bf16"};

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

Strategy ReadMegatron(const Reader& r, const ModelSpec& m) {
  CheckKeys(r, kMegatronFlags, "--micro-batch-size", "--global-batch-size");
  for (const std::string& flag : kBareMegatronFlags) {
    if (r.Has(flag)) r.Bare(flag);
  }
  Strategy s;
  auto degree = [&](const char* flag) { return r.Has(flag) ? int(r.Int(flag, 1, kMaxModelGpus)) : 1; };
  s.tp = degree("--tensor-model-parallel-size");
  s.pp = degree("--pipeline-model-parallel-size");
  s.cp = degree("--context-parallel-size");
  s.ep = degree("--expert-model-parallel-size");
  if (r.Has("--expert-tensor-parallel-size")) s.etp = degree("--expert-tensor-parallel-size");
  s.vp = degree("--virtual-pipeline-model-parallel-size");
  if (r.Has("--num-layers-per-virtual-pipeline-stage")) {
    const char* flag = "--num-layers-per-virtual-pipeline-stage";
    const int64_t per_stage = r.Int(flag, 1, m.num_layers);
    if (r.Has("--virtual-pipeline-model-parallel-size")) throw Error(flag, "give it or --virtual-pipeline-model-parallel-size, not both");
    if (m.num_layers % (per_stage * s.pp) != 0) {
      throw Error(flag, fmt::format("expected a divisor of the {} layers / pipeline stages {}, got {}",
                                    m.num_layers, s.pp, per_stage));
    }
    s.vp = int(m.num_layers / (per_stage * s.pp));
  }
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
  s.dp_sharding = r.Has("--use-distributed-optimizer") ? DpSharding::kOptimizer : DpSharding::kNone;
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

std::string LauncherArgs(Launcher launcher, const Strategy& s, const ModelSpec& model) {
  if (launcher == Launcher::kNemo &&
      (s.precision == Precision::kMxfp8 || s.precision == Precision::kFp4 || s.low_precision_params ||
       s.bf16_layers_at_start >= 0 || s.bf16_layers_at_end >= 0)) {
    throw Error("--format", fmt::format("nemo-overrides write bf16 and fp8 strategies only (the megatron_gpt_config.yaml "
                                        "keys); for {} use --format megatron-args", PrecisionName(s.precision)));
  }
  if (launcher == Launcher::kNemo && s.expert_tp() != s.tp) {
    throw Error("--format", "nemo-overrides write the experts' tensor parallelism as tp only; for another "
                            "--expert-tensor-parallel-size use --format megatron-args");
  }
  const Args args = launcher == Launcher::kNemo ? NemoArgs(s) : MegatronArgs(s, model);
  std::string out;
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
  try {
    ValidateStrategy(model, gpus, s);
  } catch (const Error& e) {
    throw Renamed(e, launcher);
  }
  return s;
}

}  // namespace railsim::spec
