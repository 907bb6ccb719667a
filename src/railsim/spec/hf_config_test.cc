// Hugging Face config.json files of real models (tests/data/hf/, from their
// published config.json) read into the same models as railsim's presets,
// with the published parameter totals; and the reader's errors, word for word.
#include "railsim/spec/hf_config.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/perf/model_stats.h"
#include "railsim/spec/presets.h"

namespace railsim::spec {
namespace {

std::string DataPath(const std::string& name) { return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/hf/" + name; }

std::string ErrorOf(const std::string& text) {
  try {
    ParseHfConfigJson(text, "test");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

struct Case {
  const char* file;
  const char* preset;
  int64_t preset_seq;  // the preset's training length, where the config's differs
  double published_total;
  double tolerance;  // relative
};

// Totals: the Hugging Face model pages' safetensors counts for Llama 3.1
// (8,030,261,248; 70,553,706,496; 405,853,388,800 parameters, exact), and the
// model cards' rounded totals for the MoE models (Mixtral 8x22B 141B,
// Qwen3-235B-A22B 235B, DeepSeek-V3 671B without its 14B MTP module).
const Case kCases[] = {
    {"llama-3.1-8b.json", "llama3.1-8b", 0, 8030261248.0, 0},
    {"llama-3.1-70b.json", "llama3.1-70b", 0, 70553706496.0, 0},
    {"llama-3.1-405b.json", "llama3-405b", 0, 405853388800.0, 0},
    {"mixtral-8x22b.json", "mixtral-8x22b", 4096, 141e9, 0.01},
    {"qwen3-235b-a22b.json", "qwen3-235b-a22b", 4096, 235e9, 0.01},
    {"deepseek-v3.json", "deepseek-v3", 0, 671e9, 0.01},
};

TEST(HfConfigTest, RealConfigsMatchThePresetsAndThePublishedTotals) {
  for (const Case& c : kCases) {
    ModelSpec hf = LoadModel(DataPath(c.file), "--model");
    ModelSpec preset = LoadModel(c.preset, "--model");
    const double total = perf::CountParams(hf).total;
    std::printf("  %s: %.0f parameters (published %.0f, %+.3f%%)\n", c.file, total, c.published_total,
                100 * (total / c.published_total - 1));
    EXPECT_NEAR(c.published_total, total, c.tolerance * c.published_total) << c.file;
    EXPECT_EQ(perf::CountParams(preset).total, total) << c.file;
    // Field by field: the same model once the name, description and (where
    // the config carries a longer context) the training length agree.
    if (c.preset_seq) SetSeqLength(&hf, c.preset_seq, "--seq-length");
    hf.name = preset.name;
    hf.description = preset.description;
    EXPECT_EQ(ModelToJson(preset), ModelToJson(hf)) << c.file;
  }
}

TEST(HfConfigTest, TrainingLengthIsThePreExtensionContext) {
  // Llama 3.1 and DeepSeek-V3 extend 8192 and 4096 with RoPE scaling; Qwen3
  // has no rope_scaling, so its maximum is all the file says.
  EXPECT_EQ(8192, LoadModel(DataPath("llama-3.1-8b.json"), "--model").seq_length);
  EXPECT_EQ(4096, LoadModel(DataPath("deepseek-v3.json"), "--model").seq_length);
  EXPECT_EQ(40960, LoadModel(DataPath("qwen3-235b-a22b.json"), "--model").seq_length);
  ModelSpec m = LoadModel("hf:" + DataPath("llama-3.1-8b.json"), "--model");
  EXPECT_EQ("llama-3.1-8b", m.name);
  EXPECT_EQ("LlamaForCausalLM from a Hugging Face config.json (llama); seq_length from "
            "rope_scaling/original_max_position_embeddings (--seq-length sets the training length)",
            m.description);
}

// A Gemma-style config nested as a multimodal checkpoint holds it: head_dim
// 256 x 8 heads != hidden 2048, embeddings tied by default, one KV head.
// Parameters by hand: per layer q 2048x2048, k and v 2048x256 each, o
// 2048x2048, MLP 3 x 2048 x 16384, two norms of 2048; embedding 256000 x 2048
// once (tied); final norm 2048.
TEST(HfConfigTest, NestedTextConfigAndGemmaDefaults) {
  const std::string text = R"({"architectures": ["SomeVisionModel"], "text_config": {
      "model_type": "gemma", "num_hidden_layers": 18, "hidden_size": 2048, "intermediate_size": 16384,
      "num_attention_heads": 8, "num_key_value_heads": 1, "head_dim": 256, "vocab_size": 256000,
      "max_position_embeddings": 8192, "rope_theta": 10000.0}})";
  ASSERT_TRUE(LooksLikeHfConfig(text));
  ModelSpec m = ParseAnyModelJson(text, "gemma-2b");
  EXPECT_EQ(256, m.head_dim);
  EXPECT_FALSE(m.untie_embeddings_and_output_weights);
  const double layer = 2.0 * 2048 * 2048 + 2.0 * 2048 * 256 + 3.0 * 2048 * 16384 + 2 * 2048;
  EXPECT_DOUBLE_EQ(18 * layer + 256000.0 * 2048 + 2048, perf::CountParams(m).total);
}

// Qwen2-MoE style: every second layer MoE (decoder_sparse_step 2) except
// layer 1 (mlp_only_layers), so MoE layers are 3, 5, 7 of 8.
TEST(HfConfigTest, QwenMoeLayerRule) {
  ModelSpec m = ParseHfConfigJson(R"({"model_type": "qwen2_moe", "num_hidden_layers": 8, "hidden_size": 64,
      "intermediate_size": 256, "num_attention_heads": 4, "vocab_size": 1000, "max_position_embeddings": 512,
      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
      "shared_expert_intermediate_size": 128, "decoder_sparse_step": 2, "mlp_only_layers": [1]})", "");
  EXPECT_EQ("qwen2_moe", m.name);
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 0, 1, 0, 1, 0, 1}), m.moe_layers);
  EXPECT_EQ(128, m.moe_shared_expert_intermediate_size);
}

