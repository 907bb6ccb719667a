#include "railsim/spec/hf_config.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

// How a family lays out its MLPs: dense, Mixtral (every layer MoE, experts
// of intermediate_size), Qwen-MoE (moe_intermediate_size experts every
// decoder_sparse_step layers but mlp_only_layers, an optional shared expert)
// or DeepSeek (dense first_k_dense_replace layers, then MoE every
// moe_layer_freq; n_shared_experts of moe_intermediate_size; latent attention).
enum class Kind { kDense, kMixtral, kQwenMoe, kDeepSeek };

// Which layers a sliding_window applies to, by the family's rule in
// transformers' configuration_<family>.py: none (Llama, Gemma 1, DeepSeek:
// no sliding window); every layer (Mistral, Mixtral); Qwen2/3's
// use_sliding_window with the layers from max_window_layers on; or a
// period, layer i full when (i + 1) % period == 0 (Gemma 2: 2; Gemma 3:
// sliding_window_pattern, 6 by default; gpt_oss: 2). An explicit
// layer_types list overrides all but the first two.
enum class Windows { kNone, kAll, kQwen, kPeriod };

struct Family {
  std::string_view model_type;
  Kind kind;
  bool tied_by_default;  ///< transformers' default for tie_word_embeddings
  bool qk_norm;          ///< RMSNorm on q and k per head (Qwen3)
  bool qkv_bias;         ///< biases on q, k and v only (Qwen2), which railsim does not count
  bool expert_bias;      ///< MLP biases with no mlp_bias key (gpt_oss's experts)
  Windows windows;
  int64_t default_window;  ///< transformers' sliding_window when the key is absent (0: none)
  int64_t default_period;  ///< kPeriod's period when the config names none
};

constexpr Family kFamilies[] = {
    {"llama", Kind::kDense, false, false, false, false, Windows::kNone, 0, 0},
    {"mistral", Kind::kDense, false, false, false, false, Windows::kAll, 4096, 0},
    {"qwen2", Kind::kDense, false, false, true, false, Windows::kQwen, 4096, 0},
    {"qwen3", Kind::kDense, false, true, false, false, Windows::kQwen, 4096, 0},
    {"gemma", Kind::kDense, true, false, false, false, Windows::kNone, 0, 0},
    {"gemma2", Kind::kDense, true, false, false, false, Windows::kPeriod, 4096, 2},
    {"gemma3_text", Kind::kDense, true, true, false, false, Windows::kPeriod, 4096, 6},
    {"mixtral", Kind::kMixtral, false, false, false, false, Windows::kAll, 0, 0},
    {"qwen2_moe", Kind::kQwenMoe, false, false, true, false, Windows::kQwen, 4096, 0},
    {"qwen3_moe", Kind::kQwenMoe, false, true, false, false, Windows::kQwen, 4096, 0},
    {"deepseek_v2", Kind::kDeepSeek, false, false, false, false, Windows::kNone, 0, 0},
    {"deepseek_v3", Kind::kDeepSeek, false, false, false, false, Windows::kNone, 0, 0},
    {"gpt_oss", Kind::kMixtral, false, false, false, true, Windows::kPeriod, 128, 2},
};

// Qwen2's default for max_window_layers (configuration_qwen2.py).
constexpr int64_t kQwenMaxWindowLayers = 28;

// Integers a config may hold before railsim's own model checks narrow them.
constexpr int64_t kMaxHfInt = INT32_MAX;

