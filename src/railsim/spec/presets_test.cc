// Presets load and validate; spec loaders reject bad fields by JSON pointer.
#include "railsim/spec/presets.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "railsim/core/error.h"

namespace railsim::spec {
namespace {

template <typename F>
std::string ErrorOf(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PresetsTest, EveryPresetLoadsAndRoundTrips) {
  int systems = 0, models = 0;
  for (const PresetInfo& p : ListPresets()) {
    SCOPED_TRACE(p.name);
    EXPECT_FALSE(p.description.empty());
    switch (p.kind) {
      case PresetKind::kSystem: {
        SystemSpec s = LoadSystem(p.name, "--system");
        EXPECT_EQ(SystemToJson(s), SystemToJson(ParseSystemJson(SystemToJson(s))));
        ++systems;
        break;
      }
      case PresetKind::kModel: {
        ModelSpec m = LoadModel(p.name, "--model");
        EXPECT_EQ(ModelToJson(m), ModelToJson(ParseModelJson(ModelToJson(m))));
        ++models;
        break;
      }
      case PresetKind::kCatalog: LoadCatalog(p.name, "--catalog"); break;
      case PresetKind::kScenario: LoadScenario(p.name, "--scenario"); break;
      case PresetKind::kFailureCatalog: LoadFailureCatalog(p.name, "--failure-catalog"); break;
    }
  }
  EXPECT_EQ(11, systems);
  EXPECT_EQ(22, models);
}

TEST(PresetsTest, NamesAreUniqueAcrossKinds) {
  // `presets show NAME` and error hints look names up across kinds.
  std::set<std::string> names;
  for (const PresetInfo& p : ListPresets()) EXPECT_TRUE(names.insert(p.name).second) << p.name;
}

TEST(PresetsTest, SystemNumbersFromPublicSpecs) {
  // Reference section 6.
  SystemSpec h100 = LoadSystem("dgx-h100", "--system");
  EXPECT_DOUBLE_EQ(989e12, h100.gpu.peak_flops);
  EXPECT_DOUBLE_EQ(450e9, h100.hb_bw_Bps);
  EXPECT_DOUBLE_EQ(50e9, h100.nic_bw_Bps);
  EXPECT_EQ(8, h100.hb_domain_size);
  SystemSpec a100 = LoadSystem("dgx-a100", "--system");
  EXPECT_DOUBLE_EQ(312e12, a100.gpu.peak_flops);
  EXPECT_DOUBLE_EQ(300e9, a100.hb_bw_Bps);
  EXPECT_DOUBLE_EQ(25e9, a100.nic_bw_Bps);
  EXPECT_EQ(256, LoadSystem("dgx-gh200", "--system").hb_domain_size);
  // AWS p4de: 400 Gb/s of EFA on 4 NICs, each shared by 2 GPUs.
  SystemSpec p4de = LoadSystem("aws-p4de", "--system");
  EXPECT_DOUBLE_EQ(12.5e9, p4de.nic_bw_Bps);
  EXPECT_EQ(2, p4de.gpus_per_nic);
  EXPECT_DOUBLE_EQ(6.25e9, p4de.nic_share_Bps());
  EXPECT_EQ(8, p4de.hb_domain_size);
  EXPECT_EQ(72, LoadSystem("gb200-nvl72", "--system").hb_domain_size);
  // Blackwell, dense rates per GPU from the datasheets' sparse rack or
  // baseboard figures (half), and the NICs of reference blackwell.md.
  SystemSpec b200 = LoadSystem("dgx-b200", "--system");
  EXPECT_DOUBLE_EQ(2.25e15, b200.gpu.peak_flops);
  EXPECT_DOUBLE_EQ(4.5e15, b200.gpu.peak_flops_fp8);
  EXPECT_DOUBLE_EQ(180e9, b200.gpu.hbm_bytes);
  EXPECT_DOUBLE_EQ(900e9, b200.hb_bw_Bps);
  EXPECT_DOUBLE_EQ(50e9, b200.nic_bw_Bps);
  EXPECT_EQ(8, b200.hb_domain_size);
  SystemSpec b300 = LoadSystem("dgx-b300", "--system");
  EXPECT_DOUBLE_EQ(100e9, b300.nic_bw_Bps);  // ConnectX-8, 800 Gb/s
  EXPECT_EQ(8, b300.hb_domain_size);
  SystemSpec gb300 = LoadSystem("gb300-nvl72", "--system");
  EXPECT_DOUBLE_EQ(2.5e15, gb300.gpu.peak_flops);  // 360 PFLOP/s sparse per 72
  EXPECT_DOUBLE_EQ(5e15, gb300.gpu.peak_flops_fp8);
  EXPECT_DOUBLE_EQ(100e9, gb300.nic_bw_Bps);
  EXPECT_EQ(72, gb300.hb_domain_size);
  SystemSpec h200 = LoadSystem("dgx-h200", "--system");
  EXPECT_DOUBLE_EQ(141e9, h200.gpu.hbm_bytes);
  EXPECT_DOUBLE_EQ(4.8e12, h200.gpu.hbm_bw_Bps);
  EXPECT_DOUBLE_EQ(h100.gpu.peak_flops, h200.gpu.peak_flops);
  // The projection says so where a user reads it.
  EXPECT_NE(std::string::npos, LoadSystem("rubin-nvl144", "--system").description.find("PROJECTION"));
}

// A GPU's parameters are fitted once (one set per GPU): every system preset
// that carries the same GPU must carry the same numbers, so that a refit of
// one file cannot leave its twin behind (aws-p5 and dgx-h100; aws-p4de and
// dgx-a100).
TEST(PresetsTest, OneParameterSetPerGpu) {
  std::map<std::string, std::pair<std::string, std::string>> first;  // GPU name -> (system, its GPU JSON)
  int twins = 0;
  for (const PresetInfo& p : ListPresets()) {
    if (p.kind != PresetKind::kSystem) continue;
    SystemSpec s = LoadSystem(p.name, "--system");
    std::string gpu = nlohmann::json::parse(SystemToJson(s))["gpu"].dump();
    auto [it, inserted] = first.try_emplace(s.gpu.name, p.name, gpu);
    if (inserted) continue;
    ++twins;
    EXPECT_EQ(it->second.second, gpu) << p.name << " and " << it->second.first << " differ on " << s.gpu.name;
  }
  EXPECT_GE(twins, 2);
}

TEST(PresetsTest, ModelDefaultsFollowMegatron) {
  ModelSpec gpt = LoadModel("megatron-1t", "--model");
  EXPECT_EQ(128, gpt.num_layers);
  EXPECT_EQ(25600, gpt.hidden_size);
  EXPECT_EQ(160, gpt.num_query_groups);     // default: heads
  EXPECT_EQ(4 * 25600, gpt.ffn_hidden_size);  // default: 4 x hidden
  ModelSpec llama = LoadModel("llama3-70b", "--model");
  EXPECT_EQ(8, llama.num_query_groups);
  EXPECT_TRUE(llama.swiglu);
  ModelSpec mixtral = LoadModel("mixtral-8x22b", "--model");
  EXPECT_EQ(8, mixtral.num_experts);
  EXPECT_EQ(2, mixtral.moe_router_topk);
}

TEST(PresetsTest, UnknownPresetSuggests) {
  EXPECT_EQ(
      "--system: unknown system preset 'dgx-h10' (did you mean 'dgx-h100'?); expected a preset "
      "name (aws-p4de, aws-p5, dgx-a100, dgx-b200, dgx-b300, dgx-gh200, dgx-h100, dgx-h200, gb200-nvl72, gb300-nvl72, "
      "rubin-nvl144) or a JSON file path",
      ErrorOf([] { LoadSystem("dgx-h10", "--system"); }));
  EXPECT_EQ("--model: cannot read 'nope/x.json': No such file or directory",
            ErrorOf([] { LoadModel("nope/x.json", "--model"); }));
  EXPECT_EQ("--model: expected a file, got directory '/tmp'", ErrorOf([] { LoadModel("/tmp", "--model"); }));
}

const char* kModel = R"({"name": "m", "num_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                         "vocab_size": 100, "seq_length": 32})";

