// ModelSpec: a transformer LLM, described with Megatron-LM's argument names
// (num_layers, hidden_size, num_attention_heads, num_query_groups, ...), so a
// Megatron launch script translates into a model file key for key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::spec {

/// Bounds no real model approaches (model.cc says why they exist).
constexpr int64_t kMaxModelLayers = 100000;
constexpr int64_t kMaxSeqLength = int64_t{1} << 24;

enum class PositionEmbedding { kLearnedAbsolute, kRope };
enum class Normalization { kLayerNorm, kRmsNorm };

/// Multi-latent attention (DeepSeek-V2/V3): queries and keys/values pass
/// through low-rank latents; a shared rotary key of qk_pos_emb_head_dim.
struct LatentAttention {
  int q_lora_rank = 0;          ///< 0: queries projected directly from the hidden state
  int kv_lora_rank = 0;
  int qk_head_dim = 0;          ///< per head, without the rotary part
  int qk_pos_emb_head_dim = 0;  ///< rotary part of q and k, per head
  int v_head_dim = 0;
};

/// A decoder-only transformer. Valid once ParseModelJson() returned it:
/// heads divide hidden_size (unless kv_channels is given), query groups
/// divide heads, top-k <= experts, moe_layer_freq and window_attn_skip_freq
/// match num_layers.
struct ModelSpec {
  std::string name;
  std::string description;
  /// Architecture fields the JSON left out, each as "field default" (GPT-2's
  /// defaults), for the CLI's one-line warning; empty for presets. Not part
  /// of the model: ModelToJson ignores it.
  std::vector<std::string> defaulted;
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;   ///< GQA groups; == heads for multi-head attention
  int ffn_hidden_size = 0;    ///< dense layers' MLP width
  int head_dim = 0;           ///< Megatron's kv_channels: hidden_size / heads unless given
  bool swiglu = false;        ///< gated MLP with three matrices
  int vocab_size = 0;         ///< unpadded; Megatron pads to 128 x TP
  int seq_length = 0;
  /// The Hugging Face config key seq_length was read from
  /// ("max_position_embeddings"): a context the model supports, not a length
  /// it was trained at. Empty for railsim model files and once SetSeqLength
  /// set the length. Not part of the model: ModelToJson ignores it.
  std::string seq_length_key;
  int num_experts = 0;        ///< 0 = dense model
  int moe_router_topk = 0;
  int moe_ffn_hidden_size = 0;  ///< each routed expert's MLP width (default ffn_hidden_size)
  /// Shared experts' total MLP width, applied to every token (0 = none).
  int moe_shared_expert_intermediate_size = 0;
  /// Per layer, whether it is an MoE layer (Megatron's moe_layer_freq: an
  /// integer k puts one every k layers, a list gives 0/1 per layer). Empty
  /// for dense models.
  std::vector<uint8_t> moe_layers;
  /// Sliding-window attention: a windowed layer's query attends to the
  /// window_size most recent keys, itself included (Hugging Face's
  /// sliding_window; Megatron-LM's --window-size W,0 attends W + 1). 0 = every
  /// layer attends to the whole causal prefix.
  int window_size = 0;
  /// Per layer, whether it attends within window_size (1) or to the whole
  /// prefix (0) (Megatron's window_attn_skip_freq: an integer k makes every
  /// k-th layer full, a list gives 1 per windowed layer). Empty when
  /// window_size is 0.
  std::vector<uint8_t> window_layers;
  bool multi_latent_attention = false;
  LatentAttention mla;        ///< with multi_latent_attention
  bool qk_layernorm = false;  ///< a norm on q and k per head (Qwen3)
  PositionEmbedding position_embedding_type = PositionEmbedding::kLearnedAbsolute;
  Normalization normalization = Normalization::kLayerNorm;
  bool add_bias_linear = true;
  bool untie_embeddings_and_output_weights = false;
  double hidden_dropout = 0.1;
  double attention_dropout = 0.1;

  int kv_channels() const { return head_dim; }
  bool is_moe() const { return num_experts > 0; }
  /// MoE layers among layers [first, first + count). Inline: the search
  /// calls it for every stage of every strategy.
  int MoeLayersIn(int first, int count) const {
    if (moe_layers.empty()) return 0;
    int n = 0;
    for (int i = first; i < first + count && i < num_layers; ++i) n += moe_layers[size_t(i)];
    return n;
  }
  int moe_layer_count() const { return MoeLayersIn(0, num_layers); }
  /// Sliding-window layers among layers [first, first + count). Inline for
  /// the same reason.
  int WindowLayersIn(int first, int count) const {
    if (window_layers.empty()) return 0;
    int n = 0;
    for (int i = first; i < first + count && i < num_layers; ++i) n += window_layers[size_t(i)];
    return n;
  }
  int window_layer_count() const { return WindowLayersIn(0, num_layers); }
};

/// Parses and validates a model JSON document. Throws Error naming the field.
ModelSpec ParseModelJson(std::string_view text);

/// Sets the training sequence length (a HF config carries the model's
/// maximum, not the length a run trains at) and clears seq_length_key.
/// Throws Error(where) unless
/// 1 <= seq_length <= kMaxSeqLength.
void SetSeqLength(ModelSpec* m, int64_t seq_length, const std::string& where);

/// The JSON form, which ParseModelJson reads back unchanged.
std::string ModelToJson(const ModelSpec& model);

}  // namespace railsim::spec
