// End-to-end tests of `railsim sweep`: the same rows on one thread, two
// threads and two shards merged; --resume after a kill; --merge naming the
// missing points.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

// 5 cluster sizes x 6 pipeline degrees x 4 tensor degrees x 2 micro-batch
// sizes = 240 estimate points, some of them invalid (error rows).
const char* kConfig = R"({"study": "estimate",
  "fixed": {"model": "gpt3-175b", "system": "dgx-h100", "global_batch_size": 1024},
  "axes": {"gpus": {"from": 256, "to": 4096, "times": 2}, "pp": [1, 2, 4, 8, 16, 32], "tp": [1, 2, 4, 8],
           "micro_batch_size": [1, 2]}})";
constexpr int kPoints = 240;

class SweepCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    std::ofstream(Path("sweep.json")) << kConfig;
  }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  // Runs a sweep; expects success.
  void Sweep(std::vector<std::string> args) {
    args.insert(args.begin(), {"sweep", "--config", Path("sweep.json")});
    RunResult r = RunRailsim(args);
    ASSERT_EQ(0, r.status) << r.err;
    EXPECT_EQ("", r.out);
  }
  std::string dir_;
};

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end(), [](const std::string& a, const std::string& b) {
    return std::stol(a.substr(9)) < std::stol(b.substr(9));  // after {"index":
  });
  return lines;
}

TEST_F(SweepCommandTest, OneThreadTwoThreadsAndMergedShardsGiveTheSameRows) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("one.jsonl"), "--threads", "1"}));
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("two.jsonl"), "--threads", "2"}));
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("s0.jsonl"), "--shard", "0/2", "--threads", "1"}));
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("s1.jsonl"), "--shard", "1/2", "--threads", "2"}));
  RunResult merged = RunRailsim({"sweep", "--merge", Path("s1.jsonl"), Path("s0.jsonl")});
  ASSERT_EQ(0, merged.status) << merged.err;
  const std::vector<std::string> one = SortedLines(Slurp(Path("one.jsonl")));
  ASSERT_EQ(size_t(kPoints), one.size());
  EXPECT_EQ(one, SortedLines(Slurp(Path("two.jsonl"))));
  EXPECT_EQ(one, SortedLines(merged.out));
  // One thread writes in index order; the merge sorts: the same bytes.
  EXPECT_EQ(Slurp(Path("one.jsonl")), merged.out);
  // Shard 0 holds the even indices.
  EXPECT_EQ(kPoints / 2, LineCount(Slurp(Path("s0.jsonl"))));
  EXPECT_EQ(0u, Slurp(Path("s0.jsonl")).find("{\"index\":0,\"points\":240,\"point\":{\"model\":\"gpt3-175b\""));
  // Some points are invalid (pp = 32 does not divide GPT-3's 96 layers) and
  // say why, as rows; every row has results or an error.
  int errors = 0;
  for (const std::string& line : one) {
    const bool error = line.find("\"error\":\"") != std::string::npos;
    EXPECT_NE(error, line.find("\"results\":{") != std::string::npos) << line;
    errors += error;
  }
  EXPECT_GT(errors, 0);
  EXPECT_LT(errors, kPoints);
}

// mpirun -np 3: rank 0 hands out the points, ranks 1 and 2 run them, one
// file holds every row.
TEST_F(SweepCommandTest, MpirunGivesTheSameRows) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("one.jsonl"), "--threads", "1"}));
  RunResult r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "3", RAILSIM_BINARY, "sweep",
                                      "--config", Path("sweep.json"), "--out", Path("mpi.jsonl"), "--threads", "2"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(SortedLines(Slurp(Path("one.jsonl"))), SortedLines(Slurp(Path("mpi.jsonl"))));
#endif
}

// A bad flag under mpirun: every rank meets it, the line is printed once,
// and every rank ends with exit 2.
TEST_F(SweepCommandTest, MpirunErrorIsPrintedOnce) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  RunResult r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "2", RAILSIM_BINARY, "sweep",
                                      "--config", Path("missing.json"), "--out", Path("mpi.jsonl")});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("", r.out);
  const size_t at = r.err.find("railsim: error: --config: ");
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("railsim: error:", at + 1)) << "printed once: " << r.err;
#endif
}