TEST(ModelSpecTest, FieldErrorsArePointers) {
  EXPECT_NO_THROW(ParseModelJson(kModel));
  EXPECT_EQ("/hidden_size: expected an integer in [1, 1048576], got -4",
            ErrorOf([] { ParseModelJson(R"({"name": "m", "num_layers": 2, "hidden_size": -4})"); }));
  EXPECT_EQ("/num_layers: expected an integer in [1, 100000], got 2.5",
            ErrorOf([] { ParseModelJson(R"({"name": "m", "num_layers": 2.5})"); }));
  EXPECT_EQ("/num_layers: expected an integer in [1, 100000], got \"2\"",
            ErrorOf([] { ParseModelJson(R"({"name": "m", "num_layers": "2"})"); }));
  EXPECT_EQ("/num_attention_heads: expected a divisor of hidden_size 64, got 5",
            ErrorOf([] {
              ParseModelJson(R"({"name": "m", "num_layers": 2, "hidden_size": 64, "num_attention_heads": 5})");
            }));
  EXPECT_EQ("/vocab_size: required field is missing", ErrorOf([] {
              ParseModelJson(R"({"name": "m", "num_layers": 2, "hidden_size": 64, "num_attention_heads": 4})");
            }));
  EXPECT_EQ("/: expected a JSON object, got an array", ErrorOf([] { ParseModelJson("[1]"); }));
  EXPECT_EQ("not valid JSON: parse error at line 1, column 3: syntax error while parsing object key - "
            "invalid literal; last read: '{na'; expected string literal",
            ErrorOf([] { ParseModelJson("{name"); }));
}

