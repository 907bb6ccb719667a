// ModelSpec: a transformer LLM, described with Megatron-LM's argument names
// (num_layers, hidden_size, num_attention_heads, num_query_groups, ...), so a
// Megatron launch script translates into a model file key for key.
#pragma once

#include <string>
#include <string_view>

namespace railsim::spec {

enum class PositionEmbedding { kLearnedAbsolute, kRope };
enum class Normalization { kLayerNorm, kRmsNorm };

/// A decoder-only transformer. Valid once ParseModelJson() returned it:
/// heads divide hidden_size, query groups divide heads, top-k <= experts.
struct ModelSpec {
  std::string name;
  std::string description;
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;   ///< GQA groups; == heads for multi-head attention
  int ffn_hidden_size = 0;    ///< per expert for MoE models
  bool swiglu = false;        ///< gated MLP with three matrices
  int vocab_size = 0;         ///< unpadded; Megatron pads to 128 x TP
  int seq_length = 0;
  int num_experts = 0;        ///< 0 = dense model
  int moe_router_topk = 0;
  PositionEmbedding position_embedding_type = PositionEmbedding::kLearnedAbsolute;
  Normalization normalization = Normalization::kLayerNorm;
  bool add_bias_linear = true;
  bool untie_embeddings_and_output_weights = false;
  double hidden_dropout = 0.1;
  double attention_dropout = 0.1;

  int kv_channels() const { return hidden_size / num_attention_heads; }
  bool is_moe() const { return num_experts > 0; }
};

/// Parses and validates a model JSON document. Throws Error naming the field.
ModelSpec ParseModelJson(std::string_view text);

/// The JSON form, which ParseModelJson reads back unchanged.
std::string ModelToJson(const ModelSpec& model);

}  // namespace railsim::spec
