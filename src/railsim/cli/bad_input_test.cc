// Feeds hundreds of bad inputs to every subcommand: wrong types, negative,
// zero, huge, non-divisible, unknown names, truncated files, binary garbage,
// a directory or a FIFO as a file. Each must exit 2 with exactly one line on
// stderr, "railsim: error: ...", that names the field; none may crash, hang
// or print a stack trace.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

struct Case {
  Args args;
  std::string field;  ///< must appear in the error line
};

// Replaces (or appends) `flag value` in `base`.
Args With(Args base, const std::string& flag, const std::string& value) {
  for (size_t i = 0; i + 1 < base.size(); ++i) {
    if (base[i] == flag) {
      base[i + 1] = value;
      return base;
    }
  }
  base.push_back(flag);
  base.push_back(value);
  return base;
}

// Appends a flag without a value (--simulate).
Args Plus(Args base, const std::string& flag) {
  base.push_back(flag);
  return base;
}

Args Without(Args base, const std::string& flag) {
  for (size_t i = 0; i < base.size(); ++i) {
    if (base[i] == flag) {
      base.erase(base.begin() + i, base.begin() + i + 2);
      break;
    }
  }
  return base;
}

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    Write("garbage.json", std::string("\x00\xff\xfe\x01binary\x7f", 10));
    Write("truncated.json", "{\"name\": \"x\", \"num_layers\": 2, \"hidden_size\"");
    Write("array.json", "[1, 2, 3]");
    Write("empty.json", "");
    Write("deep.json", std::string(5000, '[') + std::string(5000, ']'));
    Write("huge-number.json", "{\"name\": \"x\", \"num_layers\": 1e400}");
    Write("unreadable.json", "not json at all");
    chmod((dir_ + "/unreadable.json").c_str(), 0);
    mkfifo((dir_ + "/fifo.json").c_str(), 0644);
    mkdir((dir_ + "/adir.json").c_str(), 0755);
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name, std::ios::binary) << text;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Hugging Face configs each broken in one key, with the field the error names.
  std::vector<std::pair<std::string, std::string>> HfCases() {
    // Llama's keys, less those a body gives (a key twice is refused).
    const std::vector<std::pair<std::string, std::string>> llama_keys = {
        {"model_type", "\"llama\""}, {"num_hidden_layers", "32"},   {"hidden_size", "4096"},
        {"intermediate_size", "14336"}, {"num_attention_heads", "32"}, {"vocab_size", "128256"}};
    auto config = [&llama_keys](const std::string& body) {
      std::string out = "{";
      for (const auto& [key, value] : llama_keys) {
        if (body.find("\"" + key + "\"") == std::string::npos) out += "\"" + key + "\": " + value + ", ";
      }
      return out + body + "}";
    };
    const std::vector<std::pair<std::string, std::string>> bodies = {
        {R"("num_key_value_heads": 7, "max_position_embeddings": 8192)", "/num_key_value_heads"},
        {R"("num_key_value_heads": -8, "max_position_embeddings": 8192)", "/num_key_value_heads"},
        {R"("max_position_embeddings": "8k")", "/max_position_embeddings"},
        {R"("max_position_embeddings": 8192, "rope_scaling": {"original_max_position_embeddings": 0})",
         "/rope_scaling/original_max_position_embeddings"},
        {R"("max_position_embeddings": 8192, "tie_word_embeddings": "no")", "/tie_word_embeddings"},
        {R"("max_position_embeddings": 8192, "attention_dropout": 3)", "/attention_dropout"},
        {R"("num_hidden_layers": 1e9, "max_position_embeddings": 8192)", "/num_hidden_layers"},
        {R"("max_position_embeddings": 1e400)", ""},
    };
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [body, field] : bodies) {
      std::string name = "hf-" + std::to_string(counter_++) + ".json";
      Write(name, config(body));
      out.push_back({Path(name), field.empty() ? "--model" : field});
    }
    Write("hf-falcon.json", R"({"model_type": "falcon", "hidden_size": 64})");
    out.push_back({Path("hf-falcon.json"), "/model_type"});
    Write("hf-mixtral.json", config(R"("model_type": "mixtral", "max_position_embeddings": 8192,
        "num_local_experts": 8, "num_experts_per_tok": 9)"));
    out.push_back({Path("hf-mixtral.json"), "/num_experts_per_tok"});
    Write("hf-deepseek.json", config(R"("model_type": "deepseek_v3", "max_position_embeddings": 8192,
        "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64, "kv_lora_rank": 0,
        "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64)"));
    out.push_back({Path("hf-deepseek.json"), "/kv_lora_rank"});
    const std::string gpt_oss = R"("model_type": "gpt_oss", "num_hidden_layers": 2, "max_position_embeddings": 4096,
        "num_local_experts": 8, "num_experts_per_tok": 4, )";
    Write("hf-window.json", config(gpt_oss + R"("sliding_window": 0)"));
    out.push_back({Path("hf-window.json"), "/sliding_window"});
    Write("hf-layer-types.json", config(gpt_oss + R"("layer_types": ["sliding_attention", "chunked_attention"])"));
    out.push_back({Path("hf-layer-types.json"), "/layer_types/1"});
    Write("hf-layer-count.json", config(gpt_oss + R"("layer_types": ["full_attention"])"));
    out.push_back({Path("hf-layer-count.json"), "/layer_types"});
    Write("hf-text.json", R"({"text_config": 5})");
    out.push_back({Path("hf-text.json"), "/text_config"});
    return out;
  }
  std::vector<std::string> BadFiles() const {
    return {Path("garbage.json"), Path("truncated.json"), Path("array.json"),  Path("empty.json"),
            Path("deep.json"),    Path("huge-number.json"), Path("unreadable.json"), Path("fifo.json"),
            Path("adir.json"),    Path("missing.json"),   "/dev/null"};
  }
  // A copy of a preset with one field replaced: `"key": value`.
  std::string Mutated(const std::string& preset, const std::string& key, const std::string& value) {
    RunResult r = RunRailsim({"presets", "show", preset});
    std::string text = r.out;
    size_t at = text.find("\"" + key + "\":");
    EXPECT_NE(std::string::npos, at) << key;
    size_t start = text.find(':', at) + 1;
    size_t end = text.find_first_of(",\n}", start);
    if (text[start + 1] == '"') end = text.find('"', start + 2) + 1;
    if (text[start + 1] == '[') end = text.find(']', start) + 1;
    text.replace(start, end - start, " " + value);
    std::string name = preset + "-" + key + "-" + std::to_string(counter_++) + ".json";
    Write(name, text);
    return Path(name);
  }

  std::string dir_;
  int counter_ = 0;
};

// The type bits of what `path` names, links not followed (0 if nothing).
mode_t ModeOf(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

bool PathExists(const std::string& path) { return ModeOf(path) != 0; }

void Check(const Case& c, const RunResult& r) {
  std::string shown;
  for (const std::string& a : c.args) shown += a.size() > 60 ? a.substr(0, 60) + "... " : a + " ";
  EXPECT_EQ(2, r.status) << shown << "\nstderr: " << r.err;
  EXPECT_EQ(1, LineCount(r.err)) << shown << "\nstderr: " << r.err;
  EXPECT_EQ(0u, r.err.find("railsim: error: ")) << shown << "\nstderr: " << r.err;
  EXPECT_NE(std::string::npos, r.err.find(c.field)) << shown << "\nexpected field " << c.field
                                                    << "\nstderr: " << r.err;
  EXPECT_EQ("", r.out) << shown;
}

// Under the sanitizers each start of the binary costs about ten times as much,
// and the whole matrix was the sanitizer stage's critical path (260 s of CI's
// 30 minutes). There the first two cases of each command and field run, so
// every field's check runs instrumented, though not with every bad value; the
// release stage runs them all.
std::vector<Case> SampledForTheBuild(const std::vector<Case>& cases) {
#ifdef RAILSIM_SANITIZED
  std::map<std::pair<std::string, std::string>, int> seen;
  std::vector<Case> kept;
  for (const Case& c : cases) {
    if (++seen[{c.args.empty() ? "" : c.args[0], c.field}] <= 2) kept.push_back(c);
  }
  return kept;
#else
  return cases;
#endif
}

// Runs every case (several at once: each is a process of its own) and checks each.
void CheckAll(const std::vector<Case>& all_cases) {
  EXPECT_FALSE(all_cases.empty()) << "a section of the matrix lost its cases";
  std::printf("  %zu bad inputs\n", all_cases.size());
  const std::vector<Case> cases = SampledForTheBuild(all_cases);
  std::vector<Args> runs;
  for (const Case& c : cases) runs.push_back(c.args);
  std::vector<RunResult> results = RunRailsimMany(runs, 60);
  for (size_t i = 0; i < cases.size(); ++i) Check(cases[i], results[i]);
}

const Args kNetwork = {"network", "--design", "rail-only", "--gpus", "4096", "--hb-size", "8", "--radix", "64"};
const Args kCost = {"cost", "--gpus", "4096", "--hb-size", "8", "--radix", "64"};
const Args kEstimate = {"estimate", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "1024", "--tp",
                        "8", "--pp", "8", "--global-batch-size", "512", "--micro-batch-size", "1"};
const Args kAllToAll = {"alltoall", "--system", "dgx-a100", "--gpus", "72", "--bytes-per-pair", "1MB",
                        "--network", "rail-only"};
const Args kCollective = {"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce",
                          "--bytes", "64MiB", "--group", "dp", "--tp", "8"};
const Args kTraffic = {"traffic", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "64", "--tp", "8",
                       "--pp", "4", "--global-batch-size", "64", "--micro-batch-size", "1"};
const Args kFailures = {"failures", "--gpus", "256", "--network", "rail-only", "--radix", "16", "--trials", "50"};
const Args kFailuresExplicit = {"failures", "--gpus", "256", "--network", "rail-only", "--radix", "16",
                                "--fail", "nic3"};
const std::string kP5AllReduce =
    std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/p5-8nodes/all_reduce_perf.txt";
const Args kCalibrate = {"calibrate", "--system", "dgx-h100", "--nccl-tests", kP5AllReduce};
const Args kSearch = {"search", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "1024",
                      "--global-batch-size", "512"};

// Counts no count flag takes.
const std::vector<std::string> kBadCounts = {"0", "-1", "-4096", "abc", "1.5", "1e3", "", "99999999999999999999",
                                             "0x10", " 8", "8 GPUs", "nan", "inf"};

TEST_F(BadInputTest, NetworkAndCost) {
  std::vector<Case> cases;
  // Network and cost: every numeric flag with every bad count.
  for (const Args& base : {kNetwork, kCost}) {
    for (std::string flag : {"--gpus", "--hb-size", "--radix"}) {
      for (const std::string& v : kBadCounts) cases.push_back({With(base, flag, v), flag});
      cases.push_back({Without(base, flag), flag});
    }
    for (std::string v : {"7", "3", "4095", "100000"}) cases.push_back({With(base, "--hb-size", v), "--hb-size"});
    for (std::string v : {"63", "1", "3", "65537", "70000"}) cases.push_back({With(base, "--radix", v), "--radix"});
    cases.push_back({With(With(base, "--radix", "8"), "--gpus", "4096"), "--radix"});  // > 3 tiers
    cases.push_back({With(base, "--gpus", "2000000000"), "--gpus"});
    for (std::string v : {"0", "-400Gbps", "fast", "400", "nan", "inf", "400Gbsp", "0Gbps", "1e999Gbps",
                          "1e300Gbps", "1e-30Gbps"}) {
      cases.push_back({With(base, "--port-speed", v), "--port-speed"});
    }
    cases.push_back({With(base, "--port-speed", "3200Gbps"), "--port-speed"});  // no catalog prices
    for (std::string v : {"0", "0.5", "-1", "abc", "64", "nan"}) {
      cases.push_back({With(base, "--oversubscription", v), "--oversubscription"});
    }
    for (std::string v : {"0", "-2", "3", "x", "1e9"}) cases.push_back({With(base, "--gpus-per-nic", v), "--gpus-per-nic"});
    for (const std::string& f : BadFiles()) cases.push_back({With(base, "--catalog", f), "--catalog"});
    cases.push_back({With(base, "--catalog", "defualt"), "--catalog"});
    cases.push_back({With(base, "--catalog", Mutated("default", "switch_port_cost_usd", "-694")), "switch_port_cost_usd"});
    cases.push_back({With(base, "--catalog", Mutated("default", "transceiver_power_w", "\"9W\"")), "transceiver_power_w"});
    cases.push_back({With(base, "--catalog", Mutated("default", "port_speed", "0")), "port_speed"});
    cases.push_back({With(base, "--format", "xml"), "--format"});
    cases.push_back({With(base, "--export", "plan.txt"), "--export"});
    cases.push_back({With(base, "--export", dir_ + "/no/such/dir/c.csv"), "--export"});
    cases.push_back({With(base, "--bogus", "1"), "--bogus"});
  }
  cases.push_back({With(kNetwork, "--export", dir_ + "/adir.json"), "--export"});
  for (std::string v : {"dgx-h10", "", "DGX-H100"}) cases.push_back({With(kCost, "--server", v), "--server"});
  cases.push_back({With(kCost, "--catalog", Mutated("default", "gpus", "0")), "/servers/0/gpus"});
  cases.push_back({With(kCost, "--catalog", Mutated("default", "power_w", "-1")), "/servers/0/power_w"});
  cases.push_back({With(kCost, "--catalog", Mutated("default", "pue", "0.5")), "/operating/pue"});
  cases.push_back({With(kCost, "--catalog", Mutated("default", "lifetime_years", "0")), "/operating/lifetime_years"});
  cases.push_back({With(kCost, "--catalog", Mutated("default", "electricity_usd_per_kwh", "\"8c\"")),
                   "/operating/electricity_usd_per_kwh"});
  for (std::string d : {"railonly", "", "spine-free", "RAIL-ONLY"}) cases.push_back({With(kNetwork, "--design", d), "--design"});
  cases.push_back({Without(kNetwork, "--design"), "--design"});

  CheckAll(cases);
}

TEST_F(BadInputTest, CompareScenarioFilesAndPresets) {
  std::vector<Case> cases;
  // Compare: scenario files.
  for (const std::string& f : BadFiles()) cases.push_back({{"compare", "--scenario", f}, "--scenario"});
  cases.push_back({{"compare", "--scenario", "nope"}, "--scenario"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "gpus", "0")}, "/gpus"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "gpus", "\"many\"")}, "/gpus"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "gpus", "1e12")}, "/gpus"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "hb_domain_sizes", "[7, 256]")}, "/hb_domain_sizes"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "hb_domain_sizes", "[]")}, "/hb_domain_sizes"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "hb_domain_sizes", "8")}, "/hb_domain_sizes"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "radixes", "[63]")}, "/radixes"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "radixes", "[4]")}, "radix"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "radixes", "[-64]")}, "/radixes"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "port_speed", "\"-1Gbps\"")}, "/port_speed"});
  cases.push_back({{"compare", "--scenario", Mutated("paper-headline", "name", "42")}, "/name"});
  cases.push_back({{"compare", "--format", "yaml"}, "--format"});
  for (std::string v : {"dgx-h10", "", "DGX-H100"}) cases.push_back({{"compare", "--server", v}, "--server"});
  cases.push_back({With(kNetwork, "--format", "csv"), "--format"});
  cases.push_back({With(kEstimate, "--format", "csv"), "--format"});
  cases.push_back({{"compare", "--catalog", Path("garbage.json")}, "--catalog"});

  // Presets.
  cases.push_back({{"presets", "show", "dgx-h10"}, "dgx-h100"});
  cases.push_back({{"presets", "show", "hf:" + Path("missing.json")}, "presets show"});
  cases.push_back({{"presets", "show", Path("garbage.json")}, "presets show"});
  cases.push_back({{"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes", "64MiB",
                    "--group", "dp", "--seq-length", "4096"},
                   "--seq-length"});
  cases.push_back({Plus(With(kFailures, "--seq-length", "4096"), "--quiet"), "--seq-length"});
  cases.push_back({{"compare", "--seq-length", "0"}, "--seq-length"});
  cases.push_back({{"compare", "--seq-length", "4096", "--print-scenario"}, "--seq-length"});
  cases.push_back({{"compare", "--gpus", "64", "--hb-sizes", "8", "--global-batch-sizes", "64", "--moe-model",
                    "deepseek-v3", "--moe-global-batch-size", "64", "--seq-length", "abc"},
                   "--seq-length"});
  cases.push_back({{"presets", "show", ""}, "presets show"});
  cases.push_back({{"presets", "--format", "xml"}, "--format"});
  cases.push_back({{"presets", "shw"}, "shw"});

  CheckAll(cases);
}