TEST(ModelSpecTest, UnknownKeySuggests) {
  std::string text = std::string(kModel);
  text.insert(1, "\"hiden_size\": 3, ");
  std::string message = ErrorOf([&] { ParseModelJson(text); });
  EXPECT_EQ(0u, message.find("/hiden_size: unknown field (did you mean 'hidden_size'?); expected one of "))
      << message;
}

TEST(SystemSpecTest, RejectsZeroBandwidth) {
  std::string text(PresetText("dgx-h100", ""));
  size_t at = text.find("\"450GB/s\"");
  text.replace(at, 9, "\"0GB/s\"");
  EXPECT_EQ("/hb_bandwidth: expected a positive value, got \"0GB/s\"", ErrorOf([&] { ParseSystemJson(text); }));
}

// The "nccl" object and the NIC keys: each validator names its field.
TEST(SystemSpecTest, RejectsBadNcclConstants) {
  const std::string preset(PresetText("aws-p5", ""));
  auto error_with = [&](const std::string& from, const std::string& to) {
    std::string text = preset;
    const size_t at = text.find(from);
    EXPECT_NE(std::string::npos, at) << from;
    text.replace(at, from.size(), to);
    return ErrorOf([&] { ParseSystemJson(text); });
  };
  EXPECT_EQ("/nccl/intra_speeds_GBps/1: expected the speeds in decreasing order",
            error_with("[60, 50,", "[60, 70,"));
  EXPECT_EQ("/nccl/tree_correction/ll: expected 24 numbers", error_with("\"ll\": [1.0, 1.0,", "\"ll\": [1.0,"));
  EXPECT_EQ("/nccl/ring_plateau_factor: expected a number in [1, 10], got 0.5",
            error_with("\"ring_plateau_factor\": 1.4", "\"ring_plateau_factor\": 0.5"));
  EXPECT_EQ("/nccl/nic_tree_efficiency: expected a number in [0.01, 1], got 1.5",
            error_with("\"nic_tree_efficiency\": 0.8453", "\"nic_tree_efficiency\": 1.5"));
  EXPECT_EQ("/nics_per_gpu: expected an integer in [1, 64], got 0", error_with("\"nics_per_gpu\": 4", "\"nics_per_gpu\": 0"));
  EXPECT_EQ(0u, error_with("\"nic_fabric\": \"efa\"", "\"nic_fabric\": \"ib\"").find("/nic_fabric: "));
  EXPECT_EQ("/nccl/ll_enabled: expected true or false, got \"yes\"",
            error_with("\"ll128_enabled\": true,", "\"ll128_enabled\": true, \"ll_enabled\": \"yes\","));
}

