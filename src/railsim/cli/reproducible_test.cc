// Answers a user can reproduce, end to end: the sequence length every job is
// timed at is printed (and a Hugging Face config's context named as such),
// compare's best strategies come with the estimate command that times each,
// what compare replaces or leaves out is said, and failures takes one list
// of devices for every design.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

// Qwen/Qwen2.5-72B's config.json (the keys railsim reads): its
// max_position_embeddings of 131,072 is the longest context, not the 4,096
// or so it is trained at, and there is no rope_scaling to say so.
const char kQwen72b[] = R"({"_name_or_path": "Qwen/Qwen2.5-72B", "architectures": ["Qwen2ForCausalLM"],
  "model_type": "qwen2", "hidden_size": 8192, "intermediate_size": 29568, "num_hidden_layers": 80,
  "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 152064, "max_position_embeddings": 131072,
  "rope_theta": 1000000.0, "tie_word_embeddings": false})";

class ReproducibleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    std::ofstream(Path("qwen.json")) << kQwen72b;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  Args Estimate() const {
    return {"estimate", "--model", Path("qwen.json"), "--system", "dgx-h100", "--gpus", "64", "--tp", "8", "--pp",
            "8", "--micro-batch-size", "1", "--global-batch-size", "64", "--sequence-parallel"};
  }
  std::string dir_;
};