TEST_F(BadInputTest, EstimateAndSearchTheJob) {
  std::vector<Case> cases;
  // Estimate and search: the job.
  for (const Args& base : {kEstimate, kSearch}) {
    for (const std::string& f : BadFiles()) {
      cases.push_back({With(base, "--model", f), "--model"});
      cases.push_back({With(base, "--system", f), "--system"});
    }
    cases.push_back({With(base, "--model", "gpt-3"), "--model"});
    cases.push_back({With(base, "--system", "dgx-h10"), "--system"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "hidden_size", "-12288")), "/hidden_size"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "hidden_size", "12288.5")), "/hidden_size"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "num_attention_heads", "7")), "/num_attention_heads"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "num_layers", "0")), "/num_layers"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "num_layers", "true")), "/num_layers"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "seq_length", "1e300")), "/seq_length"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "vocab_size", "null")), "/vocab_size"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "hidden_dropout", "2")), "/hidden_dropout"});
    cases.push_back({With(base, "--model", Mutated("gpt3-175b", "position_embedding_type", "\"alibi\"")), "/position_embedding_type"});
    cases.push_back({With(base, "--model", Mutated("mixtral-8x22b", "moe_router_topk", "9")), "/moe_router_topk"});
    cases.push_back({With(base, "--model", Mutated("mixtral-8x22b", "num_experts", "1")), "/num_experts"});
    cases.push_back({With(base, "--model", Mutated("llama3-70b", "num_query_groups", "7")), "/num_query_groups"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hb_bandwidth", "\"0GB/s\"")), "/hb_bandwidth"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "nic_bandwidth", "\"-200Gbps\"")), "/nic_bandwidth"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "nic_bandwidth", "0")), "/nic_bandwidth"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hb_efficiency", "1.5")), "/hb_efficiency"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hb_efficiency", "0")), "/hb_efficiency"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hb_domain_size", "0")), "/hb_domain_size"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "peak_flops", "\"312TFLOPs\"")), "/gpu/peak_flops"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hbm_capacity", "\"80 GiB of HBM\"")), "/gpu/hbm_capacity"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "num_sms", "0")), "/gpu/num_sms"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "peak_flops", "\"1e-300FLOPS\"")), "/gpu/peak_flops"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hb_bandwidth", "\"1e30GB/s\"")), "/hb_bandwidth"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "hbm_bandwidth", "1e-9")), "/gpu/hbm_bandwidth"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "kernel_overhead", "\"-4us\"")), "/gpu/kernel_overhead"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "memory_reserved", "\"100GiB\"")), "/gpu/memory_reserved"});
    cases.push_back({With(base, "--system", Mutated("dgx-h100", "straggler_jitter", "-0.1")), "/gpu/straggler_jitter"});
    for (const std::string& v : kBadCounts) {
      cases.push_back({With(base, "--gpus", v), "--gpus"});
      cases.push_back({With(base, "--global-batch-size", v), "--global-batch-size"});
    }
    cases.push_back({With(base, "--gpus", "1000000000"), "--gpus"});
    cases.push_back({With(base, "--global-batch-size", "1000000000000"), "--global-batch-size"});
    for (std::string v : {"fat-tree", "", "Rail-Only"}) cases.push_back({With(base, "--network", v), "--network"});
    for (std::string v : {"0", "3", "-8", "x"}) cases.push_back({With(base, "--hb-size", v), "--hb-size"});
    cases.push_back({With(base, "--attention", "sparse"), "--attention"});
    for (std::string v : {"full_iteration", "TE", "graphs", "None"}) {
      cases.push_back({With(base, "--cuda-graph-impl", v), "--cuda-graph-impl"});
    }
    cases.push_back({With(base, "--format", "yaml"), "--format"});
    // --seq-length and Hugging Face config.json models.
    for (const std::string& v : kBadCounts) {
      // An empty optional flag is an absent one, as for --hb-size and --radix.
      if (!v.empty()) cases.push_back({With(base, "--seq-length", v), "--seq-length"});
    }
    cases.push_back({With(base, "--seq-length", "16777217"), "--seq-length"});
    cases.push_back({With(base, "--model", "hf:"), "--model"});
    cases.push_back({With(base, "--model", "hf:" + Path("missing.json")), "--model"});
    cases.push_back({With(base, "--model", "hf:" + Path("garbage.json")), "--model"});
    cases.push_back({With(base, "--model", "hf:" + Path("array.json")), "--model"});
    cases.push_back({With(base, "--model", "hf:" + Mutated("gpt3-175b", "name", "\"x\"")), "/model_type"});
    for (const auto& [file, field] : HfCases()) cases.push_back({With(base, "--model", file), field});
    for (std::string v : {"megatron", "nemo", "Megatron-Args", "megatron-args,json"}) {
      cases.push_back({With(base, "--format", v), "--format"});
    }
    cases.push_back({With(With(base, "--format", "megatron-args"), "--gpus", "0"), "--gpus"});
  }
  cases.push_back({With(kTraffic, "--format", "megatron-args"), "--format"});
  cases.push_back({With(With(kEstimate, "--format", "nemo-overrides"), "--tp", "7"), "--tp"});
  CheckAll(cases);
}

TEST_F(BadInputTest, EstimateTheStrategy) {
  std::vector<Case> cases;
  // Estimate: the strategy.
  for (std::string flag : {"--tp", "--pp", "--micro-batch-size"}) {
    for (const std::string& v : kBadCounts) cases.push_back({With(kEstimate, flag, v), flag});
    cases.push_back({Without(kEstimate, flag), flag});
  }
  for (std::string flag : {"--dp", "--cp", "--ep", "--vp"}) {
    for (std::string v : {"0", "-1", "abc", "1.5"}) cases.push_back({With(kEstimate, flag, v), flag});
  }
  cases.push_back({With(kEstimate, "--tp", "7"), "--tp"});           // heads 96
  cases.push_back({With(kEstimate, "--trace", dir_ + "/no/such/dir/t.json"), "--trace"});
  cases.push_back({With(kEstimate, "--trace-png", "timeline.svg"), "--trace-png"});
  cases.push_back({With(kEstimate, "--trace-png", dir_ + "/no/such/dir/t.png"), "--trace-png"});
  cases.push_back({With(kEstimate, "--tp", "64"), "--tp"});          // 96 % 64
  cases.push_back({With(kEstimate, "--pp", "7"), "--dp"});           // 8 x 7 does not divide 1024
  cases.push_back({With(With(kEstimate, "--pp", "128"), "--gpus", "8192"), "--pp"});  // 96 layers
  cases.push_back({With(With(With(kEstimate, "--pp", "7"), "--vp", "14"), "--gpus", "7168"), "--vp"});  // 13 layers on the last stage
  cases.push_back({With(kEstimate, "--dp", "3"), "--dp"});           // 8 x 8 x 3 != 1024
  cases.push_back({With(kEstimate, "--dp", "32"), "--dp"});
  cases.push_back({With(kEstimate, "--cp", "3"), "--cp"});           // 2 x 3 does not divide 2048
  cases.push_back({With(With(kEstimate, "--cp", "4096"), "--dp", "1"), "--cp"});
  cases.push_back({With(With(kEstimate, "--cp", "2"), "--dp", "1"), "--dp"});  // 8 x 8 x 1 x 2 != 1024
  cases.push_back({With(kEstimate, "--ep", "2"), "--ep"});           // dense model
  cases.push_back({With(kEstimate, "--vp", "5"), "--vp"});           // 12 layers per stage
  cases.push_back({With(With(kEstimate, "--pp", "1"), "--vp", "2"), "--vp"});
  cases.push_back({With(kEstimate, "--micro-batch-size", "3"), "--global-batch-size"});
  cases.push_back({With(kEstimate, "--global-batch-size", "100"), "--global-batch-size"});
  cases.push_back({With(kEstimate, "--global-batch-size", "8"), "--global-batch-size"});
  cases.push_back({With(kEstimate, "--micro-batch-size", "1024"), "--global-batch-size"});
  for (std::string v : {"some", "", "FULL", "partial"}) cases.push_back({With(kEstimate, "--recompute", v), "--recompute"});
  Args moe = With(With(kEstimate, "--model", "mixtral-8x22b"), "--ep", "3");
  cases.push_back({moe, "--ep"});
  cases.push_back({With(moe, "--ep", "2"), "--sequence-parallel"});  // MoE with tp > 1 needs SP
  CheckAll(cases);
}