TEST_F(SweepCommandTest, AKilledSweepResumesWithEveryRowExactlyOnce) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("full.jsonl"), "--threads", "2"}));
  const std::string full = Slurp(Path("full.jsonl"));
  // What a kill leaves: 100 finished rows and half of the 101st.
  size_t cut = 0;
  for (int i = 0; i < 100; ++i) cut = full.find('\n', cut) + 1;
  const size_t partial = cut + (full.find('\n', cut) - cut) / 2;
  std::ofstream(Path("killed.jsonl"), std::ios::binary) << full.substr(0, partial);
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("killed.jsonl"), "--resume", "--threads", "2"}));
  const std::string resumed = Slurp(Path("killed.jsonl"));
  EXPECT_EQ(full.substr(0, cut), resumed.substr(0, cut)) << "finished rows are kept, not redone";
  EXPECT_EQ(SortedLines(full), SortedLines(resumed));
  // Resuming a finished sweep runs nothing and changes nothing.
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("killed.jsonl"), "--resume"}));
  EXPECT_EQ(resumed, Slurp(Path("killed.jsonl")));
}

TEST_F(SweepCommandTest, CsvRowsResumeAfterTheirHeader) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("full.csv"), "--format", "csv", "--threads", "1"}));
  const std::string full = Slurp(Path("full.csv"));
  EXPECT_EQ(kPoints + 1, LineCount(full));
  EXPECT_EQ(0u, full.find("index,points,model,system,gpus,global_batch_size,tp,pp,micro_batch_size,"
                          "iteration_time_s,mfu,"));
  size_t cut = 0;
  for (int i = 0; i < 31; ++i) cut = full.find('\n', cut) + 1;
  std::ofstream(Path("part.csv"), std::ios::binary) << full.substr(0, cut + 5);
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("part.csv"), "--format", "csv", "--resume"}));
  std::string resumed = Slurp(Path("part.csv"));
  EXPECT_EQ(kPoints + 1, LineCount(resumed));
  EXPECT_EQ(full.substr(0, cut), resumed.substr(0, cut));
}

TEST_F(SweepCommandTest, MergeNamesTheMissingPoints) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("s1.jsonl"), "--shard", "1/3"}));
  RunResult r = RunRailsim({"sweep", "--merge", Path("s1.jsonl"), "--out", Path("merged.jsonl")});
  EXPECT_EQ(1, r.status);
  EXPECT_EQ("railsim sweep --merge: 160 of 240 points missing: 0, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, "
            "21, 23, 24, 26, 27, 29, ...\n",
            r.err);
  EXPECT_EQ(80, LineCount(Slurp(Path("merged.jsonl"))));
}

// Two nodes holding different copies of the config (here: the same
// relative path in two working folders, mpirun's -wdir): every rank ends
// with exit 2 and one line naming the file, and --out is not made.
TEST_F(SweepCommandTest, MpirunRanksWithDifferentConfigsEndBeforeWork) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  ASSERT_EQ(0, ::mkdir(Path("node0").c_str(), 0755));
  ASSERT_EQ(0, ::mkdir(Path("node1").c_str(), 0755));
  std::ofstream(Path("node0/sweep.json")) << kConfig;
  std::string other = kConfig;
  other.replace(other.find("\"pp\": [1, 2, 4, 8, 16, 32]"), 26, "\"pp\": [1, 2, 4, 8, 16, 64]");
  std::ofstream(Path("node1/sweep.json")) << other;
  RunResult r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "1", "-wdir", Path("node0"),
                                      RAILSIM_BINARY, "sweep", "--config", "sweep.json", "--out", Path("rows.jsonl"),
                                      ":", "-np", "1", "-wdir", Path("node1"), RAILSIM_BINARY, "sweep", "--config",
                                      "sweep.json", "--out", Path("rows.jsonl")},
                           60);
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("", r.out);
  const std::string line = "railsim: error: mpirun: rank 1's --config file sweep.json differs from rank 0's (the "
                           "same size, other bytes); every rank must run the same command\n";
  const size_t at = r.err.find(line);
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("railsim: error:", at + 1)) << "printed once: " << r.err;
  EXPECT_NE(0, ::access(Path("rows.jsonl").c_str(), F_OK));
  // Different configs by name are named as the argument.
  r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "1", RAILSIM_BINARY, "sweep",
                            "--config", Path("node0/sweep.json"), "--out", Path("rows.jsonl"), ":", "-np", "1",
                            RAILSIM_BINARY, "sweep", "--config", Path("node1/sweep.json"), "--out",
                            Path("rows.jsonl")},
                 60);
  EXPECT_EQ(2, r.status);
  EXPECT_NE(std::string::npos, r.err.find("railsim: error: mpirun: rank 1's --config is " + Path("node1/sweep.json") +
                                          ", rank 0's is " + Path("node0/sweep.json") + "; "))
      << r.err;
  EXPECT_NE(0, ::access(Path("rows.jsonl").c_str(), F_OK));