TEST(HfConfigTest, ErrorsNameTheHfKey) {
  const std::string base = R"("num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 256,
      "num_attention_heads": 8, "vocab_size": 100, "max_position_embeddings": 512)";
  EXPECT_EQ("/num_key_value_heads: expected a divisor of num_attention_heads 8, got 3",
            ErrorOf(R"({"model_type": "llama", "num_key_value_heads": 3, )" + base + "}"));
  EXPECT_EQ("/model_type: unknown architecture 'falcon' ('FalconForCausalLM'); expected one of llama, mistral, "
            "qwen2, qwen3, gemma, gemma2, gemma3_text, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3, "
            "gpt_oss; it lacks num_hidden_layers, intermediate_size, num_attention_heads",
            ErrorOf(R"({"model_type": "falcon", "architectures": ["FalconForCausalLM"], "hidden_size": 64,
                "vocab_size": 100, "max_position_embeddings": 2048})"));
  EXPECT_EQ("/num_local_experts: required field is missing (a mixtral config needs num_hidden_layers, hidden_size, "
            "intermediate_size, num_attention_heads, vocab_size, max_position_embeddings, num_local_experts, "
            "num_experts_per_tok; missing: num_local_experts)",
            ErrorOf(R"({"model_type": "mixtral", "num_experts_per_tok": 2, )" + base + "}"));
  EXPECT_EQ("/num_experts_per_tok: expected an integer in [1, num_experts 4], got 5",
            ErrorOf(R"({"model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 5, )" + base + "}"));
  EXPECT_EQ("/n_group: expected a divisor of the 6 experts (n_routed_experts), got 4",
            ErrorOf(R"({"model_type": "deepseek_v3", "n_routed_experts": 6, "num_experts_per_tok": 2,
                "moe_intermediate_size": 16, "kv_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 4,
                "v_head_dim": 8, "n_group": 4, "topk_group": 1, )" + base + "}"));
  std::string negative = base;
  negative.replace(negative.find("\"hidden_size\": 64"), 17, "\"hidden_size\": -1");
  EXPECT_EQ("/text_config/hidden_size: expected an integer in [1, 2147483647], got -1",
            ErrorOf(R"({"text_config": {"model_type": "qwen3", )" + negative + "}}"));
  EXPECT_EQ("/rope_scaling: expected a JSON object, got a string",
            ErrorOf(R"({"model_type": "llama", "rope_scaling": "yarn", )" + base + "}"));
}