std::vector<std::string> RequiredKeys(Kind kind) {
  std::vector<std::string> keys = {"num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads",
                                   "vocab_size", "max_position_embeddings"};
  switch (kind) {
    case Kind::kDense: break;
    case Kind::kMixtral: keys.insert(keys.end(), {"num_local_experts", "num_experts_per_tok"}); break;
    case Kind::kQwenMoe:
      keys.insert(keys.end(), {"num_experts", "num_experts_per_tok", "moe_intermediate_size"});
      break;
    case Kind::kDeepSeek:
      keys.insert(keys.end(), {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "kv_lora_rank",
                               "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
      break;
  }
  return keys;
}

// HF writes null for "not set": a null key counts as absent.
bool Present(const nlohmann::json& cfg, const std::string& key) {
  return cfg.contains(key) && !cfg[key].is_null();
}

std::vector<std::string> MissingKeys(const nlohmann::json& cfg, Kind kind) {
  std::vector<std::string> missing;
  for (const std::string& key : RequiredKeys(kind)) {
    if (!Present(cfg, key)) missing.push_back(key);
  }
  return missing;
}

std::string FirstArchitecture(const nlohmann::json& cfg) {
  if (!cfg.contains("architectures") || !cfg["architectures"].is_array() || cfg["architectures"].empty() ||
      !cfg["architectures"][0].is_string()) {
    return "";
  }
  return cfg["architectures"][0].get<std::string>();
}

[[noreturn]] void RefuseArchitecture(const nlohmann::json& cfg, const std::string& root,
                                     const std::string& model_type, const std::string& arch) {
  std::vector<std::string> known;
  for (const Family& f : kFamilies) known.emplace_back(f.model_type);
  std::vector<std::string> missing = MissingKeys(cfg, Kind::kDense);
  std::string lacks = missing.empty() ? "it has the dense keys railsim reads, but its layers may differ; write a "
                                        "railsim model file (railsim presets show llama3.1-8b)"
                                      : fmt::format("it lacks {}", fmt::join(missing, ", "));
  std::string named = model_type.empty() ? "no model_type" : fmt::format("unknown architecture {}", Quoted(model_type));
  if (!arch.empty()) named += fmt::format(" ({})", Quoted(arch));
  throw Error(root + "/model_type", fmt::format("{}{}; expected one of {}; {}", named, DidYouMean(model_type, known),
                                                fmt::join(known, ", "), lacks));
}

// Which layers are MoE, by the family's rule (transformers' modeling code).
std::vector<int> MoeLayers(const nlohmann::json& cfg, JsonReader& r, Kind kind, int64_t layers,
                           std::string* source_key) {
  std::vector<int> moe(size_t(layers), 1);
  if (kind == Kind::kQwenMoe) {
    *source_key = "decoder_sparse_step";
    const int64_t step = Present(cfg, "decoder_sparse_step") ? r.Int("decoder_sparse_step", 1, layers) : 1;
    for (int64_t i = 0; i < layers; ++i) moe[size_t(i)] = (i + 1) % step == 0 ? 1 : 0;
    if (Present(cfg, "mlp_only_layers")) {
      *source_key = "mlp_only_layers";
      const nlohmann::json& only = r.Array("mlp_only_layers");
      for (size_t j = 0; j < only.size(); ++j) {
        if (!only[j].is_number_integer() || only[j].get<int64_t>() < 0 || only[j].get<int64_t>() >= layers) {
          throw Error(fmt::format("{}/{}", r.PointerTo("mlp_only_layers"), j),
                      fmt::format("expected a layer index in [0, {}], got {}", layers - 1, Describe(only[j])));
        }
        moe[size_t(only[j].get<int64_t>())] = 0;
      }
    }
  } else if (kind == Kind::kDeepSeek) {
    *source_key = "first_k_dense_replace";
    const int64_t dense = Present(cfg, "first_k_dense_replace") ? r.Int("first_k_dense_replace", 0, layers) : 0;
    const int64_t freq = Present(cfg, "moe_layer_freq") ? r.Int("moe_layer_freq", 1, layers) : 1;
    for (int64_t i = 0; i < layers; ++i) moe[size_t(i)] = i >= dense && i % freq == 0 ? 1 : 0;
  }
  return moe;
}

// The attention and MoE keys of one family, written into `j` with the HF key
// each railsim key came from in `hf_key_of` (so errors name the HF key).
void TranslateMoe(const nlohmann::json& cfg, JsonReader& r, const Family& family, int64_t layers,
                  nlohmann::ordered_json& j, std::map<std::string, std::string>& hf_key_of,
                  std::vector<std::string>& notes) {
  const char* experts_key = family.kind == Kind::kMixtral  ? "num_local_experts"
                            : family.kind == Kind::kQwenMoe ? "num_experts"
                                                           : "n_routed_experts";
  const int64_t experts = r.Int(experts_key, 0, kMaxHfInt);
  j["num_experts"] = experts;
  hf_key_of["num_experts"] = experts_key;
  j["moe_router_topk"] = r.Int("num_experts_per_tok", 0, kMaxHfInt);
  hf_key_of["moe_router_topk"] = "num_experts_per_tok";
  const char* width_key = family.kind == Kind::kMixtral ? "intermediate_size" : "moe_intermediate_size";
  const int64_t width = r.Int(width_key, 0, kMaxHfInt);
  j["moe_ffn_hidden_size"] = width;
  hf_key_of["moe_ffn_hidden_size"] = width_key;
  if (family.kind == Kind::kQwenMoe && Present(cfg, "shared_expert_intermediate_size")) {
    const int64_t shared = r.Int("shared_expert_intermediate_size", 0, kMaxHfInt);
    if (shared > 0) j["moe_shared_expert_intermediate_size"] = shared;
    hf_key_of["moe_shared_expert_intermediate_size"] = "shared_expert_intermediate_size";
    notes.push_back("the shared expert's gate (hidden_size weights per layer) is not counted");
  }
  if (family.kind == Kind::kDeepSeek && Present(cfg, "n_shared_experts")) {
    const int64_t shared = r.Int("n_shared_experts", 0, 1024);
    if (shared > 0) j["moe_shared_expert_intermediate_size"] = shared * width;
    hf_key_of["moe_shared_expert_intermediate_size"] = "n_shared_experts";
  }
  std::string layers_key;
  std::vector<int> moe = MoeLayers(cfg, r, family.kind, layers, &layers_key);
  if (std::count(moe.begin(), moe.end(), 1) != layers) j["moe_layer_freq"] = moe;
  hf_key_of["moe_layer_freq"] = layers_key;
  if (Present(cfg, "n_group") || Present(cfg, "topk_group")) {
    const int64_t groups = r.Int("n_group", 1, kMaxHfInt);
    const int64_t topk_groups = r.Int("topk_group", 1, groups);
    if (experts % groups != 0) {
      throw Error(r.PointerTo("n_group"),
                  fmt::format("expected a divisor of the {} experts ({}), got {}", experts, experts_key, groups));
    }
    notes.push_back(fmt::format("routing limited to {} of {} expert groups (--moe-max-domains models it)",
                                topk_groups, groups));
  }
  if (Present(cfg, "num_nextn_predict_layers") && r.Int("num_nextn_predict_layers", 0, 1024) > 0) {
    notes.push_back("multi-token-prediction layers not counted");
  }
}

void TranslateLatentAttention(const nlohmann::json& cfg, JsonReader& r, nlohmann::ordered_json& j,
                              std::map<std::string, std::string>& hf_key_of) {
  j["multi_latent_attention"] = true;
  j["q_lora_rank"] = Present(cfg, "q_lora_rank") ? r.Int("q_lora_rank", 0, kMaxHfInt) : 0;
  j["kv_lora_rank"] = r.Int("kv_lora_rank", 1, kMaxHfInt);
  j["qk_head_dim"] = r.Int("qk_nope_head_dim", 1, kMaxHfInt);
  j["qk_pos_emb_head_dim"] = r.Int("qk_rope_head_dim", 0, kMaxHfInt);
  j["v_head_dim"] = r.Int("v_head_dim", 1, kMaxHfInt);
  hf_key_of["qk_head_dim"] = "qk_nope_head_dim";
  hf_key_of["qk_pos_emb_head_dim"] = "qk_rope_head_dim";
  // Every head has its own latent key and value.
  j["num_query_groups"] = j["num_attention_heads"];
}

// layer_types: one "sliding_attention" or "full_attention" per layer, as
// 1 or 0.
std::vector<int> LayerTypes(JsonReader& r, int64_t layers) {
  const nlohmann::json& types = r.Array("layer_types");
  if (types.size() != size_t(layers)) {
    throw Error(r.PointerTo("layer_types"), fmt::format("expected a list of num_hidden_layers {} entries, got {}",
                                                        layers, types.size()));
  }
  std::vector<int> windowed(static_cast<size_t>(layers));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != "sliding_attention" && types[i] != "full_attention") {
      throw Error(fmt::format("{}/{}", r.PointerTo("layer_types"), i),
                  fmt::format("expected \"sliding_attention\" or \"full_attention\", got {}", Describe(types[i])));
    }
    windowed[i] = types[i] == "sliding_attention" ? 1 : 0;
  }
  return windowed;
}

