#include "railsim/spec/model.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

// Bounds that no real model approaches but that keep every product in the
// FLOP and memory formulas (e.g. seq^2 * hidden * layers) finite in doubles
// and the per-layer integer arithmetic inside 64 bits.
constexpr int64_t kMaxLayers = 100000;
constexpr int64_t kMaxHidden = 1 << 20;
constexpr int64_t kMaxHeads = 1 << 16;
constexpr int64_t kMaxVocab = 1 << 26;
constexpr int64_t kMaxSeq = 1 << 24;
constexpr int64_t kMaxExperts = 1 << 16;

}  // namespace

ModelSpec ParseModelJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  ModelSpec m;
  m.name = r.String("name");
  m.description = r.StringOr("description", "");
  m.num_layers = static_cast<int>(r.Int("num_layers", 1, kMaxLayers));
  m.hidden_size = static_cast<int>(r.Int("hidden_size", 1, kMaxHidden));
  m.num_attention_heads = static_cast<int>(r.Int("num_attention_heads", 1, kMaxHeads));
  if (m.hidden_size % m.num_attention_heads != 0) {
    throw Error("/num_attention_heads",
                fmt::format("expected a divisor of hidden_size {}, got {}", m.hidden_size,
                            m.num_attention_heads));
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
  j["ffn_hidden_size"] = m.ffn_hidden_size;
  j["swiglu"] = m.swiglu;
  j["vocab_size"] = m.vocab_size;
  j["seq_length"] = m.seq_length;
  if (m.is_moe()) {
    j["num_experts"] = m.num_experts;
    j["moe_router_topk"] = m.moe_router_topk;
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