TEST_F(BadInputTest, MoeSettingsAndModelKeys) {
  std::vector<Case> cases;
  // MoE dispatch settings and MoE model keys.
  Args deepseek = {"estimate", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "2048", "--tp", "1",
                   "--pp", "16", "--ep", "64", "--global-batch-size", "4096", "--micro-batch-size", "1"};
  for (const Args& base : {deepseek, Plus(With(kSearch, "--model", "mixtral-8x22b"), "--quiet")}) {
    for (std::string v : {"bogus", "", "Forwarded", "pxn"}) cases.push_back({With(base, "--moe-alltoall", v), "--moe-alltoall"});
    for (std::string v : {"0.5", "0", "-1", "x", "2000", "nan"}) {
      cases.push_back({With(base, "--moe-imbalance", v), "--moe-imbalance"});
    }
    for (std::string v : {"0", "-1", "x", "1.5", "", "all"}) {
      cases.push_back({With(base, "--moe-max-domains", v), "--moe-max-domains"});
    }
    for (std::string v : {"fp16", "", "FP8", "e4m3"}) {
      cases.push_back({With(base, "--moe-dispatch-precision", v), "--moe-dispatch-precision"});
    }
  }
  cases.push_back({With(kEstimate, "--moe-dispatch-precision", "fp8"), "--moe-dispatch-precision"});  // dense
  cases.push_back({Plus(kEstimate, "--moe-overlap"), "--moe-overlap"});  // a dense model
  cases.push_back({With(kEstimate, "--moe-imbalance", "1.5"), "--moe-imbalance"});
  cases.push_back({With(kEstimate, "--moe-alltoall", "direct"), "--moe-alltoall"});
  cases.push_back({With(kSearch, "--moe-max-domains", "4"), "--moe-max-domains"});
  for (auto [key, value, field] :
       {std::tuple{"moe_ffn_hidden_size", "0", "/moe_ffn_hidden_size"},
        {"moe_ffn_hidden_size", "\"big\"", "/moe_ffn_hidden_size"},
        {"moe_shared_expert_intermediate_size", "-1", "/moe_shared_expert_intermediate_size"},
        {"moe_layer_freq", "[0, 1]", "/moe_layer_freq"},
        {"moe_layer_freq", "0", "/moe_layer_freq"},
        {"moe_layer_freq", "\"[0]*3+[1]*58\"", "/moe_layer_freq"},
        {"kv_lora_rank", "0", "/kv_lora_rank"},
        {"qk_head_dim", "-128", "/qk_head_dim"},
        {"v_head_dim", "1.5", "/v_head_dim"},
        {"multi_latent_attention", "\"yes\"", "/multi_latent_attention"},
        {"multi_latent_attention", "false", "/q_lora_rank"},
        {"num_query_groups", "8", "/num_query_groups"}}) {
    cases.push_back({With(deepseek, "--model", Mutated("deepseek-v3", key, value)), field});
  }
  cases.push_back({With(deepseek, "--model", Mutated("deepseek-v3", "moe_layer_freq", std::string("[") +
                                                     "2" + std::string(60 * 3, ' ').replace(0, 180, [] {
                                                       std::string r;
                                                       for (int i = 0; i < 60; ++i) r += ", 1";
                                                       return r;
                                                     }()) + "]")),
                   "/moe_layer_freq/0"});
  cases.push_back({With(kEstimate, "--model", Mutated("gpt3-175b", "num_layers", "96, \"moe_layer_freq\": 2")),
                   "/moe_layer_freq"});  // a dense model
  cases.push_back({With(kEstimate, "--model", Mutated("gpt3-175b", "num_layers", "96, \"kv_lora_rank\": 512")),
                   "/kv_lora_rank"});  // latent sizes without multi_latent_attention
  cases.push_back({With(kEstimate, "--model", Mutated("gpt3-175b", "num_layers", "96, \"kv_channels\": 0")),
                   "/kv_channels"});
  // Sliding-window attention keys.
  for (auto [key, value, field] :
       {std::tuple{"window_size", "0", "/window_size"},
        {"window_size", "-128", "/window_size"},
        {"window_size", "\"128,0\"", "/window_size"},
        {"window_attn_skip_freq", "0", "/window_attn_skip_freq"},
        {"window_attn_skip_freq", "[1, 0]", "/window_attn_skip_freq"},
        {"window_attn_skip_freq", "\"[1,0]*18\"", "/window_attn_skip_freq"}}) {
    cases.push_back({With(kEstimate, "--model", Mutated("gpt-oss-120b", key, value)), field});
  }
  cases.push_back({With(kEstimate, "--model", Mutated("gpt3-175b", "num_layers", "96, \"window_attn_skip_freq\": 2")),
                   "/window_attn_skip_freq"});  // a pattern without a window
  // Collective: the MoE dispatch.
  Args dispatch = {"collective", "--op", "moe-dispatch", "--model", "deepseek-v3", "--system", "dgx-h100",
                   "--gpus", "2048", "--group", "ep", "--ep", "64", "--pp", "16"};
  cases.push_back({With(dispatch, "--bytes", "1MiB"), "--bytes"});
  cases.push_back({With(dispatch, "--model", "gpt3-175b"), "--ep"});  // a dense model has no experts
  cases.push_back({With(With(dispatch, "--model", "gpt3-175b"), "--ep", "1"), "--model"});
  cases.push_back({Without(dispatch, "--model"), "--model"});
  cases.push_back({With(dispatch, "--group", "dp"), "--group"});
  cases.push_back({With(dispatch, "--micro-batch-size", "0"), "--micro-batch-size"});
  cases.push_back({With(dispatch, "--moe-imbalance", "0.9"), "--moe-imbalance"});
  cases.push_back({With(dispatch, "--moe-alltoall", "ring"), "--moe-alltoall"});
  cases.push_back({Without(With(kCollective, "--op", "all-reduce"), "--bytes"), "--bytes"});
  CheckAll(cases);
}

TEST_F(BadInputTest, PrecisionOptimizerAndStack) {
  std::vector<Case> cases;
  // Precision and TP-communication overlap.
  for (std::string v : {"fp16", "", "FP8", "int8"}) cases.push_back({With(kEstimate, "--precision", v), "--precision"});
  cases.push_back({With(kEstimate, "--precision", "fp8"), "--precision"});  // A100: no FP8 peak
  cases.push_back({Plus(kEstimate, "--tp-comm-overlap"), "--tp-comm-overlap"});  // needs --sequence-parallel
  cases.push_back({Plus(With(kEstimate, "--tp", "1"), "--tp-comm-overlap"), "--tp-comm-overlap"});
  for (std::string v : {"fp16", "", "all"}) cases.push_back({With(kSearch, "--precision", v), "--precision"});
  cases.push_back({With(kSearch, "--precision", "fp8"), "--precision"});
  // Block-scaled formats, low-precision weights and the layers kept in bf16.
  const Args h100 = With(kEstimate, "--system", "dgx-h100");
  for (std::string v : {"mxfp8", "fp4"}) cases.push_back({With(h100, "--precision", v), "--precision"});  // Hopper
  cases.push_back({With(kSearch, "--precision", "mxfp8"), "--precision"});
  const Args b200 = With(With(kEstimate, "--system", "dgx-b200"), "--precision", "fp8");
  cases.push_back({Plus(kEstimate, "--fp8-params"), "--fp8-params"});                       // bf16
  cases.push_back({Plus(With(b200, "--precision", "fp4"), "--fp8-params"), "--fp8-params"});
  cases.push_back({Plus(b200, "--fp4-params"), "--fp4-params"});
  for (std::string flag : {"--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16"}) {
    for (std::string v : {"-1", "x", "", "97", "1e3"}) cases.push_back({With(b200, flag, v), flag});
    cases.push_back({With(kEstimate, flag, "2"), flag});  // bf16: every layer is bf16
  }
  cases.push_back({With(With(b200, "--num-layers-at-start-in-bf16", "50"), "--num-layers-at-end-in-bf16", "50"),
                   "--num-layers-at-end-in-bf16"});
  cases.push_back({With(kEstimate, "--system", Mutated("gb200-nvl72", "peak_flops_fp4", "\"40PFLOPS\"")),
                   "/gpu/peak_flops_fp4"});
  cases.push_back({With(kEstimate, "--system", Mutated("gb200-nvl72", "fp4_gemm_efficiency", "0")),
                   "/gpu/fp4_gemm_efficiency"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "fp8_gemm_efficiency", "1.5")), "/gpu/fp8_gemm_efficiency"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "peak_flops_fp8", "\"-1TFLOPS\"")), "/gpu/peak_flops_fp8"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "tp_comm_overlap_cost", "2")), "/gpu/tp_comm_overlap_cost"});
  // GEMM and attention shape terms, fixed costs.
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "gemm_tile_fixed_k", "-1")), "/gpu/gemm_tile_fixed_k"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "flash_attention_fixed_keys", "1e9")), "/gpu/flash_attention_fixed_keys"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "flash_attention_fixed_dim", "-3")), "/gpu/flash_attention_fixed_dim"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "flash_attention_backward_ratio", "0")), "/gpu/flash_attention_backward_ratio"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "iteration_overhead", "\"-1ms\"")), "/gpu/iteration_overhead"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "pipeline_chunk_overhead", "\"1 parsec\"")), "/gpu/pipeline_chunk_overhead"});
  cases.push_back({With(kEstimate, "--system", Mutated("dgx-h100", "dp_comm_overlap_cost", "1.5")), "/gpu/dp_comm_overlap_cost"});
  // Optimizer precision and data-parallel sharding (Megatron-Core's names and values).
  for (const Args& base : {kEstimate, kTraffic}) {
    for (std::string v : {"fp16", "", "FP32"}) cases.push_back({With(base, "--main-grads-dtype", v), "--main-grads-dtype"});
    for (std::string v : {"bf16", "", "fp8"}) cases.push_back({With(base, "--main-params-dtype", v), "--main-params-dtype"});
    for (std::string v : {"fp16", "fp8", ""}) cases.push_back({With(base, "--exp-avg-dtype", v), "--exp-avg-dtype"});
    for (std::string v : {"fp16", "fp8", ""}) cases.push_back({With(base, "--exp-avg-sq-dtype", v), "--exp-avg-sq-dtype"});
    for (std::string v : {"none", "zero3", "", "Full"}) {
      cases.push_back({With(base, "--data-parallel-sharding", v), "--data-parallel-sharding"});
    }
  }
  for (std::string v : {"0", "x", "-8", ""}) {
    cases.push_back({With(With(kEstimate, "--data-parallel-sharding", "full"), "--fsdp-shard-group-size", v),
                     "--fsdp-shard-group-size"});
  }
  // dp 16: 3 does not divide it; without sharding there is nothing to group.
  cases.push_back({With(With(kEstimate, "--data-parallel-sharding", "full"), "--fsdp-shard-group-size", "3"),
                   "--fsdp-shard-group-size"});
  cases.push_back({With(kEstimate, "--fsdp-shard-group-size", "4"), "--fsdp-shard-group-size"});
  cases.push_back({Plus(kSearch, "--explore-optimizer=bogus"), "--explore-optimizer"});
  // Stack profiles and Megatron-Core's interleave group size.
  for (const Args& base : {kEstimate, kSearch, kTraffic}) {
    for (std::string v : {"", "nemo2", "Megatron-Core", "megatron"}) cases.push_back({With(base, "--stack", v), "--stack"});
    cases.push_back({With(base, "--attention", ""), "--attention"});
    // A duration 0-60 s: negative, past the bound, not a number, NaN, infinity.
    for (std::string v : {"-1ms", "61s", "1e9s", "abc", "nan", "inf"}) {
      cases.push_back({With(base, "--iteration-overhead", v), "--iteration-overhead"});
    }
  }
  {
    // gpt3-175b, tp 8 pp 8 on 1024 A100s: dp 16, 512 / 16 = 32 micro-batches; vp 2 (6 layers a chunk).
    const Args interleaved = With(kEstimate, "--vp", "2");
    const std::string flag = "--microbatch-group-size-per-virtual-pipeline-stage";
    for (std::string v : {"", "x", "0", "-8", "4", "7", "33", "1e3", "pp8"}) cases.push_back({With(interleaved, flag, v), flag});
    cases.push_back({With(kEstimate, flag, "8"), flag});  // no interleaving
    cases.push_back({With(interleaved, flag, "10"), flag});  // last group 32 mod 10 = 2 < pp 8
  }
  // Search: its own limits.
  for (std::string v : {"0", "-1", "x", "10001", "100000"}) cases.push_back({With(kSearch, "--top", v), "--top"});
  for (std::string v : {"0", "-2", "x", "5000"}) cases.push_back({With(kSearch, "--threads", v), "--threads"});
  cases.push_back({With(kSearch, "--max-strategies", "10"), "--max-strategies"});
  cases.push_back({With(kSearch, "--max-strategies", "0"), "--max-strategies"});
  CheckAll(cases);
}

