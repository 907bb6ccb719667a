#include "railsim/spec/model.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

// Bounds that no real model approaches but that keep every product in the
// FLOP and memory formulas (e.g. seq^2 * hidden * layers) finite in doubles
// and the per-layer integer arithmetic inside 64 bits.
constexpr int64_t kMaxLayers = kMaxModelLayers;
constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxVocab = 1 << 26;
constexpr int64_t kMaxSeq = kMaxSeqLength;
constexpr int64_t kMaxExperts = 1 << 16;

// moe_layer_freq: an integer k >= 1 (every k-th layer, from the first, as
// Megatron's "(i % k == 0)") or a list of num_layers 0/1 entries.
std::vector<uint8_t> ParseMoeLayerFreq(const nlohmann::json& doc, JsonReader& r, int num_layers) {
  std::vector<uint8_t> layers(static_cast<size_t>(num_layers), 1);
  if (!r.Has("moe_layer_freq")) return layers;
  const nlohmann::json& v = doc["moe_layer_freq"];
  if (v.is_array()) {
    r.Skip("moe_layer_freq");
    if (v.size() != static_cast<size_t>(num_layers)) {
      throw Error("/moe_layer_freq", fmt::format("expected a list of num_layers {} entries of 0 or 1, got {}",
                                                 num_layers, v.size()));
    }
    int moe = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || (v[i].get<int64_t>() != 0 && v[i].get<int64_t>() != 1)) {
        throw Error(fmt::format("/moe_layer_freq/{}", i), fmt::format("expected 0 or 1, got {}", Describe(v[i])));
      }
      layers[i] = static_cast<uint8_t>(v[i].get<int64_t>());
      moe += layers[i];
    }
    if (moe == 0) throw Error("/moe_layer_freq", "expected at least one MoE layer (a 1) in an MoE model");
    return layers;
  }
  const int64_t k = r.Int("moe_layer_freq", 1, num_layers);
  for (int i = 0; i < num_layers; ++i) layers[size_t(i)] = i % k == 0 ? 1 : 0;
  return layers;
}

// window_attn_skip_freq: an integer k >= 1 (every k-th layer, counting from
// 1, attends to the whole prefix, as Megatron-Core's is_layer_window_attention
// "layer_number % k != 0" is windowed) or a list of num_layers 0/1 entries, 1
// for a windowed layer. Absent: every layer windowed.
std::vector<uint8_t> ParseWindowLayers(const nlohmann::json& doc, JsonReader& r, int num_layers) {
  std::vector<uint8_t> layers(static_cast<size_t>(num_layers), 1);
  if (!r.Has("window_attn_skip_freq")) return layers;
  const nlohmann::json& v = doc["window_attn_skip_freq"];
  if (v.is_array()) {
    r.Skip("window_attn_skip_freq");
    if (v.size() != static_cast<size_t>(num_layers)) {
      throw Error("/window_attn_skip_freq",
                  fmt::format("expected a list of num_layers {} entries of 0 or 1, got {}", num_layers, v.size()));
    }
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_number_integer() || (v[i].get<int64_t>() != 0 && v[i].get<int64_t>() != 1)) {
        throw Error(fmt::format("/window_attn_skip_freq/{}", i),
                    fmt::format("expected 0 (full attention) or 1 (sliding window), got {}", Describe(v[i])));
      }
      layers[i] = static_cast<uint8_t>(v[i].get<int64_t>());
    }
    return layers;
  }
  const int64_t k = r.Int("window_attn_skip_freq", 1, num_layers);
  for (int i = 0; i < num_layers; ++i) layers[size_t(i)] = (i + 1) % k != 0 ? 1 : 0;
  return layers;
}

// The smallest k whose pattern is `layers` (k = num_layers + 1 stands for
// "every layer"), or 0 when no integer describes it.
int SkipFreqOf(const std::vector<uint8_t>& layers) {
  const int n = static_cast<int>(layers.size());
  for (int k = 1; k <= n + 1; ++k) {
    bool same = true;
    for (int i = 0; i < n && same; ++i) same = layers[size_t(i)] == ((i + 1) % k != 0 ? 1 : 0);
    if (same) return k;
  }
  return 0;
}

}  // namespace

void SetSeqLength(ModelSpec* m, int64_t seq_length, const std::string& where) {
  if (seq_length < 1 || seq_length > kMaxSeq) {
    throw Error(where, fmt::format("expected an integer in [1, {}], got {}", kMaxSeq, seq_length));
  }
  m->seq_length = static_cast<int>(seq_length);
  m->seq_length_key.clear();
}

