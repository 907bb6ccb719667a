// End-to-end tests of --gpus-per-domain: what the commands print for a job
// on part of each HB domain, and that giving all K GPUs changes nothing.
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

Args Plus(Args base, const Args& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

// Every command that takes the flag, run with and without `--gpus-per-domain
// K`, in each format: the same bytes.
TEST(GpusPerDomainTest, AllOfEachDomainIsTheDefaultByteForByte) {
  const std::vector<Args> runs = {
      {"estimate", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "1024", "--tp", "8", "--pp", "8",
       "--global-batch-size", "512", "--micro-batch-size", "1"},
      {"search", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "256", "--global-batch-size", "256",
       "--top", "3"},
      {"traffic", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "64", "--tp", "8", "--pp", "4",
       "--global-batch-size", "64", "--micro-batch-size", "1"},
      {"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes", "64MiB", "--group",
       "dp", "--tp", "8", "--simulate"},
      {"failures", "--gpus", "256", "--network", "rail-only", "--radix", "16", "--fail", "nic3"},
  };
  std::vector<Args> all;
  for (const Args& run : runs) {
    for (const char* format : {"table", "json"}) {
      const Args base = Plus(run, {"--format", format});
      all.push_back(base);
      all.push_back(Plus(base, {"--gpus-per-domain", "8"}));
    }
  }
  const std::vector<RunResult> results = RunRailsimMany(all);
  for (size_t i = 0; i < results.size(); i += 2) {
    ASSERT_EQ(0, results[i].status) << all[i][0] << ": " << results[i].err;
    ASSERT_EQ(0, results[i + 1].status) << all[i + 1][0] << ": " << results[i + 1].err;
    // The search's table says how long it took: the one number that may differ.
    const std::regex elapsed("[0-9.]+ s on [0-9]+ thread");
    EXPECT_EQ(std::regex_replace(results[i].out, elapsed, "T"), std::regex_replace(results[i + 1].out, elapsed, "T"))
        << all[i][0] << " " << all[i].back();
  }
}

const Args kGb200 = {"estimate", "--model", "llama3-70b", "--system", "gb200-nvl72", "--gpus", "256", "--tp", "8",
                     "--pp", "8", "--global-batch-size", "256", "--micro-batch-size", "1", "--gpus-per-domain", "64"};

// 256 GPUs on 4 NVL72 racks, 64 of each: 8 idle per rack, 32 in all.
TEST(GpusPerDomainTest, EstimateSaysWhatTheJobOccupies) {
  RunResult table = RunRailsim(kGb200);
  ASSERT_EQ(0, table.status) << table.err;
  EXPECT_NE(std::string::npos, table.out.find(", HB domain 72)\nGPUs: 4 HB domains of 72, 64 GPUs used in each (32 "
                                              "idle)\n"))
      << table.out;
  RunResult json = RunRailsim(Plus(kGb200, {"--format", "json"}));
  ASSERT_EQ(0, json.status) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(256, j["gpus"]);
  EXPECT_EQ(72, j["hb_domain_size"]);
  EXPECT_EQ(64, j["gpus_per_domain"]);
  EXPECT_EQ(4, j["hb_domains"]);
  EXPECT_EQ(32, j["idle_gpus_in_domains"]);
  EXPECT_EQ(72, j["network_timed"]["hb_domain_size"]);
}

// search --gpus-per-domain auto: the segments of 64, 16 and 4 GPUs, each
// result saying its own.
TEST(GpusPerDomainTest, SearchTriesTheSegments) {
  const Args search = {"search", "--model", "llama3.1-8b", "--system", "gb200-nvl72", "--gpus", "256",
                       "--global-batch-size", "256", "--gpus-per-domain", "auto", "--top", "50"};
  RunResult json = RunRailsim(Plus(search, {"--format", "json"}));
  ASSERT_EQ(0, json.status) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ((std::vector<int64_t>{64, 16, 4}), j["gpus_per_domain_tried"].get<std::vector<int64_t>>());
  EXPECT_FALSE(j.contains("gpus_per_domain"));
  ASSERT_FALSE(j["results"].empty());
  for (const nlohmann::json& r : j["results"]) {
    const int64_t n = r["gpus_per_domain"];
    EXPECT_TRUE(n == 64 || n == 16 || n == 4) << n;
    EXPECT_EQ(256 / n, r["hb_domains"]);
    EXPECT_EQ(256 / n * (72 - n), r["idle_gpus_in_domains"]);
  }
  RunResult table = RunRailsim(search);
  ASSERT_EQ(0, table.status) << table.err;
  EXPECT_NE(std::string::npos, table.out.find("GPUs used per HB domain of 72, tried: 64, 16, 4")) << table.out;
  EXPECT_NE(std::string::npos, table.out.find("GPUs/domain")) << table.out;
  RunResult csv = RunRailsim(Plus(search, {"--format", "csv"}));
  ASSERT_EQ(0, csv.status) << csv.err;
  EXPECT_NE(std::string::npos, csv.out.substr(0, csv.out.find('\n')).find(",gpus_per_domain")) << csv.out;
}

// The sweep key gives what the flag gives.
TEST(GpusPerDomainTest, SweepKeyMatchesTheFlag) {
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/sweep.json") << R"({"study": "estimate", "fixed": {"model": "llama3-70b",
      "system": "gb200-nvl72", "gpus": 256, "global_batch_size": 256, "tp": 8, "pp": 8, "micro_batch_size": 1,
      "gpus_per_domain": 64}})";
  RunResult sweep = RunRailsim({"sweep", "--config", dir + "/sweep.json", "--out", dir + "/rows.jsonl"});
  ASSERT_EQ(0, sweep.status) << sweep.err;
  const std::string rows = Slurp(dir + "/rows.jsonl");
  const nlohmann::json row = nlohmann::json::parse(rows.substr(0, rows.find('\n')));
  RunResult estimate = RunRailsim(Plus(kGb200, {"--format", "json"}));
  ASSERT_EQ(0, estimate.status) << estimate.err;
  EXPECT_EQ(nlohmann::json::parse(estimate.out)["iteration_time_s"].get<double>(),
            row["results"]["iteration_time_s"].get<double>());
}

}  // namespace
}  // namespace railsim::testutil