TEST_F(BadInputTest, TheNetworkTimedAllToAllAndCollective) {
  std::vector<Case> cases;
  // Estimate and search: the network timed.
  for (const Args& base : {kEstimate, kSearch}) {
    for (std::string v : {"0", "63", "-64", "x", "70000"}) cases.push_back({With(base, "--radix", v), "--radix"});
    cases.push_back({With(base, "--radix", "4"), "--radix"});  // more than three tiers
    for (std::string v : {"0", "0.5", "-1", "abc", "nan", "64"}) {
      cases.push_back({With(base, "--oversubscription", v), "--oversubscription"});
    }
  }
  // alltoall and collective: the cluster, the network, the simulation.
  for (const Args& base : {kAllToAll, kCollective}) {
    for (const std::string& v : kBadCounts) cases.push_back({With(base, "--gpus", v), "--gpus"});
    cases.push_back({Without(base, "--gpus"), "--gpus"});
    cases.push_back({Without(base, "--system"), "--system"});
    for (const std::string& f : BadFiles()) cases.push_back({With(base, "--system", f), "--system"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "nic_routing", "\"ospf\"")), "/nic_routing"});
    cases.push_back({With(base, "--system", Mutated("dgx-a100", "switch_latency", "\"-1us\"")), "/switch_latency"});
    for (std::string v : {"0", "5", "-8", "x"}) cases.push_back({With(base, "--hb-size", v), "--hb-size"});
    for (std::string v : {"fat-tree", "", "RAIL-ONLY"}) cases.push_back({With(base, "--network", v), "--network"});
    for (std::string v : {"0", "63", "x", "4"}) cases.push_back({With(base, "--radix", v), "--radix"});
    for (std::string v : {"0.5", "x", "nan"}) cases.push_back({With(base, "--oversubscription", v), "--oversubscription"});
    for (std::string v : {"ospf", "", "ECMP"}) cases.push_back({With(base, "--routing", v), "--routing"});
    for (std::string v : {"-1", "x", "1.5"}) cases.push_back({With(base, "--seed", v), "--seed"});
    for (std::string v : {"0", "-1GB", "x", "1KB", "2EB", ""}) cases.push_back({With(base, "--max-memory", v), "--max-memory"});
    cases.push_back({Plus(With(base, "--max-memory", "1MiB"), "--simulate"), "--max-memory"});  // over the estimate
    for (std::string v : {"0", "-1", "x", "1025", "1.5"}) cases.push_back({With(base, "--threads", v), "--threads"});
    cases.push_back({With(base, "--export-links", Path("links.csv")), "--export-links"});  // needs --simulate
    cases.push_back({Plus(With(base, "--max-gpus", "8"), "--simulate"), "--gpus"});
    cases.push_back({With(base, "--format", "csv"), "--format"});
    cases.push_back({With(base, "--bogus", "1"), "--bogus"});
  }
  for (std::string flag : {"--hb-bw", "--nic-bw"}) {
    for (std::string v : {"0", "-1GB/s", "fast", "nan", "1e30GB/s"}) cases.push_back({With(kAllToAll, flag, v), flag});
  }
  for (std::string v : {"0", "-1MB", "x", "1e400", "2TB", ""}) {
    cases.push_back({With(kAllToAll, "--bytes-per-pair", v), "--bytes-per-pair"});
  }
  cases.push_back({Without(kAllToAll, "--bytes-per-pair"), "--bytes-per-pair"});
  for (std::string v : {"both", "", "Pipelined"}) cases.push_back({With(kAllToAll, "--schedule", v), "--schedule"});
  for (std::string v : {"1", "0", "x", "5000"}) cases.push_back({With(kAllToAll, "--chunks", v), "--chunks"});
  for (std::string v : {"both", "", "Simulate"}) {
    cases.push_back({Plus(With(With(kAllToAll, "--network", "rail-only"), "--baseline", v), "--simulate"), "--baseline"});
  }
  cases.push_back({With(kAllToAll, "--baseline", "simulate"), "--baseline"});  // needs rail-only and --simulate
  cases.push_back({With(kAllToAll, "--gpus", "100"), "--gpus"});  // K = 8 does not divide
  for (std::string v : {"allreduce", "", "scatter"}) cases.push_back({With(kCollective, "--op", v), "--op"});
  cases.push_back({Without(kCollective, "--op"), "--op"});
  for (std::string v : {"0", "-1MB", "x", "2PB"}) cases.push_back({With(kCollective, "--bytes", v), "--bytes"});
  for (std::string v : {"xp", "", "TP"}) cases.push_back({With(kCollective, "--group", v), "--group"});
  for (std::string v : {"nccl", "", "Ring"}) cases.push_back({With(kCollective, "--algorithm", v), "--algorithm"});
  cases.push_back({With(kCollective, "--algorithm", "in-switch"), "--algorithm"});  // dp spans domains
  for (std::string v : {"LL", "", "ll64", "nccl"}) cases.push_back({With(kCollective, "--protocol", v), "--protocol"});
  // dgx-gh200 has no NCCL model (256 GPUs: one whole HB domain).
  cases.push_back({With(With(With(kCollective, "--system", "dgx-gh200"), "--gpus", "256"), "--protocol", "ll"),
                   "--protocol"});
  cases.push_back({With(With(kCollective, "--op", "all-to-all"), "--protocol", "simple"), "--protocol"});
  // aws-ofi-nccl runs p4de on Simple only.
  cases.push_back({With(With(With(kCollective, "--system", "aws-p4de"), "--gpus", "16"), "--protocol", "ll"),
                   "--protocol"});
  cases.push_back({With(With(With(kCollective, "--system", "aws-p4de"), "--gpus", "16"), "--protocol", "ll128"),
                   "--protocol"});
  cases.push_back({With(kCollective, "--algorithm", "forwarded"), "--algorithm"});  // not all-to-all
  cases.push_back({With(kCollective, "--algorithm", "pat"), "--algorithm"});        // not all-reduce
  // tp 1: the dp group has 8 members in each domain, PAT needs one.
  cases.push_back({With(With(With(kCollective, "--op", "all-gather"), "--tp", "1"), "--algorithm", "pat"), "--algorithm"});
  cases.push_back({With(With(kCollective, "--group", "tp"), "--algorithm", "nvls-tree"), "--algorithm"});  // one domain
  cases.push_back({With(With(kCollective, "--tp", "1"), "--algorithm", "collnet"), "--algorithm"});  // no SHARP
  cases.push_back({With(kCollective, "--system", Mutated("dgx-h100", "bandwidth_factor", "2")),
                   "/nccl/pat/bandwidth_factor"});
  cases.push_back({With(kCollective, "--system", Mutated("dgx-h100", "net_step_divisor", "0")),
                   "/nccl/pat/net_step_divisor"});
  cases.push_back({With(With(kCollective, "--group", "tp"), "--algorithm", "hierarchical"), "--algorithm"});
  for (std::string flag : {"--tp", "--pp", "--cp", "--ep", "--dp"}) {
    for (std::string v : {"0", "-1", "x"}) cases.push_back({With(kCollective, flag, v), flag});
  }
  cases.push_back({With(kCollective, "--tp", "3"), "--dp"});
  cases.push_back({With(kCollective, "--dp", "3"), "--dp"});
  cases.push_back({With(kCollective, "--ep", "3"), "--ep"});
  cases.push_back({With(kCollective, "--model", "gpt-3"), "--model"});
  cases.push_back({With(With(kCollective, "--model", "gpt3-175b"), "--tp", "7"), "--tp"});
  cases.push_back({Plus(With(kCollective, "--network", "ideal"), "--simulate"), "--simulate"});
  CheckAll(cases);
}

TEST_F(BadInputTest, PlacementOrdersAndFiles) {
  std::vector<Case> cases;
  // Placement: orders and files, on every command that takes one.
  {
    // A valid file for 16 GPUs (tp 8, pp 2): identity, then broken copies.
    std::string ranks;
    for (int g = 0; g < 16; ++g) {
      ranks += std::string(g ? ", " : "") + "{\"tp\": " + std::to_string(g % 8) + ", \"dp\": 0, \"pp\": " +
               std::to_string(g / 8) + ", \"gpu\": " + std::to_string(g) + "}";
    }
    auto file = [&](const std::string& name, const std::string& degrees, const std::string& body) {
      Write(name, "{\"degrees\": " + degrees + ", \"ranks\": [" + body + "]}");
      return Path(name);
    };
    const std::string d16 = "{\"tp\": 8, \"dp\": 1, \"pp\": 2}";
    auto replace_last = [](std::string text, const std::string& from, const std::string& to) {
      return text.replace(text.rfind(from), from.size(), to);
    };
    std::string dup = replace_last(ranks, "\"gpu\": 15", "\"gpu\": 14");
    std::string far = replace_last(ranks, "\"gpu\": 15", "\"gpu\": 16");
    std::string twice = replace_last(ranks, "\"pp\": 1, \"gpu\": 15", "\"pp\": 0, \"gpu\": 15");
    Args small = With(With(With(kTraffic, "--gpus", "16"), "--pp", "2"), "--global-batch-size", "8");
    std::vector<Case> placement = {
        {With(small, "--placement", file("p-dup.json", d16, dup)), "/ranks/15/gpu"},
        {With(small, "--placement", file("p-far.json", d16, far)), "/ranks/15/gpu"},
        {With(small, "--placement", file("p-twice.json", d16, twice)), "/ranks/15"},
        {With(small, "--placement", file("p-short.json", d16, ranks.substr(0, ranks.rfind(", {")))), "/ranks"},
        {With(small, "--placement", file("p-nodeg.json", "{\"tp\": 8}", ranks)), "/degrees"},
        {With(small, "--placement", file("p-zero.json", "{\"tp\": 0, \"dp\": 1, \"pp\": 2}", ranks)), "/degrees/tp"},
        {With(small, "--placement", file("p-ep.json", "{\"tp\": 8, \"dp\": 1, \"pp\": 2, \"ep\": 3}", ranks)),
         "/degrees/ep"},
        {With(small, "--placement", file("p-other.json", "{\"tp\": 4, \"dp\": 2, \"pp\": 2}", ranks)),
         "--placement"},  // rank indices out of range for tp 4
        {With(small, "--placement", file("p-key.json", d16, ranks + ", {\"tp\": 0, \"gpu\": 0, \"xp\": 1}")),
         "/ranks"},
    };
    for (const Case& c : placement) cases.push_back(c);
    // The file is for other degrees than the strategy's.
    Write("p-8.json", "{\"degrees\": {\"tp\": 4, \"dp\": 1, \"pp\": 4}, \"ranks\": [" + [&] {
      std::string r;
      for (int g = 0; g < 16; ++g) {
        r += std::string(g ? ", " : "") + "{\"tp\": " + std::to_string(g % 4) + ", \"dp\": 0, \"pp\": " +
             std::to_string(g / 4) + ", \"gpu\": " + std::to_string(g) + "}";
      }
      return r;
    }() + "]}");
    cases.push_back({With(small, "--placement", Path("p-8.json")), "--placement"});
    cases.push_back({With(With(kSearch, "--gpus", "16"), "--placement", Path("p-8.json")), "--placement"});
    // collective reads --placement as estimate does (kCollective is tp 8 on 128 GPUs).
    cases.push_back({With(kCollective, "--placement", Path("p-8.json")), "--placement"});
    for (const Args& base : {kEstimate, kSearch, kTraffic, kCollective}) {
      for (std::string v : {"tp-tp-dp-pp", "tp-dp", "tp-xp-dp-pp", "", "TP-DP-PP", "tp--dp-pp"}) {
        cases.push_back({With(base, "--placement", v), "--placement"});
      }
      for (const std::string& f : BadFiles()) cases.push_back({With(base, "--placement", f), "--placement"});
    }
  }
  CheckAll(cases);
}

TEST_F(BadInputTest, TrafficAndFailures) {
  std::vector<Case> cases;
  // Traffic: the built network and its outputs.
  for (std::string v : {"ideal", "", "Rail-Only", "clos"}) cases.push_back({With(kTraffic, "--design", v), "--design"});
  for (std::string v : {"0", "63", "x", "4"}) cases.push_back({With(kTraffic, "--radix", v), "--radix"});
  for (const std::string& v : kBadCounts) cases.push_back({With(kTraffic, "--gpus", v), "--gpus"});
  for (std::string flag : {"--tp", "--pp", "--micro-batch-size"}) cases.push_back({Without(kTraffic, flag), flag});
  cases.push_back({With(kTraffic, "--tp", "7"), "--tp"});
  cases.push_back({With(kTraffic, "--heatmap", Path("traffic.jpg")), "--heatmap"});
  cases.push_back({With(kTraffic, "--heatmap", Path("no/such/dir/traffic.png")), "--heatmap"});
  cases.push_back({With(kTraffic, "--export", Path("no/such/dir/pairs.csv")), "--export"});
  cases.push_back({With(kTraffic, "--format", "csv"), "--format"});
  cases.push_back({With(kTraffic, "--gpus", "2097152"), "--gpus"});  // beyond the build limit
  // Failures: the cluster, the failure specs, the Monte Carlo, the catalog, the job.
  for (std::string v : {"ideal", "", "Rail-Only"}) cases.push_back({With(kFailures, "--network", v), "--network"});
  for (const std::string& v : kBadCounts) cases.push_back({With(kFailures, "--gpus", v), "--gpus"});
  cases.push_back({With(kFailures, "--gpus", "2097152"), "--gpus"});
  for (std::string v : {"0", "63", "x", "4"}) cases.push_back({With(kFailures, "--radix", v), "--radix"});
  for (std::string v : {"0", "3", "x", "-8"}) cases.push_back({With(kFailures, "--hb-size", v), "--hb-size"});
  cases.push_back({With(kFailures, "--oversubscription", "0.5"), "--oversubscription"});
  for (std::string v : {"gpu256", "nic-1", "hb32", "switch:spine0", "switch:rail9/leaf0", "switch:rail3/leaf99",
                        "link:gpu0-gpu1", "link:rail0/leaf0", "bogus", "", "gpu1,,gpu2", "gpu1,", "switch:gpu3",
                        "link:rail0/leaf0-rail0/spine0#9"}) {
    cases.push_back({With(kFailuresExplicit, "--fail", v), "--fail"});
  }
  Write("fail-unknown.json", "[\"gpu1\", \"gpu9999\"]");
  Write("fail-number.json", "[\"gpu1\", 7]");
  Write("fail-object.json", "{\"fail\": [\"gpu1\"]}");
  Write("fail-empty-array.json", "[]");
  for (std::string name : {"fail-unknown.json", "fail-number.json", "fail-object.json", "fail-empty-array.json"}) {
    cases.push_back({With(kFailures, "--fail-file", Path(name)), "--fail-file"});
  }
  for (const std::string& file : BadFiles()) cases.push_back({With(kFailures, "--fail-file", file), "--fail-file"});
  cases.push_back({With(kFailuresExplicit, "--fail-file", Path("fail-unknown.json")), "--fail-file"});
  for (std::string v : {"0", "-1", "x", "10000001"}) cases.push_back({With(kFailures, "--trials", v), "--trials"});
  for (std::string v : {"0", "-3", "x", "5000", "1e999"}) cases.push_back({With(kFailures, "--days", v), "--days"});
  for (std::string v : {"-1", "x", "1.5"}) cases.push_back({With(kFailures, "--seed", v), "--seed"});
  for (std::string v : {"0", "x", "-1min", "400d", "0.1s", "5parsecs"}) {
    cases.push_back({With(kFailures, "--checkpoint-interval", v), "--checkpoint-interval"});
  }
  for (std::string v : {"x", "-1s", "40d", "5 weeks"}) cases.push_back({With(kFailures, "--restart-time", v), "--restart-time"});
  for (std::string v : {"bogus", "any", ""}) cases.push_back({With(kFailures, "--spare-policy", v), "--spare-policy"});
  for (std::string v : {"1", "0.2", "x", "-0.9"}) {
    cases.push_back({With(kFailures, "--target-availability", v), "--target-availability"});
  }
  for (const std::string& file : BadFiles()) {
    cases.push_back({With(kFailures, "--failure-catalog", file), "--failure-catalog"});
  }
  cases.push_back({With(kFailures, "--failure-catalog", "h100-flet"), "--failure-catalog"});
  cases.push_back({With(kFailures, "--failure-catalog", "default"), "--failure-catalog"});
  for (auto [key, value] : {std::pair{"rate_per_year", "-1"}, {"rate_per_year", "\"often\""}, {"rate_per_year", "1e9"},
                            {"mttr_hours", "0"}, {"mttr_hours", "-4"}, {"gpus_per_host", "0"},
                            {"gpus_per_host", "2.5"}, {"port_cost_usd", "-1"}}) {
    cases.push_back({With(kFailures, "--failure-catalog", Mutated("h100-fleet", key, value)), "--failure-catalog"});
  }
  cases.push_back({With(kFailures, "--format", "csv"), "--format"});
  cases.push_back({With(kFailures, "--tp", "8"), "--tp"});
  cases.push_back({With(kFailures, "--model", "gpt3-175b"), "--tp"});
  Args job = With(With(With(With(kFailures, "--model", "megatron-1.7b"), "--tp", "8"), "--pp", "1"),
                  "--micro-batch-size", "1");
  cases.push_back({job, "--global-batch-size"});
  cases.push_back({With(job, "--model", "gpt-9"), "--model"});
  cases.push_back({With(With(job, "--global-batch-size", "64"), "--tp", "7"), "--tp"});
  cases.push_back({With(With(job, "--global-batch-size", "0"), "--tp", "8"), "--global-batch-size"});
  CheckAll(cases);
}