ModelSpec ParseModelJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  ModelSpec m;
  m.name = r.Name("name");
  m.description = r.StringOr("description", "");
  m.num_layers = static_cast<int>(r.Int("num_layers", 1, kMaxLayers));
  m.hidden_size = static_cast<int>(r.Int("hidden_size", 1, kMaxHidden));
  m.num_attention_heads = static_cast<int>(r.Int("num_attention_heads", 1, kMaxHeads));
  if (r.Has("kv_channels")) {
    m.head_dim = static_cast<int>(r.Int("kv_channels", 1, kMaxHidden));
  } else if (m.hidden_size % m.num_attention_heads != 0) {
    throw Error("/num_attention_heads",
                fmt::format("expected a divisor of hidden_size {}, got {}", m.hidden_size,
                            m.num_attention_heads));
  } else {
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }
  m.num_query_groups =
      static_cast<int>(r.IntOr("num_query_groups", m.num_attention_heads, 1, kMaxHeads));
  if (m.num_attention_heads % m.num_query_groups != 0) {
    throw Error("/num_query_groups",
                fmt::format("expected a divisor of num_attention_heads {}, got {}",
                            m.num_attention_heads, m.num_query_groups));
  }
  m.ffn_hidden_size =
      static_cast<int>(r.IntOr("ffn_hidden_size", 4LL * m.hidden_size, 1, 16 * kMaxHidden));
  m.swiglu = r.BoolOr("swiglu", false);
  m.vocab_size = static_cast<int>(r.Int("vocab_size", 1, kMaxVocab));
  m.seq_length = static_cast<int>(r.Int("seq_length", 1, kMaxSeq));
  m.num_experts = static_cast<int>(r.IntOr("num_experts", 0, 0, kMaxExperts));
  if (m.num_experts == 1) {
    throw Error("/num_experts", "expected 0 (dense) or at least 2 experts, got 1");
  }
  m.moe_router_topk =
      static_cast<int>(r.IntOr("moe_router_topk", m.num_experts > 0 ? 2 : 0, 0, kMaxExperts));
  if (m.num_experts > 0 && (m.moe_router_topk < 1 || m.moe_router_topk > m.num_experts)) {
    throw Error("/moe_router_topk", fmt::format("expected an integer in [1, num_experts {}], got {}",
                                                m.num_experts, m.moe_router_topk));
  }
  if (m.num_experts == 0 && m.moe_router_topk != 0) {
    throw Error("/moe_router_topk", "expected no top-k for a dense model (num_experts is 0)");
  }
  for (const char* key : {"moe_ffn_hidden_size", "moe_shared_expert_intermediate_size", "moe_layer_freq"}) {
    if (m.num_experts == 0 && r.Has(key)) {
      throw Error(r.PointerTo(key), "expected no MoE settings for a dense model (num_experts is 0)");
    }
  }
  if (m.is_moe()) {
    m.moe_ffn_hidden_size =
        static_cast<int>(r.IntOr("moe_ffn_hidden_size", m.ffn_hidden_size, 1, 16 * kMaxHidden));
    m.moe_shared_expert_intermediate_size =
        static_cast<int>(r.IntOr("moe_shared_expert_intermediate_size", 0, 0, 16 * kMaxHidden));
    m.moe_layers = ParseMoeLayerFreq(doc, r, m.num_layers);
  }
  m.multi_latent_attention = r.BoolOr("multi_latent_attention", false);
  for (const char* key : {"q_lora_rank", "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim"}) {
    if (!m.multi_latent_attention && r.Has(key)) {
      throw Error(r.PointerTo(key), "expected multi_latent_attention: true with latent-attention sizes");
    }
  }
  if (m.multi_latent_attention) {
    m.mla.q_lora_rank = static_cast<int>(r.IntOr("q_lora_rank", 0, 0, kMaxHidden));
    m.mla.kv_lora_rank = static_cast<int>(r.Int("kv_lora_rank", 1, kMaxHidden));
    m.mla.qk_head_dim = static_cast<int>(r.Int("qk_head_dim", 1, kMaxHidden));
    m.mla.qk_pos_emb_head_dim = static_cast<int>(r.IntOr("qk_pos_emb_head_dim", 0, 0, kMaxHidden));
    m.mla.v_head_dim = static_cast<int>(r.Int("v_head_dim", 1, kMaxHidden));
    if (m.num_query_groups != m.num_attention_heads) {
      throw Error("/num_query_groups", "expected num_query_groups == num_attention_heads with multi-latent "
                                       "attention (every head has its own key and value)");
    }
  }
  m.qk_layernorm = r.BoolOr("qk_layernorm", false);
  if (r.Has("window_size")) {
    m.window_size = static_cast<int>(r.Int("window_size", 1, kMaxSeq));
    m.window_layers = ParseWindowLayers(doc, r, m.num_layers);
  } else if (r.Has("window_attn_skip_freq")) {
    throw Error("/window_attn_skip_freq", "expected window_size with a sliding-window layer pattern");
  }
  // What a file that leaves these out silently becomes: GPT-2 (dropout
  // masks, a learned position table, LayerNorm, biases, a tied output layer).
  for (const char* key : {"swiglu", "position_embedding_type", "normalization", "add_bias_linear",
                          "untie_embeddings_and_output_weights", "hidden_dropout", "attention_dropout"}) {
    if (!r.Has(key)) m.defaulted.push_back(key);
  }
  std::string pos = r.EnumOr("position_embedding_type", {"learned_absolute", "rope"},
                             "learned_absolute");
  m.position_embedding_type =
      pos == "rope" ? PositionEmbedding::kRope : PositionEmbedding::kLearnedAbsolute;
  std::string norm = r.EnumOr("normalization", {"LayerNorm", "RMSNorm"}, "LayerNorm");
  m.normalization = norm == "RMSNorm" ? Normalization::kRmsNorm : Normalization::kLayerNorm;
  m.add_bias_linear = r.BoolOr("add_bias_linear", true);
  m.untie_embeddings_and_output_weights = r.BoolOr("untie_embeddings_and_output_weights", false);
  m.hidden_dropout = r.NumberOr("hidden_dropout", 0.1, 0.0, 1.0);
  m.attention_dropout = r.NumberOr("attention_dropout", 0.1, 0.0, 1.0);
  r.Finish();
  for (std::string& key : m.defaulted) {
    if (key == "swiglu") key += fmt::format(" {}", m.swiglu);
    if (key == "position_embedding_type") key += " learned_absolute";
    if (key == "normalization") key += " LayerNorm";
    if (key == "add_bias_linear") key += fmt::format(" {}", m.add_bias_linear);
    if (key == "untie_embeddings_and_output_weights") key += fmt::format(" {}", m.untie_embeddings_and_output_weights);
    if (key == "hidden_dropout") key += fmt::format(" {:g}", m.hidden_dropout);
    if (key == "attention_dropout") key += fmt::format(" {:g}", m.attention_dropout);
  }
  return m;
}

