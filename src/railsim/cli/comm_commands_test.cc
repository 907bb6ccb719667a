// End-to-end tests of `alltoall` and `collective` under mpirun: the flows
// split over 2 and 3 ranks give the single process's JSON byte for byte,
// only rank 0 prints, and an error is one line and exit 2.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

#ifdef RAILSIM_MPIRUN_TEST
RunResult Mpirun(int ranks, const Args& args) {
  Args all = {"--allow-run-as-root", "--oversubscribe", "-np", std::to_string(ranks), RAILSIM_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  return RunProgram("mpirun", all);
}
#endif

// A few thousand flows each: Rail-only's forwarded all-to-all, sequential
// on ECMP and pipelined on d-mod-k, each with its simulated rail-optimized
// baseline (direct, over a radix-8 fabric's spines); a ring all-reduce
// whose steps repeat (rail-optimized, ECMP); a pipelined forwarded
// all-to-all as a collective (Rail-only, ECMP).
TEST(CommCommandsTest, MpirunGivesTheSameJson) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  const std::string dir = MakeTempDir();
  const Args alltoall = {"alltoall", "--system", "dgx-h100", "--gpus", "64", "--bytes-per-pair", "1MB", "--network",
                         "rail-only", "--radix", "8", "--baseline", "simulate", "--simulate", "--format", "json"};
  Args sequential = alltoall, pipelined = alltoall;
  sequential.insert(sequential.end(), {"--routing", "ecmp"});
  pipelined.insert(pipelined.end(), {"--routing", "d-mod-k", "--schedule", "pipelined", "--chunks", "4"});
  const Args ring = {"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes", "64MiB",
                     "--group", "dp", "--tp", "8", "--network", "rail-optimized", "--radix", "8", "--routing",
                     "ecmp", "--simulate", "--format", "json"};
  const Args forwarded = {"collective", "--system", "dgx-h100", "--gpus", "64", "--op", "all-to-all", "--bytes",
                          "16MiB", "--group", "all", "--algorithm", "forwarded", "--schedule", "pipelined",
                          "--network", "rail-only", "--routing", "ecmp", "--simulate", "--format", "json"};
  for (const Args& args : {sequential, pipelined, ring, forwarded}) {
    Args one_args = args;
    one_args.insert(one_args.end(), {"--export-links", dir + "/one.csv"});
    RunResult one = RunRailsim(one_args);
    ASSERT_EQ(0, one.status) << one.err;
    for (int ranks : {2, 3}) {
      const std::string csv = dir + "/ranks" + std::to_string(ranks) + ".csv";
      Args mpi_args = args;
      mpi_args.insert(mpi_args.end(), {"--export-links", csv});
      RunResult r = Mpirun(ranks, mpi_args);
      ASSERT_EQ(0, r.status) << r.err;
      EXPECT_EQ(one.out, r.out) << args[0] << " on " << ranks << " ranks";
      EXPECT_EQ("", r.err);
      EXPECT_EQ(Slurp(dir + "/one.csv"), Slurp(csv)) << args[0] << " on " << ranks << " ranks";
    }
  }
#endif
}

// Every rank meets the same bad flag: one line, exit 2, nothing on stdout.
TEST(CommCommandsTest, MpirunErrorEndsEveryRank) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  RunResult r = Mpirun(2, {"alltoall", "--system", "dgx-h100", "--gpus", "64", "--bytes-per-pair", "1MB",
                           "--simulate", "--format", "jsn"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("", r.out);
  const std::string line = "railsim: error: --format: expected one of table, json, got 'jsn' (did you mean 'json'?)\n";
  const size_t at = r.err.find(line);
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find(line, at + 1)) << "printed once: " << r.err;
#endif
}

#ifdef RAILSIM_MPIRUN_TEST
// mpirun's MPMD form, one rank each: -np 1 A : -np 1 B.
RunResult MpirunTwo(const Args& zero, const Args& one) {
  Args all = {"--allow-run-as-root", "--oversubscribe", "-np", "1", RAILSIM_BINARY};
  all.insert(all.end(), zero.begin(), zero.end());
  all.insert(all.end(), {":", "-np", "1", RAILSIM_BINARY});
  all.insert(all.end(), one.begin(), one.end());
  return RunProgram("mpirun", all, 60);
}

// One line, exit 2, nothing on stdout: what every disagreement ends in.
void ExpectDisagreement(const RunResult& r, const std::string& clause) {
  EXPECT_EQ(2, r.status) << r.err;
  EXPECT_EQ("", r.out);
  const std::string line = "railsim: error: mpirun: " + clause + "; every rank must run the same command\n";
  const size_t at = r.err.find(line);
  ASSERT_NE(std::string::npos, at) << r.err;
  EXPECT_EQ(std::string::npos, r.err.find("railsim: error:", at + 1)) << "printed once: " << r.err;
}
#endif

// Ranks given different commands end at once with the first difference
// named, before any work: a different --gpus corrupted the heap inside
// MPI_Allreduce, a different op or subcommand hung forever.
TEST(CommCommandsTest, MpirunRanksThatDisagreeEndWithTheDifference) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  const Args alltoall = {"alltoall", "--system", "dgx-h100", "--bytes-per-pair", "1MB", "--network", "rail-only",
                         "--radix", "8", "--simulate", "--format", "json", "--gpus"};
  Args gpus64 = alltoall, gpus128 = alltoall;
  gpus64.push_back("64");
  gpus128.push_back("128");
  ExpectDisagreement(MpirunTwo(gpus64, gpus128), "rank 1's --gpus is 128, rank 0's is 64");
  const Args collective = {"collective", "--system", "dgx-h100", "--gpus", "128", "--bytes", "64MiB", "--group",
                           "dp", "--tp", "8", "--simulate", "--op"};
  Args reduce = collective, gather = collective;
  reduce.push_back("all-reduce");
  gather.push_back("all-gather");
  ExpectDisagreement(MpirunTwo(reduce, gather), "rank 1's --op is all-gather, rank 0's is all-reduce");
  ExpectDisagreement(MpirunTwo(gpus64, reduce), "rank 1 runs 'railsim collective', rank 0 runs 'railsim alltoall'");
  Args fewer = reduce;
  fewer.erase(fewer.begin() + 11);  // --simulate
  ExpectDisagreement(MpirunTwo(reduce, fewer), "rank 1's argument 12 is '--op', rank 0's is '--simulate'");
#endif
}

}  // namespace
}  // namespace railsim::testutil