TEST_F(BadInputTest, ReportCompareCalibrateAndSweep) {
  std::vector<Case> cases;
  // Report and compare's scenario printing; search's idle GPUs.
  Write("plain-file", "x");
  cases.push_back({{"report", "--out", Path("plain-file")}, "--out"});
  cases.push_back({{"report", "--out", Path("plain-file") + "/sub"}, "--out"});
  cases.push_back({{"report", "--out", ""}, "--out"});
  cases.push_back({{"report"}, "--out"});
  cases.push_back({{"report", "--out", Path("r1"), "--scenario", "nosuch"}, "--scenario"});
  cases.push_back({{"report", "--out", Path("r2"), "--failure-catalog", Path("garbage.json")}, "--failure-catalog"});
  cases.push_back({{"report", "--out", Path("r3"), "--catalog", "nosuch"}, "--catalog"});
  for (const std::string& file : BadFiles()) {
    cases.push_back({{"compare", "--print-scenario", "--scenario", file}, "--scenario"});
  }
  for (std::string v : {"-1", "x", "1.5", "1000000"}) {
    cases.push_back({With(kSearch, "--allow-idle-gpus", v), "--allow-idle-gpus"});
  }
  for (const Args& base : {Args{"compare"}, Args{"compare", "--print-scenario"}, Args{"report", "--out", Path("r4")}}) {
    for (std::string v : {"0", "-1", "x", "2097152"}) cases.push_back({With(base, "--gpus", v), "--gpus"});
    for (std::string v : {"3", "8,x", "8,,256", "0"}) cases.push_back({With(base, "--hb-sizes", v), "--hb-sizes"});
    for (std::string v : {"63", "64,x", "1"}) cases.push_back({With(base, "--radixes", v), "--radixes"});
    cases.push_back({With(base, "--port-speed", "fast"), "--port-speed"});
    cases.push_back({With(base, "--global-batch-sizes", "0"), "--global-batch-sizes"});
    cases.push_back({With(base, "--moe-global-batch-size", "-5"), "--moe-global-batch-size"});
    cases.push_back({With(base, "--moe-max-domains", "x"), "--moe-max-domains"});
  }
  cases.push_back({{"compare", "--model", "gpt-9"}, "--model"});
  cases.push_back({{"compare", "--moe-model", "gpt3-175b"}, "--moe-model"});
  cases.push_back({{"compare", "--system", "dgx-z100"}, "--system"});
  // Calibrate: its flags, unreadable and malformed nccl-tests and step files.
  for (std::string v : {"-0.1", "0.95", "1", "x", "nan", ""}) cases.push_back({With(kCalibrate, "--holdout", v), "--holdout"});
  for (std::string v : {"csv", "xml"}) cases.push_back({With(kCalibrate, "--format", v), "--format"});
  cases.push_back({With(kCalibrate, "--system", "dgx-z100"), "--system"});
  cases.push_back({Without(kCalibrate, "--nccl-tests"), "--nccl-tests"});
  cases.push_back({With(kCalibrate, "--out", Path("no/such/dir/c.json")), "--out"});
  for (const std::string& f : BadFiles()) {
    cases.push_back({With(kCalibrate, "--nccl-tests", f), f == "/dev/null" ? f : f.substr(dir_.size())});
    cases.push_back({With(kCalibrate, "--steps", f), f == "/dev/null" ? f : f.substr(dir_.size())});
  }
  const std::string bad = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/bad/";
  cases.push_back({With(kCalibrate, "--nccl-tests", bad + "truncated_all_reduce_perf.txt"), "perf.txt:83: "});
  cases.push_back({With(kCalibrate, "--nccl-tests", bad + "garbled_all_gather_perf.txt"), "perf.txt:77: time"});
  cases.push_back({With(kCalibrate, "--nccl-tests", bad + "garbled.csv"), "garbled.csv:7: size_mib"});
  Write("broadcast_perf.txt", "#  Rank  0 Group  0 Pid 1 on h device 0 [0000:04:00] GPU\n"
                              "#  Rank  1 Group  0 Pid 1 on h device 1 [0000:05:00] GPU\n"
                              "8 2 float none 0 1.0 0.01 0.01 0 1.0 0.01 0.01 0\n");
  cases.push_back({With(kCalibrate, "--nccl-tests", Path("broadcast_perf.txt")), "--nccl-tests"});
  const std::string steps_header = "model,gpus,global-batch-size,tp,pp,micro-batch-size,step_time_s\n";
  for (auto [name, text, field] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"s-column.csv", "model,gpus,tpp\n", "s-column.csv:1: unknown column"},
           {"s-tp.csv", steps_header + "gpt3-175b,56,64,7,8,1,9\n", "s-tp.csv:2: tp"},
           {"s-time.csv", steps_header + "gpt3-175b,64,64,8,8,1,-9\n", "s-time.csv:2: step_time_s"},
           {"s-model.csv", steps_header + "gpt-9,64,64,8,8,1,9\n", "s-model.csv:2: model"},
           {"s-gpus.csv", steps_header + "megatron-1.7b,12,12,1,1,1,9\n", "s-gpus.csv:2: gpus"},
           {"s-short.csv", steps_header + "gpt3-175b,64,64,8\n", "s-short.csv:2: expected 7 cells"}}) {
    Write(name, text);
    cases.push_back({With(kCalibrate, "--steps", Path(name)), field});
  }
  // Sweep: the config file, each of its fields, and the flags.
  Write("sweep.json", "{\"study\": \"network\", \"fixed\": {\"design\": \"rail-only\", \"hb_size\": 8, "
                      "\"radix\": 64}, \"axes\": {\"gpus\": [64, 128]}}");
  const Args sweep = {"sweep", "--config", Path("sweep.json"), "--out", Path("rows.jsonl")};
  for (const std::string& f : BadFiles()) cases.push_back({With(sweep, "--config", f), "--config"});
  for (auto [text, field] : std::vector<std::pair<std::string, std::string>>{
           {"{}", "/study"},
           {"{\"study\": \"estimat\"}", "/study"},
           {"{\"study\": \"network\", \"axes\": {\"radixx\": [64]}}", "/axes/radixx"},
           {"{\"study\": \"network\", \"axes\": {\"gpus\": [64, -1]}}", "/axes/gpus/1"},
           {"{\"study\": \"network\", \"axes\": {\"gpus\": 64}}", "/axes/gpus"},
           {"{\"study\": \"network\", \"axes\": {\"gpus\": {\"from\": 64}}}", "/axes/gpus/to"},
           {"{\"study\": \"network\", \"axes\": {\"gpus\": {\"from\": 8, \"to\": 64, \"times\": 1}}}",
            "/axes/gpus/times"},
           {"{\"study\": \"network\", \"fixed\": {\"port_speed\": \"fast\"}}", "/fixed/port_speed"},
           {"{\"study\": \"network\", \"fixed\": {\"design\": \"rail-only\"}}", "/fixed"},
           {"{\"study\": \"network\", \"fixed\": [1]}", "/fixed"},
           {"{\"study\": \"network\", \"zip\": [[\"gpus\"]]}", "/zip/0"},
           {"{\"study\": \"network\", \"study2\": 1}", "/study2"},
           {"{\"study\": \"estimate\", \"fixed\": {\"model\": \"gpt-9\", \"system\": \"dgx-h100\", \"gpus\": 8, "
            "\"global_batch_size\": 8, \"tp\": 8, \"pp\": 1, \"micro_batch_size\": 1}}", "/fixed/model"},
           {"{\"study\": \"estimate\", \"fixed\": {\"sequence_parallel\": 1}}", "/fixed/sequence_parallel"},
           {"{\"study\": \"search\", \"axes\": {\"system\": [\"dgx-h100\", \"dgx-z\"]}, \"fixed\": "
            "{\"model\": \"gpt3-175b\", \"gpus\": 8, \"global_batch_size\": 8}}", "/axes/system/1"},
           {"{\"study\": \"failures\", \"fixed\": {\"network\": \"rail-only\", \"gpus\": 64, "
            "\"checkpoint_interval\": \"5 parsecs\"}}", "/fixed/checkpoint_interval"},
           {"{\"study\": \"failures\", \"fixed\": {\"network\": \"rail-only\", \"gpus\": 64, "
            "\"restart_time\": \"40d\"}}", "/fixed/restart_time"},
           {"{\"study\": \"failures\", \"fixed\": {\"network\": \"rail-only\", \"gpus\": 64, "
            "\"failure_catalog\": \"h200-fleet\"}}", "/fixed/failure_catalog"},
           {"{\"study\": \"collective\", \"fixed\": {\"system\": \"dgx-h100\", \"gpus\": 64, "
            "\"op\": \"allreduce\", \"bytes\": \"1MB\", \"group\": \"dp\"}}", "/fixed/op"},
           {"{\"study\": \"collective\", \"fixed\": {\"system\": \"dgx-h100\", \"gpus\": 64, "
            "\"op\": \"all-reduce\", \"group\": \"dp\"}}", "bytes"},
       }) {
    const std::string name = "sweep-" + std::to_string(counter_++) + ".json";
    Write(name, text);
    cases.push_back({With(sweep, "--config", Path(name)), field});
  }
  for (std::string v : {"2/2", "x", "1/0", "-1/2", "1/", "/2", "0/2/3"}) cases.push_back({With(sweep, "--shard", v), "--shard"});
  for (std::string v : {"0", "-1", "x", "2000"}) cases.push_back({With(sweep, "--threads", v), "--threads"});
  cases.push_back({With(sweep, "--format", "json"), "--format"});
  cases.push_back({Without(sweep, "--out"), "--out"});
  cases.push_back({Without(sweep, "--config"), "--config"});
  cases.push_back({With(sweep, "--out", Path("no/such/dir/rows.jsonl")), "--out"});
  Write("other-sweep.jsonl", "{\"index\":0,\"points\":5,\"point\":{}}\n");
  cases.push_back({Plus(With(sweep, "--out", Path("other-sweep.jsonl")), "--resume"), "--resume"});
  cases.push_back({{"sweep", "--merge", Path("missing.jsonl")}, "--merge"});
  cases.push_back({{"sweep", "--merge", Path("other-sweep.jsonl"), "--config", Path("sweep.json")}, "--merge"});
  CheckAll(cases);
}

TEST_F(BadInputTest, QuietAndTheTopLevel) {
  std::vector<Case> cases;
  // --quiet is a switch on every subcommand: a value it cannot read is named.
  for (const Args& base : {Args{"compare"}, kNetwork, kCost, Args{"report", "--out", Path("r5")}, kEstimate, kSearch,
                           kTraffic, kAllToAll, kCollective, kFailures, kCalibrate, Args{"presets"},
                           Args{"sweep", "--config", Path("sweep.json")}}) {
    cases.push_back({Plus(base, "--quiet=bogus"), "--quiet"});
  }
  // Top level.
  cases.push_back({{}, "command"});
  cases.push_back({{"netwrok"}, "network"});
  cases.push_back({{"--bogus"}, "--bogus"});

  CheckAll(cases);
}