// The sliding window and the layers it applies to, by the family's rule
// (Windows), written into `j` as window_size and window_attn_skip_freq.
void TranslateWindows(const nlohmann::json& cfg, JsonReader& r, const Family& family, int64_t layers,
                      nlohmann::ordered_json& j, std::map<std::string, std::string>& hf_key_of) {
  if (family.windows == Windows::kNone) return;
  std::string pattern_key = "sliding_window";
  std::vector<int> windowed(size_t(layers), 1);
  const bool listed = family.windows != Windows::kAll && Present(cfg, "layer_types");
  if (listed) {
    windowed = LayerTypes(r, layers);
    pattern_key = "layer_types";
  }
  // HF writes null for "no window"; an absent key takes transformers' default.
  int64_t window = cfg.contains("sliding_window") ? 0 : family.default_window;
  if (family.windows == Windows::kQwen) {
    // transformers drops sliding_window unless use_sliding_window is set.
    const bool used = Present(cfg, "use_sliding_window") && r.BoolOr("use_sliding_window", false);
    if (!used) window = 0;
    if (used && Present(cfg, "sliding_window")) window = r.Int("sliding_window", 1, kMaxHfInt);
    const int64_t full = Present(cfg, "max_window_layers") ? r.Int("max_window_layers", 0, kMaxHfInt)
                                                           : kQwenMaxWindowLayers;
    if (!listed) {
      pattern_key = "max_window_layers";
      for (int64_t i = 0; i < layers; ++i) windowed[size_t(i)] = i >= full ? 1 : 0;
    }
  } else {
    if (Present(cfg, "sliding_window")) window = r.Int("sliding_window", 1, kMaxHfInt);
    if (family.windows == Windows::kPeriod && !listed) {
      int64_t period = family.default_period;
      for (const char* key : {"sliding_window_pattern", "_sliding_window_pattern"}) {
        if (Present(cfg, key)) {
          period = r.Int(key, 1, kMaxHfInt);
          pattern_key = key;
          break;
        }
      }
      for (int64_t i = 0; i < layers; ++i) windowed[size_t(i)] = (i + 1) % period != 0 ? 1 : 0;
    }
  }
  const auto count = std::count(windowed.begin(), windowed.end(), 1);
  if (window == 0 || count == 0) return;
  j["window_size"] = window;
  if (count != layers) j["window_attn_skip_freq"] = windowed;
  hf_key_of["window_size"] = "sliding_window";
  hf_key_of["window_attn_skip_freq"] = pattern_key;
}