#endif
}

// A rank that fails after the ranks agreed (its node lacks the model file
// the config names) ends every rank; rank 0 had not written a row, so
// --out is not made (it was left empty).
TEST_F(SweepCommandTest, MpirunRankThatFailsLeavesNoEmptyOut) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  ASSERT_EQ(0, ::mkdir(Path("node0").c_str(), 0755));
  ASSERT_EQ(0, ::mkdir(Path("node1").c_str(), 0755));
  const std::string config = R"({"study": "estimate", "fixed": {"model": "model.json", "system": "dgx-h100",
      "gpus": 8, "global_batch_size": 8, "tp": 8, "pp": 1, "micro_batch_size": 1}})";
  std::ofstream(Path("node0/sweep.json")) << config;
  std::ofstream(Path("node1/sweep.json")) << config;
  std::ofstream(Path("node0/model.json"))
      << Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/models/megatron-1.7b.json");
  RunResult r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "1", "-wdir", Path("node0"),
                                      RAILSIM_BINARY, "sweep", "--config", "sweep.json", "--out", Path("rows.jsonl"),
                                      ":", "-np", "1", "-wdir", Path("node1"), RAILSIM_BINARY, "sweep", "--config",
                                      "sweep.json", "--out", Path("rows.jsonl")},
                           60);
  EXPECT_EQ(2, r.status);
  const std::string line =
      "railsim: error: --config sweep.json: /fixed/model: cannot read 'model.json': No such file or directory\n";
  const size_t at = r.err.find(line);
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("railsim: error:", at + 1)) << "printed once: " << r.err;
  EXPECT_NE(0, ::access(Path("rows.jsonl").c_str(), F_OK));
#endif
}

// --out on a full disk says why.
TEST_F(SweepCommandTest, FullDiskSaysWhy) {
  RunResult r = RunRailsim({"sweep", "--config", Path("sweep.json"), "--out", "/dev/full", "--threads", "2"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("railsim: error: --out: cannot write '/dev/full': No space left on device\n", r.err);
}

// A file the config names (not an argument) that differs between nodes is
// found once every rank has read it.
TEST_F(SweepCommandTest, MpirunRanksWithDifferentModelFilesEndBeforeWork) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  const std::string config = R"({"study": "estimate", "fixed": {"model": "model.json", "system": "dgx-h100",
      "gpus": 8, "global_batch_size": 8, "tp": 8, "pp": 1, "micro_batch_size": 1}})";
  const std::string model = Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/models/megatron-1.7b.json");
  std::string other = model;
  other.replace(other.find("\"num_layers\": 24"), 16, "\"num_layers\": 12");
  ASSERT_NE(model, other);
  for (const std::string node : {"node0", "node1"}) {
    ASSERT_EQ(0, ::mkdir(Path(node).c_str(), 0755));
    std::ofstream(Path(node + "/sweep.json")) << config;
    std::ofstream(Path(node + "/model.json")) << (node == "node0" ? model : other);
  }
  RunResult r = RunProgram("mpirun", {"--allow-run-as-root", "--oversubscribe", "-np", "1", "-wdir", Path("node0"),
                                      RAILSIM_BINARY, "sweep", "--config", "sweep.json", "--out", Path("rows.jsonl"),
                                      ":", "-np", "1", "-wdir", Path("node1"), RAILSIM_BINARY, "sweep", "--config",
                                      "sweep.json", "--out", Path("rows.jsonl")},
                           60);
  EXPECT_EQ(2, r.status);
  const std::string line = "railsim: error: mpirun: rank 1's /fixed/model file model.json differs from rank 0's "
                           "(the same size, other bytes); every rank must read the same files\n";
  const size_t at = r.err.find(line);
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("railsim: error:", at + 1)) << "printed once: " << r.err;
  EXPECT_NE(0, ::access(Path("rows.jsonl").c_str(), F_OK));
#endif
}

}  // namespace
}  // namespace railsim::testutil