// ll_enabled: false on aws-p4de (aws-ofi-nccl pins NCCL_PROTO=simple there),
// absent and true elsewhere, and written back only when false.
TEST(SystemSpecTest, LlEnabledRoundTrips) {
  const SystemSpec p4de = LoadSystem("aws-p4de", "--system");
  EXPECT_FALSE(p4de.nccl.ll_enabled);
  EXPECT_FALSE(p4de.nccl.ll128_enabled);
  EXPECT_TRUE(LoadSystem("aws-p5", "--system").nccl.ll_enabled);
  EXPECT_FALSE(ParseSystemJson(SystemToJson(p4de)).nccl.ll_enabled);
  EXPECT_EQ(std::string::npos, SystemToJson(LoadSystem("dgx-a100", "--system")).find("ll_enabled"));
}

// gpus_per_nic: read, written back, a divisor of the domain, and not with
// several NICs per GPU.
TEST(SystemSpecTest, GpusPerNic) {
  const std::string preset(PresetText("dgx-a100", ""));
  auto with = [&](const std::string& key) {
    std::string text = preset;
    text.insert(text.find("\"nic_bandwidth\""), key + ", ");
    return text;
  };
  const SystemSpec shared = ParseSystemJson(with("\"gpus_per_nic\": 2"));
  EXPECT_EQ(2, shared.gpus_per_nic);
  EXPECT_DOUBLE_EQ(shared.nic_bw_Bps / 2, shared.nic_share_Bps());
  EXPECT_EQ(2, ParseSystemJson(SystemToJson(shared)).gpus_per_nic);
  EXPECT_EQ(1, ParseSystemJson(preset).gpus_per_nic);
  EXPECT_EQ("/gpus_per_nic: expected a divisor of hb_domain_size 8, got 3",
            ErrorOf([&] { ParseSystemJson(with("\"gpus_per_nic\": 3")); }));
  EXPECT_EQ("/gpus_per_nic: expected an integer in [1, 8], got 16",
            ErrorOf([&] { ParseSystemJson(with("\"gpus_per_nic\": 16")); }));
  EXPECT_EQ("/gpus_per_nic: expected 1 when nics_per_gpu is above 1 (GPUs share a NIC, or a GPU has several)",
            ErrorOf([&] { ParseSystemJson(with("\"gpus_per_nic\": 2, \"nics_per_gpu\": 2")); }));
}

TEST(SystemSpecTest, ContextNamesTheFile) {
  Error e("/hb_domain_size", "expected an integer >= 1, got -4");
  EXPECT_EQ("--system s.json: /hb_domain_size: expected an integer >= 1, got -4",
            std::string(e.WithContext("--system s.json").what()));
}

TEST(CatalogTest, RejectsNegativePrice) {
  EXPECT_EQ("/port_classes/0/switch_port_cost_usd: expected a number in [0, 1000000000], got -1",
            ErrorOf([] {
              ParseCatalogJson(R"({"name": "c", "port_classes": [{"port_speed": "400Gbps",
                "switch_port_cost_usd": -1, "transceiver_cost_usd": 1, "switch_port_power_w": 1,
                "transceiver_power_w": 1}]})");
            }));
}