// The parser's rules, one each for every command: unknown flags get
// the nearest known one, a flag takes its value (not the next flag, not ""),
// single-valued flags come once, quantities carry units, every flag a
// command accepts is read, JSON keys come once, names have no control
// characters, and work too large for this machine is refused before it
// starts. Each case exits 2 with one line naming the field, in seconds.
TEST_F(BadInputTest, OneRuleForEveryFlagAndEveryFile) {
  std::vector<Case> cases;
  for (const Args& base : {kNetwork, kCost, kEstimate, kSearch, kTraffic, kAllToAll, kCollective, kFailures,
                           Args{"compare"}, Args{"report", "--out", Path("r6")}, Args{"presets"}}) {
    cases.push_back({Plus(Plus(base, "--fromat"), "json"), "did you mean '--format'?"});
    cases.push_back({Plus(base, "--format"), "--format: expected a value after it"});
    cases.push_back({With(base, "--format", ""), "--format: expected a value, got an empty one"});
    cases.push_back({Plus(Plus(With(base, "--format", "json"), "--format"), "table"), "--format: given twice"});
  }
  cases.push_back({Plus(Plus(kNetwork, "--radx"), "64"), "--radx: unknown flag for 'railsim network' (did you mean '--radix'?)"});
  cases.push_back({Plus(Plus(kEstimate, "--micro-batch"), "1"), "did you mean '--micro-batch-size'?"});
  cases.push_back({{"network", "--design", "rail-only", "--gpus", "--hb-size", "8", "--radix", "64"},
                   "--gpus: expected a value after it, got the flag --hb-size"});
  cases.push_back({Plus(Plus(kNetwork, "--design"), "fat-tree"), "--design: given twice ('rail-only' and 'fat-tree')"});
  cases.push_back({Plus(Plus(kNetwork, "--gpus"), "8"), "--gpus: given twice"});
  for (std::string flag : {"--export", "--radix"}) cases.push_back({With(kNetwork, flag, ""), flag});
  cases.push_back({With(kFailures, "--trials", ""), "--trials"});
  cases.push_back({{"compare", "--model", ""}, "--model"});
  cases.push_back({{"help", "netwrok"}, "did you mean 'network'?"});
  // Quantities carry their unit; nothing below a byte.
  cases.push_back({With(kAllToAll, "--bytes-per-pair", "1e-300"), "--bytes-per-pair"});
  cases.push_back({With(kAllToAll, "--bytes-per-pair", "1024.5"), "--bytes-per-pair: expected a value with its unit"});
  cases.push_back({With(With(kAllToAll, "--hb-bw", "300"), "--nic-bw", "200Gbps"), "--hb-bw: expected a value with its unit"});
  cases.push_back({With(kCost, "--port-speed", "400"), "--port-speed: expected a value with its unit"});
  cases.push_back({With(kCollective, "--bytes", "0.5B"), "--bytes"});
  // Flags a command reads only in some cases are read in all.
  cases.push_back({With(kCollective, "--micro-batch-size", "NaN"), "--micro-batch-size"});
  cases.push_back({With(kCollective, "--moe-alltoall", "bogus"), "--moe-alltoall"});
  cases.push_back({With(kCollective, "--chunks", "1"), "--chunks"});
  cases.push_back({With(kFailures, "--recompute", "bogus"), "--recompute"});
  cases.push_back({With(kFailures, "--vp", "bogus"), "--vp"});
  cases.push_back({With(kFailures, "--precision", "fp6"), "--precision"});
  cases.push_back({With(kFailures, "--num-layers-at-end-in-bf16", "-2"), "--num-layers-at-end-in-bf16"});
  // JSON keys once, no NUL after the document, names without control characters.
  std::string model = RunRailsim({"presets", "show", "megatron-1.7b"}).out;
  Write("twice.json", "{\"num_layers\": 2," + model.substr(model.find('{') + 1));
  Write("nul.json", model + std::string(1, '\0'));
  std::string escaped = model;
  escaped.replace(escaped.find("megatron-1.7b"), 13, "bad\\u001b[31mname");
  Write("control.json", escaped);
  for (auto [file, field] : {std::pair{"twice.json", "the key 'num_layers' appears twice"}, {"nul.json", "NUL byte"},
                             {"control.json", "/name: expected a name without control characters"}}) {
    cases.push_back({With(kEstimate, "--model", Path(file)), field});
  }
  // A printed scenario is one --scenario accepts: it is checked first.
  cases.push_back({{"compare", "--print-scenario", "--radixes", "4"}, "radix"});
  cases.push_back({{"compare", "--print-scenario", "--system", "nope"}, "--system"});
  cases.push_back({{"compare", "--print-scenario", "--catalog", "bogus"}, "--catalog"});
  // Every design of a scenario is checked before any is built (these died
  // with SIGFPE in the builder), and a system's HB domain must divide N.
  for (Args extra : {Args{"--gpus", "131072"}, Args{"--radixes", "32"}, Args{"--gpus", "98304"},
                     Args{"--radixes", "48"}, Args{"--radixes", "50"}}) {
    for (Args base : {Args{"compare"}, Args{"report", "--out", Path("r7")}}) {
      base.insert(base.end(), extra.begin(), extra.end());
      cases.push_back({base, "switch tiers"});
    }
  }
  cases.push_back({{"compare", "--system", "gb200-nvl72"}, "the nearest cluster sizes it divides are 32,760 and 32,832"});
  // Work too large for this machine, refused up front.
  cases.push_back({{"cost", "--gpus", "67108864", "--max-gpus", "67108864", "--hb-size", "8", "--radix", "1024"},
                   "GB"});
  // Every part failing 1000 times a year, one kind repaired in 1e5 hours.
  std::string catalog = Slurp(Mutated("h100-fleet", "mttr_hours", "100000"));
  for (size_t at = catalog.find("\"rate_per_year\":"); at != std::string::npos;
       at = catalog.find("\"rate_per_year\":", at + 1)) {
    const size_t start = catalog.find(':', at) + 1, end = catalog.find_first_of(",\n}", start);
    catalog.replace(start, end - start, " 1000");
  }
  Write("hot-catalog.json", catalog);
  cases.push_back({With(With(kFailures, "--failure-catalog", Path("hot-catalog.json")), "--trials", "100"),
                   "--failure-catalog"});
  cases.push_back({With(With(kFailures, "--trials", "10000000"), "--days", "3650"), "--trials"});

  std::printf("  %zu bad inputs\n", cases.size());
  CheckAll(cases);
}

// An unwritable stderr or stdout still ends in exit 2 (it aborted with
// SIGABRT when the error print itself threw).
TEST(BadOutputTest, ClosedOrFullStreamsExitTwo) {
  const std::string binary = RAILSIM_BINARY;
  RunResult full = RunProgram(
      "sh", {"-c", binary + " network --design rail-only --gpus 100 --hb-size 8 --radix 64 2>/dev/full; echo $?"});
  EXPECT_EQ("2\n", full.out);
  RunResult closed = RunProgram("sh", {"-c", binary + " presets 2>&- >/dev/full; echo $?"});
  EXPECT_EQ("2\n", closed.out);
}


// compare's scenario axes over random small and large values (a fixed seed):
// every run ends in exit 0 or 2, never a signal, and stays under 4 GB of
// address space (prlimit), so no value inside the accepted ranges can
// crash the builder or run away with memory.
TEST_F(BadInputTest, CompareScenarioAxesNeverCrashOrRunAway) {
  const int64_t gpus[] = {1, 2, 7, 8, 72, 100, 4096, 30000, 32768, 65536, 98304, 131072, 1048576};
  const int hb[] = {1, 2, 3, 8, 72, 256, 4096, 32768};
  const int radixes[] = {2, 4, 6, 16, 32, 48, 50, 64, 128, 1024, 65536};
  const char* speeds[] = {"100Gbps", "400Gbps", "800Gbps", "1.6Tbps"};
  uint64_t state = 20261203;
  auto pick = [&state](size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return size_t((state >> 33) % n);
  };
  int exits[3] = {0, 0, 0};
  for (int i = 0; i < 40; ++i) {
    const int64_t n = gpus[pick(std::size(gpus))];
    std::vector<int> ks = {hb[pick(std::size(hb))]};
    if (pick(2)) ks.push_back(hb[pick(std::size(hb))]);
    std::vector<int> rs = {radixes[pick(std::size(radixes))]};
    if (pick(2)) rs.push_back(radixes[pick(std::size(radixes))]);
    std::string scenario = fmt::format(
        "{{\"name\": \"axes\", \"gpus\": {}, \"hb_domain_sizes\": [{}], \"radixes\": [{}], \"port_speed\": \"{}\"}}",
        n, fmt::join(ks, ", "), fmt::join(rs, ", "), speeds[pick(std::size(speeds))]);
    const std::string file = fmt::format("axes-{}.json", i);
    Write(file, scenario);
#if defined(RAILSIM_SANITIZED)
    // AddressSanitizer maps terabytes of shadow memory: no address-space cap.
    RunResult r = RunRailsim({"compare", "--scenario", Path(file), "--format", "json", "--quiet"});
#else
    RunResult r = RunProgram("prlimit", {"--as=4000000000", RAILSIM_BINARY, "compare", "--scenario", Path(file),
                                         "--format", "json", "--quiet"});
#endif
    EXPECT_TRUE(r.status == 0 || r.status == 2) << scenario << "\nexit " << r.status << "\n" << r.err;
    if (r.status == 2) {
      EXPECT_EQ(1, LineCount(r.err)) << scenario << "\n" << r.err;
    }
    ++exits[r.status == 0 ? 0 : r.status == 2 ? 1 : 2];
  }
  std::printf("  40 scenarios: %d ran, %d refused, %d other\n", exits[0], exits[1], exits[2]);
  EXPECT_GT(exits[0], 0);
  EXPECT_GT(exits[1], 0);
}

// Outputs onto what they must not destroy: /dev/full and links to it (the
// reason, whole, and the device stays a device), an input of the command
// (refused before any work, the input unchanged), two outputs on one file,
// a link to nothing, a socket, "-" where it cannot be, and a folder that
// cannot be one. Each exits 2 with one line naming the output's flag.
TEST_F(BadInputTest, OutputsNeverReplaceDevicesInputsOrEachOther) {
  std::vector<Case> cases;
  const std::string full = ": cannot write '/dev/full': No space left on device";
  ASSERT_EQ(0, ::symlink("/dev/full", Path("full.csv").c_str()));
  ASSERT_EQ(0, ::symlink("/dev/full", Path("full.png").c_str()));
  cases.push_back({With(kCalibrate, "--out", "/dev/full"), "--out" + full});
  cases.push_back({With(kEstimate, "--trace", "/dev/full"), "--trace" + full});
  cases.push_back({With(kTraffic, "--export", "/dev/full"), "--export" + full});
  cases.push_back({Plus(With(kAllToAll, "--export-links", "/dev/full"), "--simulate"), "--export-links" + full});
  cases.push_back({With(kNetwork, "--export", Path("full.csv")),
                   "--export: cannot write '" + Path("full.csv") + "': No space left on device"});
  cases.push_back({With(kTraffic, "--heatmap", Path("full.png")),
                   "--heatmap: cannot write '" + Path("full.png") + "': No space left on device"});
  Write("sweep.json", "{\"study\": \"network\", \"fixed\": {\"design\": \"rail-only\", \"hb_size\": 8, "
                      "\"radix\": 64}, \"axes\": {\"gpus\": [64, 128]}}");
  const Args sweep = {"sweep", "--config", Path("sweep.json")};
  cases.push_back({With(sweep, "--out", "/dev/full"), "--out" + full});
  // Outputs equal to inputs: by path, through a link, through a hard link.
  ASSERT_EQ(0, ::symlink(Path("sweep.json").c_str(), Path("config-link.json").c_str()));
  ASSERT_EQ(0, ::link(Path("sweep.json").c_str(), Path("config-hard.json").c_str()));
  for (const std::string& out : {Path("sweep.json"), Path("config-link.json"), Path("config-hard.json")}) {
    cases.push_back({With(sweep, "--out", out),
                     "--out: '" + out + "' is an input of this command (--config); an output must not replace it"});
  }
  const std::string p5 = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/p5-8nodes/";
  Write("steps.csv", "model,gpus,global-batch-size,tp,pp,micro-batch-size,step_time_s\n"
                     "gpt3-175b,64,64,8,8,1,9\n");
  Write("nccl.txt", Slurp(p5 + "all_reduce_perf.txt"));
  cases.push_back({With(With(kCalibrate, "--steps", Path("steps.csv")), "--out", Path("steps.csv")),
                   "--out: '" + Path("steps.csv") + "' is an input of this command (--steps)"});
  cases.push_back({With(With(kCalibrate, "--nccl-tests", Path("nccl.txt")), "--out", Path("nccl.txt")),
                   "is an input of this command (--nccl-tests)"});
  Write("rows.jsonl", "{\"index\":0,\"points\":2,\"point\":{}}\n");
  cases.push_back({{"sweep", "--merge", Path("rows.jsonl"), "--out", Path("rows.jsonl")},
                   "--out: '" + Path("rows.jsonl") + "' is an input of this command (--merge)"});
  cases.push_back({{"sweep", "--merge", Path("rows.jsonl"), Path("sweep.json"), "--out", Path("sweep.json")},
                   "is an input of this command (--merge)"});
  Write("model.json", Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/models/megatron-1.7b.json"));
  cases.push_back({With(With(kEstimate, "--model", Path("model.json")), "--trace", Path("model.json")),
                   "--trace: '" + Path("model.json") + "' is an input of this command (--model)"});
  cases.push_back({With(With(kEstimate, "--model", "hf:" + Path("model.json")), "--trace", Path("model.json")),
                   "is an input of this command (--model)"});
  // A model named inside a sweep's config is an input too (found when read).
  Write("sweep-model.json", "{\"study\": \"estimate\", \"fixed\": {\"model\": \"" + Path("model.json") +
                                "\", \"system\": \"dgx-h100\", \"gpus\": 8, \"global_batch_size\": 8, \"tp\": 8, "
                                "\"pp\": 1, \"micro_batch_size\": 1}}");
  cases.push_back({{"sweep", "--config", Path("sweep-model.json"), "--out", Path("model.json")},
                   "--out: '" + Path("model.json") + "' is an input of this command (/fixed/model)"});
  // Two outputs on one file.
  cases.push_back({With(With(kEstimate, "--trace", Path("t.png")), "--trace-png", Path("t.png")),
                   "--trace-png: '" + Path("t.png") + "' is also the --trace output; each output needs its own file"});
  cases.push_back({With(With(kEstimate, "--trace", Path("t.png")), "--trace-png", dir_ + "/./t.png"),
                   "is also the --trace output"});
  cases.push_back({With(With(kTraffic, "--export", "-"), "--heatmap", "-"), "--heatmap: '-' is also the --export"});
  // What is never an output.
  ASSERT_EQ(0, ::symlink(Path("nothing-here.json").c_str(), Path("dangling.json").c_str()));
  cases.push_back({With(kCalibrate, "--out", Path("dangling.json")), "--out: '" + Path("dangling.json") +
                                                                         "' is a symbolic link to nothing"});
  cases.push_back({With(kEstimate, "--trace", Path("adir.json")), "--trace: expected a file path, got directory"});
  cases.push_back({{"report", "--out", "-"},
                   "--out: expected a directory name, got '-' (a folder cannot be standard output)"});
  cases.push_back({{"report", "--out", "/dev/null"},
                   "--out: cannot make the directory '/dev/null': '/dev/null' is not a directory"});
  cases.push_back({Plus(With(sweep, "--out", "-"), "--resume"),
                   "--resume: expected a file to resume, got '-' (standard output)"});
  CheckAll(cases);

  EXPECT_TRUE(S_ISCHR(ModeOf("/dev/full")));
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("full.csv"))));
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("config-link.json"))));
  EXPECT_TRUE(S_ISLNK(ModeOf(Path("dangling.json"))));
  EXPECT_FALSE(PathExists(Path("nothing-here.json")));
  EXPECT_FALSE(PathExists(Path("t.png")));
  EXPECT_EQ(0u, Slurp(Path("sweep.json")).find("{\"study\": \"network\""));
  EXPECT_EQ(0u, Slurp(Path("steps.csv")).find("model,gpus,"));
  EXPECT_EQ(Slurp(p5 + "all_reduce_perf.txt"), Slurp(Path("nccl.txt")));
  EXPECT_EQ("{\"index\":0,\"points\":2,\"point\":{}}\n", Slurp(Path("rows.jsonl")));
  EXPECT_EQ(Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/models/megatron-1.7b.json"), Slurp(Path("model.json")));
  EXPECT_FALSE(PathExists("-"));
}

