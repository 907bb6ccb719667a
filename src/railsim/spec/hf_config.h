// Hugging Face config.json as a model: the transformers configuration of a
// Llama / Mistral / Qwen2-3 / Gemma dense model, a Mixtral / Qwen-MoE / gpt_oss
// MoE model or a DeepSeek-V2/V3 MoE model with multi-latent attention (also
// nested under "text_config", as multimodal checkpoints hold their language
// model), with its sliding-window layers (sliding_window and layer_types, or
// the family's own rule), read into the same ModelSpec a railsim model file
// gives.
//
// The keys are translated to railsim's (Megatron-LM) model keys and validated
// by ParseModelJson, so the same checks apply; an error names the HF key
// ("/num_key_value_heads: expected a divisor of num_attention_heads 32, got 5").
// Keys that do not change the model's size or FLOPs (token ids, dtype,
// initialisation, ...) are ignored, as transformers ignores unknown ones.
#pragma once

#include <string>
#include <string_view>

#include "railsim/spec/model.h"

namespace railsim::spec {

/// True when `text` is a JSON object that is not a railsim model file (no
/// "num_layers") and has a key only HF configs have: "model_type",
/// "architectures", "num_hidden_layers" or "text_config". Never throws.
bool LooksLikeHfConfig(std::string_view text);

/// Reads a HF config.json. The training sequence length is
/// rope_scaling.original_max_position_embeddings when present (the context
/// the model was pre-trained at before its context was extended), else
/// max_position_embeddings (the key goes into seq_length_key, as such a
/// length is a context, not a training length); SetSeqLength overrides it.
/// The name is
/// "_name_or_path" when the config has one, else `fallback_name` (else the
/// model_type). Throws Error naming the HF key for bad values, and for an
/// architecture it does not know (by model_type, with the keys missing).
ModelSpec ParseHfConfigJson(std::string_view text, const std::string& fallback_name);

/// ParseHfConfigJson when LooksLikeHfConfig(text), else ParseModelJson.
ModelSpec ParseAnyModelJson(std::string_view text, const std::string& fallback_name);

}  // namespace railsim::spec