TEST(JsonTest, DeepNestingIsRefused) {
  std::string deep(100000, '[');
  EXPECT_EQ("not valid here: JSON nested deeper than 64 levels", ErrorOf([&] { ParseModelJson(deep); }));
}

// Megatron-Core's window keys: window_size, and window_attn_skip_freq as an
// integer k (layer_number % k != 0 is windowed, counting from 1) or a 0/1
// list (1 windowed); absent, every layer is windowed.
std::string ModelWith(int layers, const std::string& keys) {
  return R"({"name": "m", "num_layers": )" + std::to_string(layers) +
         R"(, "hidden_size": 64, "num_attention_heads": 4, "vocab_size": 100, "seq_length": 32, )" + keys + "}";
}

TEST(ModelSpecTest, SlidingWindowKeys) {
  auto with = [](const std::string& keys, int layers = 2) { return ParseModelJson(ModelWith(layers, keys)); };
  ModelSpec m = with(R"("window_size": 128, "window_attn_skip_freq": 3)", 6);
  EXPECT_EQ(128, m.window_size);
  EXPECT_EQ((std::vector<uint8_t>{1, 1, 0, 1, 1, 0}), m.window_layers);
  EXPECT_EQ(4, m.window_layer_count());
  EXPECT_EQ(2, m.WindowLayersIn(3, 3));
  EXPECT_NE(std::string::npos, ModelToJson(m).find("\"window_attn_skip_freq\": 3"));
  EXPECT_EQ(ModelToJson(m), ModelToJson(ParseModelJson(ModelToJson(m))));
  m = with(R"("window_size": 64, "window_attn_skip_freq": [0, 1, 1])", 3);
  EXPECT_EQ((std::vector<uint8_t>{0, 1, 1}), m.window_layers);
  EXPECT_EQ(ModelToJson(m), ModelToJson(ParseModelJson(ModelToJson(m))));
  m = with(R"("window_size": 64)");
  EXPECT_EQ((std::vector<uint8_t>{1, 1}), m.window_layers);
  EXPECT_EQ(std::string::npos, ModelToJson(m).find("window_attn_skip_freq"));
  EXPECT_EQ(0, ParseModelJson(kModel).window_size);
  EXPECT_TRUE(ParseModelJson(kModel).window_layers.empty());
}

TEST(ModelSpecTest, SlidingWindowErrors) {
  auto error = [](const std::string& keys) { return ErrorOf([&] { ParseModelJson(ModelWith(2, keys)); }); };
  EXPECT_EQ("/window_size: expected an integer in [1, 16777216], got 0", error(R"("window_size": 0)"));
  EXPECT_EQ("/window_size: expected an integer in [1, 16777216], got -128", error(R"("window_size": -128)"));
  EXPECT_EQ("/window_size: expected an integer in [1, 16777216], got [128,0]", error(R"("window_size": [128, 0])"));
  EXPECT_EQ("/window_attn_skip_freq: expected window_size with a sliding-window layer pattern",
            error(R"("window_attn_skip_freq": 2)"));
  EXPECT_EQ("/window_attn_skip_freq: expected an integer in [1, 2], got 0",
            error(R"("window_size": 8, "window_attn_skip_freq": 0)"));
  EXPECT_EQ("/window_attn_skip_freq: expected a list of num_layers 2 entries of 0 or 1, got 3",
            error(R"("window_size": 8, "window_attn_skip_freq": [1, 0, 1])"));
  EXPECT_EQ("/window_attn_skip_freq/1: expected 0 (full attention) or 1 (sliding window), got \"full\"",
            error(R"("window_size": 8, "window_attn_skip_freq": [1, "full"])"));
}

}  // namespace
}  // namespace railsim::spec
