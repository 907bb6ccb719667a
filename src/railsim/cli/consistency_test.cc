// Every printed number physical and every command agreeing with its docs and
// its siblings, end to end through the binary: MFU under 100% at half a
// million tokens, memory in whole bytes, one --threads range, cost's JSON as
// docs/cost.md shows it, sizes pasted from nccl-tests, real nccl-tests logs
// with launcher lines, and calibrate's held-out count.
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

nlohmann::json JsonOf(const Args& args) {
  RunResult r = RunRailsim(args);
  EXPECT_EQ(0, r.status) << r.err;
  return nlohmann::json::parse(r.out);
}

const Args kLongSequence = {"estimate", "--model", "llama3.1-8b", "--system", "dgx-h100", "--gpus", "64", "--tp", "8",
                            "--cp", "8", "--pp", "1", "--global-batch-size", "1", "--micro-batch-size", "1",
                            "--seq-length", "524288", "--sequence-parallel", "--distributed-optimizer"};

TEST(ConsistencyTest, LongSequenceStaysUnderThePeak) {
  // It printed 1039.2 TFLOP/s per GPU and MFU 105.1% on a 989 TFLOP/s H100.
  Args json = kLongSequence;
  json.insert(json.end(), {"--format", "json"});
  nlohmann::json j = JsonOf(json);
  EXPECT_LE(j["mfu"].get<double>(), 1.0);
  EXPECT_LE(j["hfu"].get<double>(), 1.0);
  EXPECT_LE(j["tflops_per_gpu"].get<double>(), 989.0);
  RunResult table = RunRailsim(kLongSequence);
  ASSERT_EQ(0, table.status) << table.err;
  const size_t at = table.out.find("MFU ");
  ASSERT_NE(std::string::npos, at) << table.out;
  EXPECT_LT(std::stod(table.out.substr(at + 4)), 100.0) << table.out;
}

TEST(ConsistencyTest, MemoryIsWholeBytes) {
  Args args = kLongSequence;
  args.insert(args.end(), {"--format", "json"});
  nlohmann::json j = JsonOf(args);
  EXPECT_TRUE(j["memory_per_gpu_bytes"].is_number_integer()) << j["memory_per_gpu_bytes"];
  EXPECT_TRUE(j["memory_capacity_bytes"].is_number_integer()) << j["memory_capacity_bytes"];
  for (const auto& [key, value] : j["memory"].items()) EXPECT_TRUE(value.is_number_integer()) << key << " " << value;
  // The parts add up to the total, to the byte.
  int64_t sum = 0;
  for (const char* part : {"weights_bytes", "fp8_weights_bytes", "gradients_bytes", "optimizer_bytes",
                           "activations_bytes", "reserved_bytes"}) {
    sum += j["memory"][part].get<int64_t>();
  }
  EXPECT_EQ(j["memory"]["total_bytes"].get<int64_t>(), sum);
  EXPECT_EQ(j["memory_per_gpu_bytes"].get<int64_t>(), sum);
}

TEST(ConsistencyTest, ThreadsTakeOneRangeEverywhere) {
  // search and sweep took up to 1024, alltoall and collective 256.
  for (Args args : {Args{"alltoall", "--system", "dgx-a100", "--gpus", "72", "--bytes-per-pair", "1MB", "--network",
                         "rail-only"},
                    Args{"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes",
                         "64MiB", "--group", "dp", "--tp", "8"}}) {
    args.insert(args.end(), {"--threads", "1024"});
    RunResult r = RunRailsim(args);
    EXPECT_EQ(0, r.status) << args[0] << ": " << r.err;
  }
}

TEST(ConsistencyTest, CostJsonIsTheObjectItsDocsShow) {
  nlohmann::json j = JsonOf({"cost", "--gpus", "4096", "--hb-size", "8", "--radix", "64", "--format", "json"});
  ASSERT_TRUE(j.is_object());
  ASSERT_TRUE(j["designs"].is_array());
  EXPECT_EQ(3u, j["designs"].size());
  const std::string docs = Slurp(std::string(RAILSIM_SOURCE_DIR) + "/docs/cost.md");
  EXPECT_NE(std::string::npos, docs.find("JSON: an object, `{\"designs\": [...]}`")) << docs;
}

TEST(ConsistencyTest, BareSizesAreBytesAsNcclTestsPrintsThem) {
  const Args collective = {"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--group",
                           "dp", "--tp", "8", "--format", "json", "--bytes"};
  Args bare = collective, unit = collective;
  bare.push_back("1048576");
  unit.push_back("1MiB");
  EXPECT_EQ(JsonOf(unit), JsonOf(bare));
  const Args alltoall = {"alltoall", "--system", "dgx-a100", "--gpus", "72", "--network", "rail-only", "--format",
                         "json", "--bytes-per-pair"};
  bare = alltoall;
  unit = alltoall;
  bare.push_back("65536");
  unit.push_back("64KiB");
  EXPECT_EQ(JsonOf(unit), JsonOf(bare));
}

// A log as a cluster prints it: ssh's warning, NCCL's bare version line
// (read, not skipped) and mpirun's notes around nccl-tests' own output, run
// with --holdout 0.9 on its one row. One row of one node count constrains
// nothing: no parameter is fitted, so no warning, and the notes say why.
TEST(ConsistencyTest, CalibrateReadsRealLogsAndCountsHeldOutRows) {
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/all_reduce_perf.txt";
  {
    std::ofstream out(path);
    out << "Warning: Permanently added 'node-1' (ED25519) to the list of known hosts.\n"
           "NCCL version 2.27.7+cuda12.8\n"
           "# nThread 1 nGpus 1 minBytes 33554432 maxBytes 33554432 step: 2(factor) warmup iters: 5 iters: 20\n";
    for (int rank = 0; rank < 64; ++rank) {
      out << "#  Rank " << rank << " Group  0 Pid 1 on node-" << rank / 8 << " device " << rank % 8
          << " [0000:04:00] NVIDIA H100 80GB HBM3\n";
    }
    out << "[node-0:01234] 15 more processes have sent help message help-mpi-btl-openib.txt\n"
           "    33554432       8388608     float     sum      -1   761.56   44.06   86.74       0   737.14   45.52   "
           "89.62       0\n";
  }
  RunResult r = RunRailsim({"calibrate", "--system", "aws-p5", "--nccl-tests", path, "--holdout", "0.9"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(0u, r.out.find("railsim calibrate: aws-p5-calibrated (seed 23, 0 of 1 rows held out)\n")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("\nnote: " + path + ": 2 lines skipped")) << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("\nwarning: ")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("(no communication parameter moved: the notes say why)")) << r.out;
  EXPECT_NE(std::string::npos, r.out.find("\nnote: left at the base: one node count in the data: "
                                          "nccl.nic_reported_latency_us (8 nodes);"))
      << r.out;
  EXPECT_EQ(std::string::npos, r.out.find("inf%")) << r.out;
  nlohmann::json j =
      JsonOf({"calibrate", "--system", "aws-p5", "--nccl-tests", path, "--holdout", "0.9", "--format", "json"});
  EXPECT_EQ(0, j["held_out_rows"]);
  ASSERT_LE(1u, j["notes"].size());
  EXPECT_EQ(path + ": 2 lines skipped (neither results nor headers), the first at line 1: "
                   "'Warning: Permanently added 'node-1' (ED2...'",
            j["notes"][0]);
  EXPECT_EQ(0u, j["warnings"].size());
  for (const nlohmann::json& p : j["parameters"]) EXPECT_FALSE(p["fitted"].get<bool>()) << p["key"];
}

}  // namespace
}  // namespace railsim::testutil