// A socket and a block device are refused; the device node is made by
// mknod in the test's folder (skipped where mknod is not allowed).
TEST_F(BadInputTest, OutputsOntoSocketsAndDisksAreRefused) {
  std::vector<Case> cases;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string socket_path = Path("s.json");
  ASSERT_LT(socket_path.size(), sizeof address.sun_path);
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(0, ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address));
  cases.push_back({With(kCalibrate, "--out", socket_path),
                   "--out: '" + socket_path + "' is a socket; expected a file, a character device or a FIFO"});
  const bool disk = ::mknod(Path("disk.json").c_str(), S_IFBLK | 0600, makedev(240, 0)) == 0;
  if (disk) {
    cases.push_back({With(kCalibrate, "--out", Path("disk.json")),
                     "--out: '" + Path("disk.json") + "' is a block device"});
  }
  CheckAll(cases);
  EXPECT_TRUE(S_ISSOCK(ModeOf(socket_path)));
  if (disk) {
    EXPECT_TRUE(S_ISBLK(ModeOf(Path("disk.json"))));
  }
  ::close(fd);
  if (!disk) GTEST_SKIP() << "the socket is checked; mknod is not allowed here for the block device";
}

// calibrate refuses what would turn into 0, infinity or a misleading fit,
// naming the file and line; a model file that leaves out architecture fields
// gives its warning only when nothing is refused; --threads takes one range.
TEST_F(BadInputTest, CalibrateRefusesNumbersThatBreakTheFit) {
  std::vector<Case> cases;
  const std::string ranks = "#  Rank  0 Group  0 Pid 1 on a device 0 [0000:04:00] GPU\n"
                            "#  Rank  1 Group  0 Pid 1 on b device 0 [0000:04:00] GPU\n";
  const std::string row = "1024 256 float sum -1 10.0 0.10 0.20 0 10.0 0.10 0.20 0\n";
  for (auto [name, text, field] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"tiny_all_reduce_perf.txt", ranks + "1024 256 float sum -1 4.9e-324 0.1 0.2 0 10 0.1 0.2 0\n",
            "tiny_all_reduce_perf.txt:3: time (out-of-place, us): expected a number in [0.001, 1e+10], got "
            "'4.9e-324'"},
           {"slow_all_reduce_perf.txt", ranks + "1024 256 float sum -1 1e30 0.1 0.2 0 10 0.1 0.2 0\n",
            "slow_all_reduce_perf.txt:3: time (out-of-place, us)"},
           {"wrong_all_reduce_perf.txt", ranks + "1024 256 float sum -1 10 0.1 0.2 3 10 0.1 0.2 0\n",
            "wrong_all_reduce_perf.txt:3: #wrong (out-of-place): expected 0, got 3"},
           {"count_all_reduce_perf.txt", ranks + "1024 255 float sum -1 10 0.1 0.2 0 10 0.1 0.2 0\n",
            "count_all_reduce_perf.txt:3: count"},
           {"twice_all_reduce_perf.txt", ranks + row + "1024 256 float sum -1 12.0 0.1 0.2 0 12 0.1 0.2 0\n",
            "twice_all_reduce_perf.txt:4: size 1024 bytes appears twice"},
           {"mixed_perf.txt", "# Collective test starting: all_reduce_perf\n" + ranks + row +
                                  "# Collective test starting: all_gather_perf\n",
            "mixed_perf.txt:5: a second collective"},
           {"big.csv", "op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,8,1e308,5\n", "big.csv:2: size_bytes"},
           {"mib.csv", "op,nodes,gpus,size_mib,oop_time_us\nall_reduce,1,8,1e308,5\n", "mib.csv:2: size_mib"},
           {"algbw.csv", "op,nodes,gpus,size_bytes,oop_algbw_GBps\nall_reduce,1,8,1024,4.9e-324\n",
            "algbw.csv:2: oop_algbw_GBps"},
       }) {
    Write(name, text);
    cases.push_back({With(kCalibrate, "--nccl-tests", Path(name)), field});
  }
  Write("s-tiny.csv", "model,gpus,global-batch-size,tp,pp,micro-batch-size,step_time_s\n"
                      "gpt3-175b,64,64,8,8,1,4.9e-324\n");
  cases.push_back({With(kCalibrate, "--steps", Path("s-tiny.csv")), "s-tiny.csv:2: step_time_s"});
  // One error line, no warning before it, for a model file without swiglu & co.
  Write("gpt2-shaped.json", RunRailsim({"presets", "show", "megatron-1.7b"}).out);
  cases.push_back({With(With(kEstimate, "--model", Path("gpt2-shaped.json")), "--tp", "3"), "--dp"});
  cases.push_back({With(With(kSearch, "--model", Path("gpt2-shaped.json")), "--top", "0"), "--top"});
  cases.push_back({With(With(kTraffic, "--model", Path("gpt2-shaped.json")), "--pp", "5"), "--dp"});
  Args failures = With(With(kFailuresExplicit, "--model", Path("gpt2-shaped.json")), "--fail", "gpu99999");
  for (auto [flag, value] : {std::pair{"--tp", "8"}, {"--pp", "1"}, {"--micro-batch-size", "1"},
                             {"--global-batch-size", "32"}}) {
    failures = With(failures, flag, value);
  }
  cases.push_back({failures, "--fail"});
  // --threads: the same limit, 1024, on every command that takes it.
  for (const Args& base : {kSearch, kAllToAll, kCollective}) cases.push_back({With(base, "--threads", "1025"),
                                                                              "--threads: expected an integer in "
                                                                              "[1, 1024], got 1025"});
  CheckAll(cases);
}

}  // namespace
}  // namespace railsim::testutil

namespace railsim::testutil {
namespace {

// Row files that are not all rows of the sweep: --merge and --resume refuse
// them on one line naming the file and line (they were dropped in silence,
// or the file rewritten without its header); and compare's scenario
// spellings and failures' device names that no design has.
TEST_F(BadInputTest, SweepRowFilesAndScenarioNamesAreRefusedOnOneLine) {
  Write("sweep.json", R"({"study": "network", "fixed": {"design": "rail-only", "radix": 64, "hb_size": 8},
                          "axes": {"gpus": [64, 128]}})");
  const std::string row0 = R"({"index":0,"points":2,"point":{"gpus":64},"results":{"tiers":1}})" "\n";
  const std::string row0b = R"({"index":0,"points":2,"point":{"gpus":64},"results":{"tiers":2}})" "\n";
  Write("garbage.jsonl", row0 + "not a row\n");
  Write("negative.jsonl", R"({"index":-1,"points":2,"point":{},"results":{}})" "\n");
  Write("beyond.jsonl", R"({"index":2,"points":2,"point":{},"results":{}})" "\n");
  Write("twice.jsonl", row0 + row0b);
  Write("csv.csv", "index,points,gpus,tiers,error\n0,2,64,1,\n");
  const Args sweep = {"sweep", "--config", Path("sweep.json"), "--resume", "--out"};
  std::vector<Case> cases;
  for (const char* file : {"garbage.jsonl", "negative.jsonl", "beyond.jsonl", "twice.jsonl"}) {
    cases.push_back({{"sweep", "--merge", Path(file)}, std::string(file) + ":"});
    Args resume = sweep;
    resume.push_back(Path(file));
    cases.push_back({resume, std::string(file) + ":"});
  }
  Args resume_csv = sweep;
  resume_csv.push_back(Path("csv.csv"));
  cases.push_back({resume_csv, "--resume"});
  Write("row.jsonl", row0);
  cases.push_back({{"sweep", "--merge", Path("row.jsonl"), Path("csv.csv")}, "csv.csv:1"});
  cases.push_back({{"compare", "--moe-model", "nothing"}, "--moe-model"});
  cases.push_back({{"failures", "--gpus", "256", "--radix", "16", "--fail", "switch:nowhere"}, "--fail"});
  CheckAll(cases);
}

// --expert-tensor-parallel-size on every command that takes it: its value,
// the experts' width, MoE parallel folding's rule (ep x etp dividing tp x cp x
// dp), Megatron-Core's order checks, dense models, and search's any/tp.
TEST_F(BadInputTest, ExpertTensorParallelSizeOnEveryCommandThatTakesIt) {
  std::vector<Case> cases;
  const std::string etp = "--expert-tensor-parallel-size";
  // DeepSeek-V3 (moe_ffn_hidden_size 2048) with tp 2 and pp 8 on 256 GPUs: dp 16.
  const Args job = {"--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "256", "--tp", "2", "--pp", "8",
                    "--sequence-parallel", "--global-batch-size", "1024", "--micro-batch-size", "1"};
  auto command = [&](const std::string& name, const Args& extra) {
    Args a = {name};
    a.insert(a.end(), job.begin(), job.end());
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  const Args estimate = command("estimate", {}), traffic = command("traffic", {});
  Args failures = command("failures", {"--network", "rail-only", "--radix", "16", "--fail", "nic3"});
  failures = Without(failures, "--system");
  for (const Args& base : {estimate, traffic, failures}) {
    for (std::string v : {"0", "-1", "abc", "1.5", "", "any"}) cases.push_back({With(base, etp, v), etp});
    cases.push_back({With(base, etp, "3"), etp});                          // 2048 % 3
    cases.push_back({With(With(base, "--ep", "16"), etp, "4"), etp});      // 16 x 4 over tp x dp = 32
    cases.push_back({With(base, "--ep", "32"), "--expert-tensor-parallel-size 1 fits"});  // 32 x tp 2 over 32
  }
  for (const Args& base : {estimate, traffic}) {
    // Expert-dp 32 / (16 x 2) = 1 is not dp 16: the order must end in pp.
    cases.push_back({With(With(base, "--ep", "16"), "--placement", "tp-pp-dp"), "--placement"});
  }
  cases.push_back({With(kEstimate, etp, "4"), etp});  // a dense model (tp 8)
  cases.push_back({With(kTraffic, etp, "1"), etp});
  cases.push_back({With(kFailures, etp, "0"), etp});  // no job: the value alone
  for (std::string v : {"0", "x", "", "1.5", "-2", "all"}) cases.push_back({With(kSearch, etp, v), etp});
  cases.push_back({With(kSearch, etp, "2"), etp});  // a dense model
  const Args dispatch = {"collective", "--op", "moe-dispatch", "--model", "deepseek-v3", "--system", "dgx-h100",
                         "--gpus", "256", "--group", "ep", "--tp", "2", "--pp", "8"};
  for (std::string v : {"0", "x", "", "any"}) cases.push_back({With(dispatch, etp, v), etp});
  cases.push_back({With(dispatch, etp, "3"), etp});
  cases.push_back({With(With(dispatch, "--ep", "16"), etp, "4"), etp});
  cases.push_back({With(dispatch, "--ep", "32"), "--ep"});
  cases.push_back({With(With(kCollective, "--ep", "16"), etp, "16"), etp});  // 16 x 16 over tp x dp = 128
  std::printf("  %zu bad inputs\n", cases.size());
  CheckAll(cases);
}

}  // namespace
}  // namespace railsim::testutil

