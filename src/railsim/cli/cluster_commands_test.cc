// `railsim cluster` end to end: the same JSON whatever --threads, the per-job
// table of --out, and every reference trace read and replayed.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

std::string Trace(const std::string& name) {
  return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/job-traces/" + name;
}

TEST(ClusterCommandTest, SameJsonWhateverTheThreadsAndAJobTable) {
  const std::string dir = MakeTempDir();
  const std::vector<std::string> base = {"cluster", "--trace", Trace("lingjun2023-jobs.csv"), "--gpus", "1024",
                                         "--policy", "all", "--format", "json"};
  std::vector<std::string> one = base, two = base;
  one.insert(one.end(), {"--threads", "1", "--out", dir + "/jobs.csv"});
  two.insert(two.end(), {"--threads", "2"});
  RunResult a = RunRailsim(one), b = RunRailsim(two);
  ASSERT_EQ(0, a.status) << a.err;
  ASSERT_EQ(0, b.status) << b.err;
  EXPECT_EQ(a.out, b.out);
  nlohmann::json j = nlohmann::json::parse(a.out);
  ASSERT_EQ(j["runs"].size(), 15u);  // 3 designs x 5 policies
  for (const auto& run : j["runs"]) {
    EXPECT_EQ(run["jobs_placed"].get<int64_t>() + run["jobs_unplaceable"].get<int64_t>(), 2498);
  }
  // Header + every job of every run.
  EXPECT_EQ(LineCount(Slurp(dir + "/jobs.csv")), 1 + 15 * 2498);
}

TEST(ClusterCommandTest, EveryReferenceTraceReplays) {
  for (std::string name : {"lingjun2023-jobs.csv", "philly2017-jobs.csv", "alibaba-gpu2023-jobs.csv"}) {
    RunResult r = RunRailsim({"cluster", "--trace", Trace(name), "--gpus", "2048", "--network", "rail-only",
                              "--policy", "domain-packing", "--samples", "200", "--format", "csv"});
    ASSERT_EQ(0, r.status) << name << ": " << r.err;
    EXPECT_EQ(2, LineCount(r.out)) << name;
  }
  RunResult map = RunRailsim({"cluster", "--trace", Trace("lingjun2023-jobs.csv"), "--topology",
                              Trace("lingjun2023-topo.csv"), "--policy", "first-fit", "--format", "csv"});
  ASSERT_EQ(0, map.status) << map.err;
  EXPECT_NE(std::string::npos, map.out.find("switch-map,first-fit,"));
}

}  // namespace
}  // namespace railsim::testutil