std::string ModelToJson(const ModelSpec& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  j["description"] = m.description;
  j["num_layers"] = m.num_layers;
  j["hidden_size"] = m.hidden_size;
  j["num_attention_heads"] = m.num_attention_heads;
  j["num_query_groups"] = m.num_query_groups;
  if (m.head_dim * m.num_attention_heads != m.hidden_size) j["kv_channels"] = m.head_dim;
  j["ffn_hidden_size"] = m.ffn_hidden_size;
  j["swiglu"] = m.swiglu;
  j["vocab_size"] = m.vocab_size;
  j["seq_length"] = m.seq_length;
  if (m.is_moe()) {
    j["num_experts"] = m.num_experts;
    j["moe_router_topk"] = m.moe_router_topk;
    j["moe_ffn_hidden_size"] = m.moe_ffn_hidden_size;
    if (m.moe_shared_expert_intermediate_size > 0) {
      j["moe_shared_expert_intermediate_size"] = m.moe_shared_expert_intermediate_size;
    }
    if (m.moe_layer_count() != m.num_layers) j["moe_layer_freq"] = m.moe_layers;
  }
  if (m.multi_latent_attention) {
    j["multi_latent_attention"] = true;
    j["q_lora_rank"] = m.mla.q_lora_rank;
    j["kv_lora_rank"] = m.mla.kv_lora_rank;
    j["qk_head_dim"] = m.mla.qk_head_dim;
    j["qk_pos_emb_head_dim"] = m.mla.qk_pos_emb_head_dim;
    j["v_head_dim"] = m.mla.v_head_dim;
  }
  if (m.qk_layernorm) j["qk_layernorm"] = true;
  if (m.window_size > 0) {
    j["window_size"] = m.window_size;
    const int k = SkipFreqOf(m.window_layers);
    if (k == 0) j["window_attn_skip_freq"] = m.window_layers;
    else if (k <= m.num_layers) j["window_attn_skip_freq"] = k;
  }
  j["position_embedding_type"] =
      m.position_embedding_type == PositionEmbedding::kRope ? "rope" : "learned_absolute";
  j["normalization"] = m.normalization == Normalization::kRmsNorm ? "RMSNorm" : "LayerNorm";
  j["add_bias_linear"] = m.add_bias_linear;
  j["untie_embeddings_and_output_weights"] = m.untie_embeddings_and_output_weights;
  j["hidden_dropout"] = m.hidden_dropout;
  j["attention_dropout"] = m.attention_dropout;
  return j.dump(2) + "\n";
}

}  // namespace railsim::spec