namespace railsim::testutil {
namespace {

// --resume on a CSV file without --format csv: refused before the file is
// touched (it used to be rewritten as JSON Lines without its header).
TEST_F(SweepCommandTest, ResumeRefusesAFileOfTheOtherFormat) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("full.csv"), "--format", "csv", "--threads", "2"}));
  const std::string csv = Slurp(Path("full.csv"));
  RunResult r = RunRailsim({"sweep", "--config", Path("sweep.json"), "--out", Path("full.csv"), "--resume"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("railsim: error: --resume: " + Path("full.csv") + " holds CSV rows; resume it with --format csv\n",
            r.err);
  EXPECT_EQ(csv, Slurp(Path("full.csv")));
}

// Two different rows of one point: refused, naming both lines; the same row
// twice: kept once, with a note.
TEST_F(SweepCommandTest, ResumeRefusesTwoDifferentRowsOfOnePoint) {
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("full.jsonl"), "--threads", "2"}));
  const std::string full = Slurp(Path("full.jsonl"));
  const std::string first = full.substr(0, full.find('\n') + 1);
  const size_t index_end = first.find(',');
  std::string other = first;
  other.replace(first.find("\"point\""), 0, "\"x\":1,");
  std::ofstream(Path("twice.jsonl"), std::ios::binary) << full << other;
  RunResult r = RunRailsim({"sweep", "--config", Path("sweep.json"), "--out", Path("twice.jsonl"), "--resume"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ(fmt::format("railsim: error: --resume: {0}:{1}: point {2} differs from its row at {0}:1; keep one of "
                        "them\n",
                        Path("twice.jsonl"), kPoints + 1, first.substr(9, index_end - 9)),
            r.err);
  std::ofstream(Path("twice.jsonl"), std::ios::binary) << full << first;
  r = RunRailsim({"sweep", "--config", Path("sweep.json"), "--out", Path("twice.jsonl"), "--resume"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ(fmt::format("railsim: warning: {0}:{1}: point {2} repeats the row at {0}:1: dropped\n",
                        Path("twice.jsonl"), kPoints + 1, first.substr(9, index_end - 9)),
            r.err);
  EXPECT_EQ(full, Slurp(Path("twice.jsonl")));
}

// --merge refuses a garbage line and an index out of range, naming the file
// and line (both were dropped in silence), and says which cut-off line it
// drops.
TEST_F(SweepCommandTest, MergeRefusesLinesThatAreNotRows) {
  // One thread writes in index order, as the merge does.
  ASSERT_NO_FATAL_FAILURE(Sweep({"--out", Path("s0.jsonl"), "--shard", "0/2", "--threads", "1"}));
  const std::string s0 = Slurp(Path("s0.jsonl"));
  std::ofstream(Path("garbage.jsonl"), std::ios::binary) << s0 << "garbage\n";
  RunResult r = RunRailsim({"sweep", "--merge", Path("garbage.jsonl")});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ(fmt::format("railsim: error: --merge: {}:{}: expected a row of railsim sweep (JSON Lines or CSV) or "
                        "its CSV header, got 'garbage'\n",
                        Path("garbage.jsonl"), kPoints / 2 + 1),
            r.err);
  std::ofstream(Path("range.jsonl"), std::ios::binary)
      << s0 << R"({"index":-4,"points":240,"point":{},"results":{}})" << "\n";
  r = RunRailsim({"sweep", "--merge", Path("range.jsonl")});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ(fmt::format("railsim: error: --merge: {}:{}: point index -4 is outside 0 to 239 (the sweep has 240 "
                        "points)\n",
                        Path("range.jsonl"), kPoints / 2 + 1),
            r.err);
  std::ofstream(Path("cut.jsonl"), std::ios::binary) << s0 << "{\"index\":1,";
  r = RunRailsim({"sweep", "--merge", Path("cut.jsonl"), "--out", Path("merged.jsonl")});
  EXPECT_EQ(1, r.status);  // the odd points are missing
  EXPECT_EQ(0u, r.err.find(fmt::format("railsim: warning: {}:{}: the last line has no newline (a sweep stopped "
                                       "mid-write?): dropped, 11 bytes\n",
                                       Path("cut.jsonl"), kPoints / 2 + 1)))
      << r.err;
  EXPECT_EQ(s0, Slurp(Path("merged.jsonl")));
}

}  // namespace
}  // namespace railsim::testutil
