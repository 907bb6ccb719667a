// The files a command line names, and what two MPI ranks' command lines
// differ in, word for word.
#include "railsim/study/command_line.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::study {
namespace {

using Args = std::vector<std::string>;

TEST(CommandLineTest, InputFlagPathsTakeEverySpelling) {
  const Args args = {"calibrate", "--system=my.json", "--nccl-tests", "a.txt", "b.txt", "--steps", "s.csv",
                     "--holdout", "0.2", "--model", "hf:cfg/config.json", "--out", "x.json"};
  const std::vector<FlagPath> inputs = InputFlagPaths(args);
  ASSERT_EQ(5u, inputs.size());
  EXPECT_EQ("--system my.json", inputs[0].flag + " " + inputs[0].path);
  EXPECT_EQ("--nccl-tests a.txt", inputs[1].flag + " " + inputs[1].path);
  EXPECT_EQ("--nccl-tests b.txt", inputs[2].flag + " " + inputs[2].path);
  EXPECT_EQ("--steps s.csv", inputs[3].flag + " " + inputs[3].path);
  EXPECT_EQ("--model cfg/config.json", inputs[4].flag + " " + inputs[4].path);
}

// The example of the issue, and each other shape of difference.
TEST(CommandLineTest, RankDisagreementNamesTheFirstDifference) {
  const RankCommand zero{"1.0", {"alltoall", "--gpus", "8192", "--simulate", "--format=json"}, {}};
  auto with = [&](Args args) { return RankCommand{"1.0", std::move(args), {}}; };
  EXPECT_EQ(std::nullopt, RankDisagreement(zero, zero, 1));
  EXPECT_EQ("rank 1's --gpus is 4096, rank 0's is 8192",
            RankDisagreement(zero, with({"alltoall", "--gpus", "4096", "--simulate", "--format=json"}), 1));
  EXPECT_EQ("rank 3 runs 'railsim collective', rank 0 runs 'railsim alltoall'",
            RankDisagreement(zero, with({"collective", "--gpus", "8192"}), 3));
  EXPECT_EQ("rank 1's --format is table, rank 0's is json",
            RankDisagreement(zero, with({"alltoall", "--gpus", "8192", "--simulate", "--format=table"}), 1));
  EXPECT_EQ("rank 1's argument 4 is '--format=json', rank 0's is '--simulate'",
            RankDisagreement(zero, with({"alltoall", "--gpus", "8192", "--format=json"}), 1));
  EXPECT_EQ("rank 2 lacks rank 0's argument 5, '--format=json'",
            RankDisagreement(zero, with({"alltoall", "--gpus", "8192", "--simulate"}), 2));
  EXPECT_EQ("rank 2 has an argument rank 0 lacks: '--quiet' (argument 6)",
            RankDisagreement(zero, with({"alltoall", "--gpus", "8192", "--simulate", "--format=json", "--quiet"}), 2));
  EXPECT_EQ("rank 1 runs railsim 0.9, rank 0 runs railsim 1.0",
            RankDisagreement(zero, RankCommand{"0.9", zero.args, {}}, 1));
}

// The same words, files of other bytes: the file is named, with sizes.
TEST(CommandLineTest, RankDisagreementNamesAFileOfOtherBytes) {
  RankCommand zero{"1.0", {"sweep", "--config", "s.json"}, {{"--config", "s.json", "", 120, 7}}};
  RankCommand mine = zero;
  mine.inputs[0].hash = 8;
  EXPECT_EQ("rank 1's --config file s.json differs from rank 0's (the same size, other bytes)",
            RankDisagreement(zero, mine, 1));
  mine.inputs[0] = {"--config", "s.json", "missing", 0, 0};
  EXPECT_EQ("rank 1's --config file s.json differs from rank 0's (missing against 120 bytes)",
            RankDisagreement(zero, mine, 1));
}

TEST(CommandLineTest, RankCommandsTravelAsBytes) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/railsim_command_line_XXXXXX";
  ASSERT_NE(nullptr, ::mkdtemp(dir.data()));
  std::ofstream(dir + "/s.json") << "{\"study\": \"network\"}";
  const RankCommand command =
      DescribeRankCommand("1.0", {"sweep", "--config", dir + "/s.json", "--out", "a:b\nc", "--model", "nope"});
  ASSERT_EQ(2u, command.inputs.size());
  EXPECT_EQ("", command.inputs[0].state);
  EXPECT_EQ(20u, command.inputs[0].bytes);
  EXPECT_EQ("missing", command.inputs[1].state);
  const std::string bytes = EncodeRankCommand(command);
  const std::optional<RankCommand> back = DecodeRankCommand(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(std::nullopt, RankDisagreement(command, *back, 1));
  EXPECT_EQ(command.args, back->args);
  EXPECT_EQ(std::nullopt, DecodeRankCommand(bytes.substr(0, bytes.size() - 1)));
  EXPECT_EQ(std::nullopt, DecodeRankCommand("99999:x"));
}

// Before any work: an output that is an input, or another output.
TEST(CommandLineTest, CheckOutputFlagsRefusesInputsAndTwins) {
  const char* base = std::getenv("TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/railsim_command_line_XXXXXX";
  ASSERT_NE(nullptr, ::mkdtemp(dir.data()));
  std::ofstream(dir + "/c.json") << "{}";
  auto error = [](const Args& args) {
    try {
      CheckOutputFlags(args);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ("--out: '" + dir + "/c.json' is an input of this command (--config); an output must not replace it",
            error({"sweep", "--config", dir + "/c.json", "--out", dir + "/c.json"}));
  EXPECT_EQ("--out: '" + dir + "/./c.json' is an input of this command (--config); an output must not replace it",
            error({"sweep", "--config=" + dir + "/c.json", "--out=" + dir + "/./c.json"}));
  EXPECT_EQ("--trace-png: '" + dir + "/t.png' is also the --trace output; each output needs its own file",
            error({"estimate", "--trace", dir + "/t.png", "--trace-png", dir + "/t.png"}));
  EXPECT_EQ("", error({"sweep", "--config", dir + "/c.json", "--out", dir + "/rows.jsonl"}));
  // A report's folder and cost's pattern are checked where they are made.
  EXPECT_EQ("", error({"report", "--out", dir + "/c.json", "--scenario", dir + "/c.json"}));
  EXPECT_FALSE(CheckOutputFlags({"sweep", "--out", dir + "/rows.jsonl"}));
  EXPECT_TRUE(CheckOutputFlags({"sweep", "--out", "-"}));
}

}  // namespace
}  // namespace railsim::study