namespace railsim::testutil {
namespace {

// Megatron-Core's uneven pipeline split: the four flags' values, the splits
// they cannot make, and a split Megatron-LM cannot launch as printed.
TEST_F(BadInputTest, UnevenPipelineFlagsAreRefusedOnOneLine) {
  std::vector<Case> cases;
  for (const Args& base : {kEstimate, kTraffic, kFailures}) {
    for (std::string flag : {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"}) {
      for (std::string v : {"", "0", "-1", "x", "1.5", "100001"}) cases.push_back({With(base, flag, v), flag});
    }
    for (std::string flag : {"--account-for-embedding-in-pipeline-split", "--account-for-loss-in-pipeline-split"}) {
      cases.push_back({Plus(base, flag + "=bogus"), flag});
    }
  }
  // gpt3-175b's 96 layers on 8 stages.
  const std::string first = "--decoder-first-pipeline-num-layers", last = "--decoder-last-pipeline-num-layers";
  cases.push_back({With(With(kEstimate, first, "7"), last, "7"), first});  // 82 left for 6 middle stages
  cases.push_back({With(kEstimate, last, "97"), last});
  cases.push_back({With(Plus(kEstimate, "--account-for-embedding-in-pipeline-split"), first, "12"), first});
  cases.push_back({Plus(kEstimate, "--account-for-loss-in-pipeline-split"), "--account-for-loss-in-pipeline-split"});
  cases.push_back({With(Plus(Plus(kEstimate, "--account-for-embedding-in-pipeline-split"),
                             "--account-for-loss-in-pipeline-split"), "--vp", "3"),
                   "--account-for-embedding-in-pipeline-split"});  // 98 slots over 8 stages
  cases.push_back({With(With(With(kEstimate, first, "11"), last, "11"), "--vp", "2"), first});  // 11 is odd
  // 96 layers on 64 stages: railsim's own split (1, 2 x 32, 1 x 30, 1) has
  // unequal middle stages, which Megatron-LM's flags cannot say.
  cases.push_back({With(With(kEstimate, "--pp", "64"), "--format", "megatron-args"), "--format"});
  std::printf("  %zu bad inputs\n", cases.size());
  CheckAll(cases);
}

// --gpus-per-domain (estimate, search, traffic, collective, failures), the
// sweep key and the scenario key gpus_per_domain: out of [1, K], not a count,
// not dividing --gpus; and the GPU count K does not divide, which names the
// flag as the fix.
TEST_F(BadInputTest, GpusPerDomainIsRefusedOnOneLine) {
  const Args gb200 = {"estimate", "--model", "llama3-70b", "--system", "gb200-nvl72", "--gpus", "256", "--tp", "8",
                      "--pp", "8", "--global-batch-size", "256", "--micro-batch-size", "1"};
  const Args gb200_search = {"search", "--model", "llama3-70b", "--system", "gb200-nvl72", "--gpus", "256",
                             "--global-batch-size", "256"};
  std::vector<Case> cases;
  cases.push_back({gb200, "--gpus: expected the HB domain size 72 to divide --gpus 256; a job that uses part of "
                          "each domain takes --gpus-per-domain (such as 64: 4 HB domains of 72, 64 GPUs used in "
                          "each)"});
  for (const Args& base : {gb200, gb200_search}) {
    for (std::string v : {"0", "-1", "abc", "1.5", "99999999999999999999"}) {
      cases.push_back({With(base, "--gpus-per-domain", v), "--gpus-per-domain"});
    }
    cases.push_back({With(base, "--gpus-per-domain", "73"),
                     "--gpus-per-domain: expected an integer in [1, 72] (the GPUs of one HB domain), got 73"});
    cases.push_back({With(With(base, "--gpus-per-domain", "64"), "--gpus", "250"),
                     "--gpus: expected a multiple of --gpus-per-domain 64, got 250"});
  }
  cases.push_back({With(gb200, "--gpus-per-domain", "auto"), "--gpus-per-domain"});  // search only
  cases.push_back({With(gb200, "--gpus-per-domain", "64,16"), "--gpus-per-domain"});
  cases.push_back({With(With(gb200_search, "--gpus-per-domain", "auto"), "--gpus", "7"),
                   "--gpus-per-domain: auto tries the HB domain size 72 and segments of 64, 16 and 4 GPUs; none of "
                   "them up to 72 divides --gpus 7: give the GPUs per domain"});
  cases.push_back({With(gb200_search, "--gpus-per-domain", "64,64"), "--gpus-per-domain: 64 is listed twice"});
  cases.push_back({With(gb200_search, "--gpus-per-domain", "64,"), "--gpus-per-domain"});
  cases.push_back({With(gb200_search, "--gpus-per-domain", "64,80"), "--gpus-per-domain"});
  cases.push_back({With(kTraffic, "--gpus-per-domain", "9"), "--gpus-per-domain"});  // K = 8
  cases.push_back({With(kTraffic, "--gpus-per-domain", "3"), "--gpus: expected a multiple of --gpus-per-domain 3"});
  cases.push_back({With(kCollective, "--gpus-per-domain", "3"),
                   "--gpus: expected a multiple of --gpus-per-domain 3, got 128"});
  cases.push_back({With(kCollective, "--gpus-per-domain", "0"), "--gpus-per-domain"});
  cases.push_back({With(kFailures, "--gpus-per-domain", "0"), "--gpus-per-domain"});
  cases.push_back({With(kFailures, "--gpus-per-domain", "9"), "--gpus-per-domain"});
  Write("sweep-domain.json", R"({"study": "estimate", "fixed": {"model": "llama3-70b", "system": "gb200-nvl72",
      "gpus": 256, "global_batch_size": 256, "tp": 8, "pp": 8, "micro_batch_size": 1}, "axes": {"gpus_per_domain": [64, 0]}})");
  cases.push_back({{"sweep", "--config", Path("sweep-domain.json"), "--out", Path("domain-rows.jsonl")},
                   "/axes/gpus_per_domain/1: expected an integer in [1, 16777216], got 0"});
  Write("scenario-domain.json", R"({"name": "segments", "gpus": 144, "hb_domain_sizes": [72], "radixes": [64],
      "port_speed": "400Gbps", "gpus_per_domain": 0})");
  cases.push_back({{"compare", "--scenario", Path("scenario-domain.json")}, "/gpus_per_domain"});
  // gpus is the jobs' count: a multiple of the GPUs used per domain.
  Write("scenario-segments.json", R"({"name": "segments", "gpus": 100, "hb_domain_sizes": [72], "radixes": [64],
      "port_speed": "400Gbps", "gpus_per_domain": 64})");
  cases.push_back({{"compare", "--scenario", Path("scenario-segments.json")},
                   "/hb_domain_sizes: expected gpus 100 to be a multiple of gpus_per_domain 64 on domains of 72"});
  // A system per domain size: for a size the scenario has, a known system.
  Write("scenario-systems.json", R"({"name": "s", "gpus": 128, "hb_domain_sizes": [8], "radixes": [64],
      "port_speed": "400Gbps", "hb_domain_systems": {"72": "gb200-nvl72"}})");
  cases.push_back({{"compare", "--scenario", Path("scenario-systems.json")},
                   "/hb_domain_systems/72: expected one of hb_domain_sizes (8), got '72'"});
  int file = 0;
  for (std::string value : {R"({"8": ""})", R"({"8": 8})", R"(["dgx-b200"])", R"({"eight": "dgx-b200"})",
                            R"({"8": "no-such-system"})"}) {
    const std::string name = "scenario-systems-" + std::to_string(file++) + ".json";
    Write(name, R"({"name": "s", "gpus": 128, "hb_domain_sizes": [8], "radixes": [64],
        "port_speed": "400Gbps", "model": "llama3.1-8b", "system": "dgx-b200", "global_batch_sizes": [128],
        "hb_domain_systems": )" + value + "}");
    cases.push_back({{"compare", "--scenario", Path(name)}, "/hb_domain_systems"});
  }
  // The jobs' precision: a name the search takes, and one the GPU runs.
  for (auto [key, value, field] : {std::tuple{"precision", "fp16", "/precision"},
                                   std::tuple{"moe_precision", "8", "/moe_precision"},
                                   std::tuple{"precision", "fp4", "/precision"}}) {
    const std::string name = "scenario-precision-" + std::to_string(file++) + ".json";
    Write(name, fmt::format(R"({{"name": "s", "gpus": 128, "hb_domain_sizes": [8], "radixes": [64],
        "port_speed": "400Gbps", "model": "llama3.1-8b", "system": "dgx-h100", "global_batch_sizes": [128],
        "moe_model": "mixtral-8x22b", "moe_global_batch_size": 128, "{}": {}}})",
                            key, nlohmann::json(value).dump()));
    cases.push_back({{"compare", "--scenario", Path(name)}, field});
  }
  CheckAll(cases);
}

}  // namespace
}  // namespace railsim::testutil


namespace railsim::testutil {
namespace {

// `railsim cluster`: every flag, the trace and the switch map.
TEST_F(BadInputTest, ClusterRejectsBadInputOnOneLine) {
  Write("trace.csv", "submit_s,duration_s,gpus\n0,60,8\n10,60,16\n");
  Write("bad-cell.csv", "submit_s,duration_s,gpus\n0,60,8\n10,x,16\n");
  Write("bad-column.csv", "submit_s,duraton_s,gpus\n0,60,8\n");
  Write("no-gpus.csv", "submit_s,duration_s\n0,60\n");
  Write("topo.csv", "host,asw,psw,dsw\nh0,S0,P0,G\nh1,S1,P0,G\n");
  Write("bad-topo.csv", "host,asx,psw\nh0,S0,P0\n");
  const Args base = {"cluster", "--trace", Path("trace.csv"), "--gpus", "64", "--policy", "first-fit"};
  const Args synthetic = {"cluster", "--gpus", "64", "--jobs", "20", "--policy", "first-fit"};
  std::vector<Case> cases;
  cases.push_back({With(base, "--trace", Path("bad-cell.csv")), "line 3, column 'duration_s'"});
  cases.push_back({With(base, "--trace", Path("bad-column.csv")), "did you mean 'duration_s'?"});
  cases.push_back({With(base, "--trace", Path("no-gpus.csv")), "missing required column 'gpus'"});
  for (const std::string& file : BadFiles()) cases.push_back({With(base, "--trace", file), "--trace"});
  cases.push_back({Plus(Plus(Without(base, "--gpus"), "--topology"), Path("bad-topo.csv")), "--topology"});
  cases.push_back({Plus(Plus(Without(base, "--gpus"), "--topology"), Path("missing.csv")), "--topology"});
  cases.push_back({Plus(Plus(base, "--topology"), Path("topo.csv")), "--gpus"});
  cases.push_back({Plus(Plus(With(Without(base, "--gpus"), "--network", "rail-only"), "--topology"),
                        Path("topo.csv")),
                   "--network"});
  cases.push_back({Without(base, "--gpus"), "--gpus"});
  // 7 and 100: not a multiple of the system's domain of 8, which --gpus is blamed for, not --hb-size.
  for (const char* v : {"0", "-8", "abc", "1e9", "100", "7"}) cases.push_back({With(base, "--gpus", v), "--gpus"});
  // A switch map gives the switches and uplinks too.
  for (const char* flag : {"--radix", "--oversubscription"}) {
    cases.push_back({Plus(Plus(Plus(Plus(Without(base, "--gpus"), flag), "4"), "--topology"), Path("topo.csv")), flag});
  }
  cases.push_back({With(base, "--policy", "first-fit,first-fit"), "--policy"});
  // Flags that would be ignored: a synthetic trace's shape with a trace file, a policy's knob without it.
  for (const char* flag : {"--jobs", "--seed", "--size-mix", "--arrivals-per-hour"}) {
    cases.push_back({Plus(Plus(base, flag), std::string(flag) == "--size-mix" ? "8:1" : "5"), flag});
  }
  cases.push_back({With(base, "--segment", "4"), "--segment"});      // first-fit has no segments
  cases.push_back({With(base, "--max-wait", "10min"), "--max-wait"});  // nor a wait
  cases.push_back({With(base, "--hb-size", "0"), "--hb-size"});
  cases.push_back({With(base, "--hb-size", "7"), "--hb-size"});
  cases.push_back({With(base, "--radix", "7"), "--radix"});
  cases.push_back({With(base, "--radix", "x"), "--radix"});
  cases.push_back({With(base, "--port-speed", "400"), "--port-speed"});
  cases.push_back({With(base, "--oversubscription", "0.5"), "--oversubscription"});
  cases.push_back({With(base, "--network", "rail-onyl"), "did you mean 'rail-only'?"});
  cases.push_back({With(base, "--policy", "frist-fit"), "did you mean 'first-fit'?"});
  cases.push_back({With(base, "--segment", "0"), "--segment"});
  cases.push_back({With(base, "--segment", "9"), "--segment"});
  cases.push_back({With(base, "--max-wait", "-1s"), "--max-wait"});
  cases.push_back({With(base, "--samples", "0"), "--samples"});
  cases.push_back({With(base, "--samples", "1000000"), "--samples"});
  cases.push_back({With(base, "--threads", "0"), "--threads"});
  cases.push_back({With(base, "--system", "nope"), "--system"});
  cases.push_back({With(base, "--format", "xml"), "--format"});
  cases.push_back({With(base, "--out", Path("adir.json")), "--out"});
  cases.push_back({With(base, "--out", Path("trace.csv")), "--out"});
  cases.push_back({With(synthetic, "--jobs", "0"), "--jobs"});
  cases.push_back({With(synthetic, "--jobs", "2000000"), "--jobs"});
  cases.push_back({With(synthetic, "--arrivals-per-hour", "0"), "--arrivals-per-hour"});
  cases.push_back({With(synthetic, "--size-mix", "8"), "--size-mix"});
  cases.push_back({With(synthetic, "--size-mix", "0:1"), "--size-mix"});
  cases.push_back({With(synthetic, "--size-mix", "8:-1"), "--size-mix"});
  cases.push_back({With(synthetic, "--duration-median", "0s"), "--duration-median"});
  cases.push_back({With(synthetic, "--duration-p90", "60s"), "--duration-p90"});
  cases.push_back({With(synthetic, "--seed", "-1"), "--seed"});
  cases.push_back({Plus(Plus(base, "--fromat"), "json"), "did you mean '--format'?"});
  std::printf("  %zu bad inputs\n", cases.size());
  CheckAll(cases);
}

}  // namespace
}  // namespace railsim::testutil