nlohmann::json Parse(const RunResult& r) {
  EXPECT_EQ(0, r.status) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST_F(ReproducibleTest, ConfigContextIsNamedOnStderrAndTheLengthInEveryHeader) {
  const std::string warning =
      "railsim: warning: --model: Qwen/Qwen2.5-72B trains at sequence length 131072, its config's "
      "max_position_embeddings (the longest context it supports, not a training length); give --seq-length to "
      "time another\n";
  RunResult table = RunRailsim(Estimate());
  ASSERT_EQ(0, table.status) << table.err;
  EXPECT_EQ(warning, table.err);
  EXPECT_EQ(0u, table.out.find("Qwen/Qwen2.5-72B (sequence length 131,072) on 64 x dgx-h100")) << table.out;
  Args json = Estimate();
  json.insert(json.end(), {"--format", "json"});
  EXPECT_EQ(131072, Parse(RunRailsim(json))["seq_length"]);
  // Given, the length is the user's: no warning, and it is what is printed.
  json.insert(json.end(), {"--seq-length", "4096"});
  RunResult given = RunRailsim(json);
  EXPECT_EQ("", given.err);
  EXPECT_EQ(4096, Parse(given)["seq_length"]);
  RunResult search = RunRailsim({"search", "--model", Path("qwen.json"), "--seq-length", "4096", "--system",
                                 "dgx-h100", "--gpus", "64", "--global-batch-size", "64", "--top", "1"});
  ASSERT_EQ(0, search.status) << search.err;
  EXPECT_EQ(0u, search.out.find("Qwen/Qwen2.5-72B (sequence length 4,096) on 64 x dgx-h100")) << search.out;
  RunResult traffic = RunRailsim({"traffic", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "64",
                                  "--tp", "8", "--pp", "8", "--micro-batch-size", "1", "--global-batch-size", "64"});
  ASSERT_EQ(0, traffic.status) << traffic.err;
  EXPECT_EQ(0u, traffic.out.find("gpt3-175b (sequence length 2,048) on 64 x dgx-h100")) << traffic.out;
}

// A config whose length is a pre-extension context (Llama 3.1's 8,192 under
// rope_scaling) is a training length: no warning.
TEST_F(ReproducibleTest, PreExtensionContextIsNoWarning) {
  RunResult r = RunRailsim({"estimate", "--model", "hf:" RAILSIM_SOURCE_DIR "/tests/data/hf/llama-3.1-8b.json",
                            "--system", "dgx-h100", "--gpus", "8", "--tp", "8", "--pp", "1", "--micro-batch-size",
                            "1", "--global-batch-size", "8", "--format", "json"});
  EXPECT_EQ("", r.err);
  EXPECT_EQ(8192, Parse(r)["seq_length"]);
}

// Each best strategy compare prints, run through the estimate command it
// prints with it, gives the same iteration time to the last bit; the model
// without MoE side ("none", as a sweep spells it) and its length in the JSON.
TEST_F(ReproducibleTest, EachBestStrategyIsTheEstimateItPrints) {
  nlohmann::json doc = Parse(RunRailsim({"compare", "--gpus", "1024", "--hb-sizes", "8", "--radixes", "64",
                                         "--global-batch-sizes", "512", "--model", "gpt3-175b", "--moe-model",
                                         "none", "--format", "json"}));
  EXPECT_FALSE(doc.contains("moe"));
  EXPECT_EQ(2048, doc["seq_length"]);
  const nlohmann::json& job = doc["training"][0];
  int checked = 0;
  for (const char* network : {"rail_optimized", "rail_only", "ideal"}) {
    const std::string command = job[std::string(network) + "_estimate_command"];
    ASSERT_EQ(0u, command.find("railsim estimate --model gpt3-175b --seq-length 2048 --system dgx-h100 --gpus 1024 "
                               "--global-batch-size 512 --network "))
        << command;
    std::istringstream words(command.substr(std::string("railsim ").size()));
    Args args;
    for (std::string w; words >> w;) args.push_back(w);
    args.insert(args.end(), {"--format", "json"});
    const nlohmann::json e = Parse(RunRailsim(args));
    EXPECT_EQ(job[std::string(network) + "_iteration_time_s"].get<double>(), e["iteration_time_s"].get<double>())
        << command;
    EXPECT_EQ(job[std::string(network) + "_strategy"], e["strategy"]) << command;
    ++checked;
  }
  EXPECT_EQ(3, checked);
}

// A scenario's stack and fixed cost per job travel into the search and into
// the estimate command it prints: megatron-2021 (classic attention, no TP
// overlap, 16-bit gradient reduction) with 120 ms per iteration, run as
// printed, gives the same time to the last bit.
TEST_F(ReproducibleTest, ScenarioStackAndFixedCostAreInTheCommands) {
  const std::string scenario = R"({"name": "stacks", "gpus": 64, "hb_domain_sizes": [8], "radixes": [16],
      "port_speed": "400Gbps", "model": "llama3.1-8b", "system": "dgx-h100", "global_batch_sizes": [64],
      "stack": "megatron-2021", "iteration_overhead": "120ms"})";
  nlohmann::json doc = Parse(RunRailsim({"compare", "--scenario", scenario, "--format", "json"}));
  const nlohmann::json& job = doc["training"][0];
  for (const char* network : {"rail_optimized", "rail_only", "ideal"}) {
    const std::string command = job[std::string(network) + "_estimate_command"];
    EXPECT_NE(std::string::npos, command.find(" --stack megatron-2021 --iteration-overhead 120ms ")) << command;
    EXPECT_EQ("classic", job[std::string(network) + "_strategy"]["attention"]) << command;
    std::istringstream words(command.substr(std::string("railsim ").size()));
    Args args;
    for (std::string w; words >> w;) args.push_back(w);
    args.insert(args.end(), {"--format", "json"});
    const nlohmann::json e = Parse(RunRailsim(args));
    EXPECT_EQ(job[std::string(network) + "_iteration_time_s"].get<double>(), e["iteration_time_s"].get<double>())
        << command;
    EXPECT_GE(e["breakdown"]["overhead_s"].get<double>(), 0.12) << command;  // and the chunks' costs
    EXPECT_EQ("megatron-2021", e["stack"]) << command;
  }
}