// openai/gpt-oss-120b's config.json: 36 MoE layers of 128 experts, top-4,
// biases on q/k/v/o and the experts, layer_types alternating a 128-token
// window (layers 0, 2, ...) with full attention. Parameters by hand:
// attention 2880 x (4096 + 2 x 512) + 4096 x 2880 + biases 4096 + 2 x 512 +
// 2880 = 26,550,080; two norms 5,760; an expert 3 x 2880^2 + biases 5760 +
// 2880 = 24,891,840, x 128 + the router 2880 x 128 = 3,186,524,160; 36
// layers 115,670,880,000; untied embeddings 2 x 201088 x 2880 and the final
// norm: 116,829,149,760 (the model card's 116.8B; the 2,304 sink logits and
// the routers' 4,608 biases are not counted).
TEST(HfConfigTest, GptOssAlternatesSlidingWindowAndFullLayers) {
  ModelSpec m = LoadModel(DataPath("gpt-oss-120b.json"), "--model");
  EXPECT_EQ(128, m.window_size);
  ASSERT_EQ(36u, m.window_layers.size());
  for (int i = 0; i < 36; ++i) EXPECT_EQ(i % 2 == 0 ? 1 : 0, m.window_layers[size_t(i)]) << i;
  EXPECT_EQ(128, m.num_experts);
  EXPECT_EQ(4, m.moe_router_topk);
  EXPECT_EQ(2880, m.moe_ffn_hidden_size);
  EXPECT_TRUE(m.add_bias_linear);
  EXPECT_EQ(4096, m.seq_length);  // rope_scaling's original_max_position_embeddings (YaRN)
  EXPECT_DOUBLE_EQ(116829149760.0, perf::CountParams(m).total);
  EXPECT_NE(std::string::npos, m.description.find("the attention sinks"));
  ModelSpec preset = LoadModel("gpt-oss-120b", "--model");
  m.name = preset.name;
  m.description = preset.description;
  EXPECT_EQ(ModelToJson(preset), ModelToJson(m));
  // gpt-oss-20b: 24 layers of 32 experts: 24 x (26,550,080 + 5,760 + 32 x
  // 24,891,840 + 2880 x 32) + 1,158,266,880 + 2880 = 20,914,754,880 (20.9B).
  EXPECT_DOUBLE_EQ(20914754880.0, perf::CountParams(LoadModel("gpt-oss-20b", "--model")).total);
}

// Mistral windows every layer (its sliding_window defaults to 4096 when the
// key is absent; null is no window); Mixtral's default is no window.
TEST(HfConfigTest, MistralWindowsEveryLayer) {
  const std::string base = R"("num_hidden_layers": 4, "hidden_size": 64, "intermediate_size": 256,
      "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 32768)";
  ModelSpec m = ParseHfConfigJson(R"({"model_type": "mistral", "sliding_window": 1024, )" + base + "}", "");
  EXPECT_EQ(1024, m.window_size);
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 1, 1}), m.window_layers);
  EXPECT_EQ(std::string::npos, ModelToJson(m).find("window_attn_skip_freq"));
  EXPECT_NE(std::string::npos, ModelToJson(m).find("\"window_size\": 1024"));
  EXPECT_EQ(4096, ParseHfConfigJson(R"({"model_type": "mistral", )" + base + "}", "").window_size);
  EXPECT_EQ(0, ParseHfConfigJson(R"({"model_type": "mistral", "sliding_window": null, )" + base + "}", "").window_size);
  const std::string moe = R"("model_type": "mixtral", "num_local_experts": 4, "num_experts_per_tok": 2, )";
  EXPECT_EQ(0, ParseHfConfigJson("{" + moe + base + "}", "").window_size);
  EXPECT_EQ(512, ParseHfConfigJson("{" + moe + R"("sliding_window": 512, )" + base + "}", "").window_size);
  // Llama has no sliding window: transformers ignores the key, and so does railsim.
  EXPECT_EQ(0, ParseHfConfigJson(R"({"model_type": "llama", "sliding_window": 1024, )" + base + "}", "").window_size);
}