// The training length: the pre-extension context when rope_scaling says so.
int64_t SeqLength(const nlohmann::json& cfg, JsonReader& r, std::string* key) {
  *key = "max_position_embeddings";
  int64_t seq = r.Int("max_position_embeddings", 1, kMaxHfInt);
  if (Present(cfg, "rope_theta")) r.Number("rope_theta", 1e-9, 1e300);
  if (!Present(cfg, "rope_scaling")) return seq;
  JsonReader scaling = r.Object("rope_scaling");
  if (!Present(cfg["rope_scaling"], "original_max_position_embeddings")) return seq;
  *key = "rope_scaling/original_max_position_embeddings";
  return scaling.Int("original_max_position_embeddings", 1, kMaxHfInt);
}

// Reads the keys into railsim's model JSON; `hf_key_of` maps each railsim
// key to its HF key where the two differ.
nlohmann::ordered_json Translate(const nlohmann::json& cfg, JsonReader& r, const Family& family,
                                 const std::string& name, std::map<std::string, std::string>& hf_key_of) {
  nlohmann::ordered_json j;
  std::vector<std::string> notes;
  j["name"] = name;
  const int64_t layers = r.Int("num_hidden_layers", 1, kMaxModelLayers);
  j["num_layers"] = layers;
  j["hidden_size"] = r.Int("hidden_size", 1, kMaxHfInt);
  j["num_attention_heads"] = r.Int("num_attention_heads", 1, kMaxHfInt);
  j["num_query_groups"] = Present(cfg, "num_key_value_heads") ? r.Int("num_key_value_heads", 1, kMaxHfInt)
                                                               : j["num_attention_heads"].get<int64_t>();
  if (Present(cfg, "head_dim")) j["kv_channels"] = r.Int("head_dim", 1, kMaxHfInt);
  j["ffn_hidden_size"] = r.Int("intermediate_size", 1, kMaxHfInt);
  j["swiglu"] = true;  // every family read here gates its MLP (SwiGLU or GeGLU): three matrices
  j["vocab_size"] = r.Int("vocab_size", 1, kMaxHfInt);
  std::string seq_key;
  j["seq_length"] = SeqLength(cfg, r, &seq_key);
  hf_key_of = {{"num_layers", "num_hidden_layers"},     {"num_query_groups", "num_key_value_heads"},
               {"kv_channels", "head_dim"},             {"ffn_hidden_size", "intermediate_size"},
               {"seq_length", seq_key},                 {"untie_embeddings_and_output_weights", "tie_word_embeddings"}};
  if (family.kind != Kind::kDense) TranslateMoe(cfg, r, family, layers, j, hf_key_of, notes);
  if (family.kind == Kind::kDeepSeek) TranslateLatentAttention(cfg, r, j, hf_key_of);
  if (family.qk_norm) j["qk_layernorm"] = true;
  TranslateWindows(cfg, r, family, layers, j, hf_key_of);
  j["position_embedding_type"] = "rope";
  j["normalization"] = "RMSNorm";
  const bool attention_bias = Present(cfg, "attention_bias") && r.BoolOr("attention_bias", false);
  const bool mlp_bias = family.expert_bias || (Present(cfg, "mlp_bias") && r.BoolOr("mlp_bias", false));
  j["add_bias_linear"] = attention_bias && mlp_bias;
  if (attention_bias != mlp_bias) notes.push_back("the biases of only attention or only the MLP are not counted");
  if (family.qkv_bias) notes.push_back("the q/k/v projection biases are not counted");
  if (family.model_type == "gpt_oss") {
    notes.push_back("the attention sinks (a learned logit per head and layer) and the router's bias are not "
                    "counted");
  }
  if (family.model_type == "gemma2" || family.model_type == "gemma3_text") {
    notes.push_back("the post-attention and post-MLP norms (2 x hidden_size per layer) are not counted");
  }
  const bool tied = Present(cfg, "tie_word_embeddings") ? r.BoolOr("tie_word_embeddings", false)
                                                        : family.tied_by_default;
  j["untie_embeddings_and_output_weights"] = !tied;
  j["hidden_dropout"] = 0.0;
  j["attention_dropout"] = Present(cfg, "attention_dropout") ? r.Number("attention_dropout", 0, 1) : 0.0;
  std::string arch = FirstArchitecture(cfg);
  j["description"] = fmt::format("{} from a Hugging Face config.json ({}); seq_length from {} (--seq-length sets "
                                 "the training length){}{}",
                                 arch.empty() ? std::string(family.model_type) : arch, family.model_type, seq_key,
                                 notes.empty() ? "" : "; ", fmt::join(notes, "; "));
  return j;
}