// The table shows the settings beyond the degrees and ends each HB domain
// with the commands.
TEST_F(ReproducibleTest, CompareTableNamesSettingsAndCommands) {
  RunResult r = RunRailsim({"compare", "--gpus", "1024", "--hb-sizes", "8", "--radixes", "64",
                            "--global-batch-sizes", "512", "--model", "gpt3-175b", "--moe-model", "none"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("\n  settings ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("each best strategy as the estimate that times it:\n"
                                          "  rail-optimized, gpt3-175b at batch 512: railsim estimate --model "
                                          "gpt3-175b --seq-length 2048"))
      << r.out;
}

// --system replaces the scenario's HB sizes and, for a system the catalog
// has no server for, leaves out the whole-cluster rows: each is said on
// stderr and in the JSON's notes (the NIC speed's note:
// ScenarioOverridesTest).
TEST_F(ReproducibleTest, CompareSaysWhatTheSystemReplacesAndLeavesOut) {
  RunResult r = RunRailsim({"compare", "--system", "aws-p5", "--gpus", "1024", "--radixes", "64",
                            "--global-batch-sizes", "512", "--model", "gpt3-175b", "--moe-model", "none", "--format",
                            "json"});
  const nlohmann::json doc = Parse(r);
  const std::vector<std::string> notes = {
      "--system aws-p5: HB domains of 8 (the system's) in place of the scenario's 8, 256; give --hb-sizes to "
      "choose them",
      "catalog 'default' has no server named aws-p5 (the system's name), so the whole-cluster cost, the "
      "network's share of it and the cost per PFLOP/s-day are left out; give --server (dgx-h100, dgx-b200, "
      "gb200-nvl72, dgx-h200, dgx-b300, gb300-nvl72, rubin-nvl144)"};
  EXPECT_EQ(notes, doc["notes"].get<std::vector<std::string>>());
  std::string err;
  for (const std::string& n : notes) err += "railsim: warning: " + n + "\n";
  EXPECT_EQ(err, r.err);
  EXPECT_FALSE(doc.contains("server"));
  // With the server named, nothing is left out.
  r = RunRailsim({"compare", "--system", "aws-p5", "--server", "dgx-h100", "--gpus", "1024", "--hb-sizes", "8",
                  "--radixes", "64", "--global-batch-sizes", "512", "--model", "gpt3-175b", "--moe-model", "none",
                  "--format", "json"});
  EXPECT_EQ("", r.err);
  EXPECT_TRUE(Parse(r)["notes"].empty());
}

// Switch names differ per design (1,024 GPUs at radix 64: rail-optimized and
// fat-tree have leaf0..31 and spine0..15, Rail-only rail0..7/leaf0..3 and
// rail0..7/spine0..1): with --network all, one list serves every design,
// each device failed where it exists and left out, with a note, where it
// does not; a name no design has is refused, and a did-you-mean keeps
// "switch:".
TEST_F(ReproducibleTest, FailuresTakeOneDeviceListForEveryDesign) {
  RunResult r = RunRailsim({"failures", "--gpus", "1024", "--radix", "64", "--no-simulate", "--format", "json",
                            "--fail", "switch:rail0/leaf1,switch:spine3"});
  const nlohmann::json doc = Parse(r);
  const std::vector<std::string> notes = {
      "--fail: \"switch:rail0/leaf1\": no such device in the rail-optimized network; the rail-optimized network is "
      "analysed without it",
      "--fail: \"switch:spine3\": no such device in the rail-only network; the rail-only network is analysed "
      "without it",
      "--fail: \"switch:rail0/leaf1\": no such device in the fat-tree network; the fat-tree network is analysed "
      "without it"};
  EXPECT_EQ(notes, doc["notes"].get<std::vector<std::string>>());
  std::string err;
  for (const std::string& n : notes) err += "railsim: warning: " + n + "\n";
  EXPECT_EQ(err, r.err);
  ASSERT_EQ(3u, doc["failures"].size());
  EXPECT_EQ("rail-optimized", doc["failures"][0]["design"]);
  EXPECT_EQ(std::vector<std::string>{"switch:spine3"}, doc["failures"][0]["devices"].get<std::vector<std::string>>());
  EXPECT_EQ("rail-only", doc["failures"][1]["design"]);
  EXPECT_EQ(std::vector<std::string>{"switch:rail0/leaf1"},
            doc["failures"][1]["devices"].get<std::vector<std::string>>());
  RunResult nowhere = RunRailsim({"failures", "--gpus", "1024", "--radix", "64", "--no-simulate", "--fail",
                                  "switch:nowhere"});
  EXPECT_EQ(2, nowhere.status);
  EXPECT_EQ("railsim: error: --fail: \"switch:nowhere\": no such device in the rail-optimized network\n", nowhere.err);
  RunResult typo = RunRailsim({"failures", "--gpus", "1024", "--radix", "64", "--network", "rail-only",
                               "--no-simulate", "--fail", "switch:rail0/spine99"});
  EXPECT_EQ(2, typo.status);
  EXPECT_EQ("railsim: error: --fail: \"switch:rail0/spine99\": no such device in the rail-only network (did you "
            "mean 'switch:rail0/spine0'?)\n",
            typo.err);
}

// A GPU that keeps its own NIC is not "1 GPUs share a NIC".
TEST_F(ReproducibleTest, FailureTableSaysWhenANicIsNotShared) {
  RunResult r = RunRailsim({"failures", "--gpus", "1024", "--radix", "64", "--network", "rail-optimized",
                            "--no-simulate", "--fail", "gpu3"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(std::string::npos, r.out.find("1 GPUs")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("(its own NIC, not shared)")) << r.out;
}

}  // namespace
}  // namespace railsim::testutil