// Gemma 2 alternates (layers 0, 2, ... windowed), Gemma 3 runs 5 local : 1
// global (sliding_window_pattern 6, or _sliding_window_pattern as newer
// transformers save it); layer_types, when given, says it layer by layer.
TEST(HfConfigTest, GemmaWindowPatterns) {
  const std::string base = R"("num_hidden_layers": 6, "hidden_size": 64, "intermediate_size": 256,
      "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "vocab_size": 100,
      "max_position_embeddings": 8192, "sliding_window": 4096, )";
  ModelSpec m = ParseHfConfigJson("{" + base + R"("model_type": "gemma2"})", "");
  EXPECT_EQ(4096, m.window_size);
  EXPECT_EQ((std::vector<uint8_t>{1, 0, 1, 0, 1, 0}), m.window_layers);
  EXPECT_NE(std::string::npos, ModelToJson(m).find("\"window_attn_skip_freq\": 2"));
  m = ParseHfConfigJson("{" + base + R"("model_type": "gemma3_text", "sliding_window_pattern": 6})", "");
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 1, 1, 1, 0}), m.window_layers);
  m = ParseHfConfigJson("{" + base + R"("model_type": "gemma3_text", "_sliding_window_pattern": 3})", "");
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 0, 1, 1, 0}), m.window_layers);
  m = ParseHfConfigJson("{" + base + R"("model_type": "gemma3_text", "layer_types": ["full_attention",
      "sliding_attention", "sliding_attention", "full_attention", "full_attention", "sliding_attention"]})", "");
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1, 0, 0, 1}), m.window_layers);
  EXPECT_NE(std::string::npos, ModelToJson(m).find("\"window_attn_skip_freq\": [\n    0,\n    1,"));
}

// Qwen2/3 window only with use_sliding_window, from layer max_window_layers on.
TEST(HfConfigTest, QwenSlidingWindowLayers) {
  const std::string base = R"("model_type": "qwen2", "num_hidden_layers": 4, "hidden_size": 64,
      "intermediate_size": 256, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 32768,
      "sliding_window": 4096, "max_window_layers": 2)";
  ModelSpec m = ParseHfConfigJson("{" + base + R"(, "use_sliding_window": true})", "");
  EXPECT_EQ(4096, m.window_size);
  EXPECT_EQ((std::vector<uint8_t>{0, 0, 1, 1}), m.window_layers);
  EXPECT_EQ(0, ParseHfConfigJson("{" + base + R"(, "use_sliding_window": false})", "").window_size);
  EXPECT_EQ(0, ParseHfConfigJson("{" + base + "}", "").window_size);
}

TEST(HfConfigTest, WindowErrorsNameTheHfKey) {
  const std::string base = R"("model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64,
      "intermediate_size": 64, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 4096,
      "num_local_experts": 4, "num_experts_per_tok": 2)";
  EXPECT_EQ("/sliding_window: expected an integer in [1, 2147483647], got 0",
            ErrorOf("{" + base + R"(, "sliding_window": 0})"));
  EXPECT_EQ("/sliding_window: expected an integer in [1, 2147483647], got -128",
            ErrorOf("{" + base + R"(, "sliding_window": -128})"));
  EXPECT_EQ("/sliding_window: expected an integer in [1, 16777216], got 100000000",
            ErrorOf("{" + base + R"(, "sliding_window": 100000000})"));
  EXPECT_EQ("/layer_types: expected a list of num_hidden_layers 2 entries, got 3",
            ErrorOf("{" + base + R"(, "layer_types": ["sliding_attention", "full_attention", "full_attention"]})"));
  EXPECT_EQ("/layer_types/1: expected \"sliding_attention\" or \"full_attention\", got \"chunked_attention\"",
            ErrorOf("{" + base + R"(, "layer_types": ["sliding_attention", "chunked_attention"]})"));
  EXPECT_EQ("/text_config/layer_types/0: expected \"sliding_attention\" or \"full_attention\", got 1",
            ErrorOf(R"({"text_config": {)" + base + R"(, "layer_types": [1, 0]}})"));
  EXPECT_EQ("/sliding_window_pattern: expected an integer in [1, 2147483647], got 0",
            ErrorOf("{" + base + R"(, "sliding_window_pattern": 0})"));
}

}  // namespace
}  // namespace railsim::spec