// "/num_query_groups: ..." from ParseModelJson becomes "/num_key_value_heads: ...".
Error RenameField(const Error& e, const std::string& root, const std::map<std::string, std::string>& hf_key_of) {
  if (!e.where().starts_with('/')) return Error(root + e.where(), e.message());
  std::string key = e.where().substr(1, e.where().find('/', 1) - 1);
  auto it = hf_key_of.find(key);
  return Error(root + "/" + (it == hf_key_of.end() ? key : it->second), e.message());
}

}  // namespace

bool LooksLikeHfConfig(std::string_view text) {
  nlohmann::json doc;
  try {
    doc = ParseJsonText(text);
  } catch (const Error&) {
    return false;
  }
  if (!doc.is_object() || doc.contains("num_layers")) return false;
  for (const char* key : {"model_type", "architectures", "num_hidden_layers", "text_config"}) {
    if (doc.contains(key)) return true;
  }
  return false;
}

ModelSpec ParseHfConfigJson(std::string_view text, const std::string& fallback_name) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader outer(doc, "");
  std::string root;
  if (Present(doc, "text_config")) {
    outer.Object("text_config");  // checks it is an object
    root = "/text_config";
  }
  const nlohmann::json& cfg = root.empty() ? doc : doc["text_config"];
  JsonReader r(cfg, root);
  std::string model_type = Present(cfg, "model_type")   ? r.String("model_type")
                           : Present(doc, "model_type") ? outer.String("model_type")
                                                        : "";
  std::string arch = FirstArchitecture(cfg).empty() ? FirstArchitecture(doc) : FirstArchitecture(cfg);
  const Family* family = nullptr;
  for (const Family& f : kFamilies) {
    if (f.model_type == model_type) family = &f;
  }
  if (!family) RefuseArchitecture(cfg, root, model_type, arch);
  std::vector<std::string> missing = MissingKeys(cfg, family->kind);
  if (!missing.empty()) {
    throw Error(r.PointerTo(missing.front()),
                fmt::format("required field is missing (a {} config needs {}; missing: {})", model_type,
                            fmt::join(RequiredKeys(family->kind), ", "), fmt::join(missing, ", ")));
  }
  std::string name = Present(doc, "_name_or_path") && doc["_name_or_path"].is_string() &&
                             !doc["_name_or_path"].get<std::string>().empty()
                         ? doc["_name_or_path"].get<std::string>()
                     : !fallback_name.empty() ? fallback_name
                                              : model_type;
  std::map<std::string, std::string> hf_key_of;
  nlohmann::ordered_json j = Translate(cfg, r, *family, name, hf_key_of);
  try {
    ModelSpec m = ParseModelJson(j.dump());
    m.seq_length_key = root.empty() ? hf_key_of["seq_length"] : root.substr(1) + "/" + hf_key_of["seq_length"];
    return m;
  } catch (const Error& e) {
    throw RenameField(e, root, hf_key_of);
  }
}

ModelSpec ParseAnyModelJson(std::string_view text, const std::string& fallback_name) {
  return LooksLikeHfConfig(text) ? ParseHfConfigJson(text, fallback_name) : ParseModelJson(text);
}

}  // namespace railsim::spec
