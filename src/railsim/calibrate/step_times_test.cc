// The --steps reader against the published runs it was written from
// (tests/data/h100-steps.csv holds the rows of h100-calibration.csv), and its
// error messages word for word.
#include "railsim/calibrate/step_times.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "testutil/reference_data.h"

namespace railsim::calibrate {
namespace {

TEST(StepTimesTest, RowsEqualThePublishedRuns) {
  const std::string path = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/h100-steps.csv";
  std::vector<StepRun> runs = ReadSteps(path, "--steps");
  std::vector<std::vector<std::string>> source = testutil::ReadReferenceCsv("h100-calibration.csv");
  ASSERT_EQ(source.size(), runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const StepRun& r = runs[i];
    const std::vector<std::string>& c = source[i];
    EXPECT_EQ(c[0], r.id);
    EXPECT_EQ(std::stoi(c[2]), r.model.num_layers) << r.id;
    EXPECT_EQ(std::stoi(c[3]), r.model.hidden_size) << r.id;
    EXPECT_EQ(std::stoi(c[8]), r.model.vocab_size) << r.id;  // GPT-3's 51,200 from the model file beside the CSV
    EXPECT_EQ(std::stoll(c[10]), r.gpus) << r.id;
    EXPECT_EQ(std::stoi(c[11]), r.strategy.tp) << r.id;
    EXPECT_EQ(std::stoi(c[12]), r.strategy.pp) << r.id;
    EXPECT_EQ(std::stoi(c[13]), r.strategy.cp) << r.id;
    EXPECT_EQ(std::stoi(c[14]), r.strategy.vp) << r.id;
    EXPECT_EQ(std::stoll(c[15]), r.strategy.dp) << r.id;
    EXPECT_EQ(std::stoll(c[16]), r.strategy.micro_batch) << r.id;
    EXPECT_EQ(std::stoll(c[17]), r.strategy.global_batch) << r.id;
    EXPECT_EQ(c[18] == "true", r.strategy.tp_comm_overlap) << r.id;
    EXPECT_EQ(r.strategy.tp > 1, r.strategy.sequence_parallel) << r.id;
    EXPECT_TRUE(r.strategy.distributed_optimizer()) << r.id;
    EXPECT_EQ(std::stod(c[19]), r.step_time_s) << r.id;
    EXPECT_EQ(comm::NetworkKind::kRailOptimized, r.network);
    EXPECT_EQ(int(i) + 6, r.line);
  }
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseStepsCsv(text, "s.csv", "");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(StepTimesTest, BadRowsNameLineAndColumn) {
  const std::string header = "model,gpus,global-batch-size,tp,pp,micro-batch-size,step_time_s";
  EXPECT_EQ("s.csv:1: unknown column 'step_time' (did you mean 'step_time_s'?); expected id, model, gpus, global-batch-size, "
            "tp, pp, dp, cp, ep, vp, micro-batch-size, recompute, attention, precision, network, sequence-parallel, "
            "distributed-optimizer, no-dp-overlap, grad-reduce-in-bf16, tp-comm-overlap, "
            "no-overlap-p2p-communication, fp8-params, fp4-params, moe-alltoall, moe-imbalance, moe-max-domains, "
            "moe-overlap, step_time_s",
            ErrorOf("model,gpus,step_time\n"));
  EXPECT_EQ("s.csv:1: missing column 'step_time_s'",
            ErrorOf("model,gpus,global-batch-size,tp,pp,micro-batch-size\n"));
  EXPECT_EQ("s.csv:1: column 'tp' appears twice", ErrorOf("tp,tp\n"));
  EXPECT_EQ("s.csv:3: step_time_s: expected a number in [1e-06, 10000000], got 'fast'",
            ErrorOf("# comment\n" + header + "\ngpt3-175b,64,64,8,8,1,fast\n"));
  EXPECT_EQ("s.csv:2: step_time_s: expected a number in [1e-06, 10000000], got '0'",
            ErrorOf(header + "\ngpt3-175b,64,64,8,8,1,0\n"));
  EXPECT_EQ("s.csv:2: gpus: expected an integer in [1, 16777216], got '0'",
            ErrorOf(header + "\ngpt3-175b,0,64,8,8,1,1\n"));
  EXPECT_EQ("s.csv:2: dp: tp x pp x cp = 64 does not divide gpus 96", ErrorOf(header + "\ngpt3-175b,96,64,8,8,1,1\n"));
  EXPECT_EQ("s.csv:2: expected 7 cells as in the header, got 6 (truncated?)",
            ErrorOf(header + "\ngpt3-175b,64,64,8,8,1\n"));
  EXPECT_EQ("s.csv:2: recompute: expected none, selective, full, got 'ful' (did you mean 'full'?)",
            ErrorOf(header + ",recompute\ngpt3-175b,64,64,8,8,1,1,ful\n"));
  EXPECT_EQ("s.csv:2: sequence-parallel: expected true or false, got 'maybe'",
            ErrorOf(header + ",sequence-parallel\ngpt3-175b,64,64,8,8,1,1,maybe\n"));
  EXPECT_EQ("s.csv:2: model: unknown model preset 'gpt-9'; expected a preset name (deepseek-v3, gpt-oss-120b, "
            "gpt-oss-20b, gpt3-175b, "
            "llama3-405b, llama3-70b, llama3.1-70b, llama3.1-8b, megatron-1.7b, megatron-145.6b, megatron-18.4b, "
            "megatron-1t, megatron-3.6b, megatron-310.1b, megatron-39.1b, megatron-529.6b, megatron-7.5b, "
            "megatron-76.1b, mixtral-8x22b, nemotron4-15b, qwen3-235b-a22b, qwen3-30b-a3b) or a JSON file path",
            ErrorOf(header + "\ngpt-9,64,64,8,8,1,1\n"));
  EXPECT_EQ("s.csv:2: tp: expected an integer in [1, 1048576], got ''", ErrorOf(header + "\ngpt3-175b,64,64,,8,1,1\n"));
  EXPECT_EQ("s.csv:2: step_time_s: expected a number in [1e-06, 10000000], got ''",
            ErrorOf(header + "\ngpt3-175b,64,64,8,8,1,\n"));
  EXPECT_EQ("s.csv: no data rows below the header", ErrorOf(header + "\n"));
  EXPECT_EQ("s.csv: no header row (model,gpus,global-batch-size,...)", ErrorOf("# only comments\n"));
}

TEST(StepTimesTest, StrategyChecksNameTheColumn) {
  const std::string header = "model,gpus,global-batch-size,tp,pp,micro-batch-size,step_time_s";
  // GPT-3's 96 heads are not divisible by 7; the batch of 63 not by dp x micro-batch.
  std::string tp = ErrorOf(header + "\ngpt3-175b,56,64,7,8,1,1\n");
  EXPECT_EQ(0u, tp.find("s.csv:2: tp: ")) << tp;
  std::string batch = ErrorOf(header + "\ngpt3-175b,128,63,8,8,1,1\n");
  EXPECT_EQ(0u, batch.find("s.csv:2: global-batch-size: ")) << batch;
}

}  // namespace
}  // namespace railsim::calibrate
