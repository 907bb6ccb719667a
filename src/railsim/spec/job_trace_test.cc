// Job traces and switch maps: the four reference files, every cell checked
// with its line and column, and the synthetic generator.
#include "railsim/spec/job_trace.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::spec {
namespace {

std::string Data(const std::string& name) { return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/job-traces/" + name; }

std::string ErrorOf(const std::string& text) {
  try {
    ParseJobTrace(text, "--trace t.csv");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(JobTraceTest, ReadsTheReferenceTraces) {
  JobTrace lingjun = LoadJobTrace(Data("lingjun2023-jobs.csv"), "--trace");
  ASSERT_EQ(lingjun.jobs.size(), 2498u);  // README: 2,498 jobs, largest 744 GPUs
  int64_t largest = 0;
  for (const TraceJob& j : lingjun.jobs) largest = std::max(largest, j.gpus);
  EXPECT_EQ(largest, 744);
  EXPECT_EQ(LoadJobTrace(Data("philly2017-jobs.csv"), "--trace").jobs.size(), 111549u);
  JobTrace openb = LoadJobTrace(Data("alibaba-gpu2023-jobs.csv"), "--trace");
  EXPECT_EQ(openb.jobs.size(), 6203u);
  EXPECT_EQ(openb.jobs[0].state, "running");
}

TEST(JobTraceTest, ReadsTheLingjunSwitchMap) {
  SwitchMap map = LoadSwitchMap(Data("lingjun2023-topo.csv"), "--topology");
  EXPECT_EQ(map.hosts(), 847);  // README: 847 hosts, 48 ASW, 3 PSW
  EXPECT_EQ(map.tor_names.size(), 48u);
  EXPECT_EQ(map.psw_names.size(), 3u);
  size_t three = 0;
  for (const std::vector<int32_t>& up : map.tor_psws) three += up.size() == 3;
  EXPECT_EQ(three, 29u);  // 29 ASWs uplink to 3 PSWs
}

// A spreadsheet's UTF-8 byte-order mark before the header is not part of
// the first column's name.
TEST(JobTraceTest, ByteOrderMarkIsSkipped) {
  const JobTrace t = ParseJobTrace("\xEF\xBB\xBFsubmit_s,duration_s,gpus\n0,60,8\n", "--trace t.csv");
  ASSERT_EQ(1u, t.jobs.size());
  EXPECT_EQ(8, t.jobs[0].gpus);
}

TEST(JobTraceTest, ErrorsNameLineAndColumn) {
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus\n0,10,8\n5,x,8\n"),
            "--trace t.csv: line 3, column 'duration_s': expected seconds in [0, 315360000], got 'x'");
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus\n0,10,0\n"),
            "--trace t.csv: line 2, column 'gpus': expected an integer in [1, 1048576], got '0'");
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus\n0,10\n"), "--trace t.csv: line 2: expected 3 cells, found 2");
  EXPECT_EQ(ErrorOf("submit_s,duration_s\n0,10\n"), "--trace t.csv: line 1: missing required column 'gpus'");
  EXPECT_NE(ErrorOf("submit_s,duraton_s,gpus\n").find("did you mean 'duration_s'"), std::string::npos);
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus,gpus_per_server\n0,1,16,8+4\n"),
            "--trace t.csv: line 2, column 'gpus_per_server': GPUs per server '8+4' add up to 12, not the job's 16");
  EXPECT_EQ(ErrorOf(""), "--trace t.csv: empty trace: expected a header line with submit_s, duration_s, gpus");
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus\n"), "--trace t.csv: no jobs after the header line");
  EXPECT_EQ(ErrorOf("submit_s,duration_s,gpus\n-1,1,1\n"),
            "--trace t.csv: line 2, column 'submit_s': expected seconds in [0, 315360000], got '-1'");
}

TEST(JobTraceTest, SwitchMapErrors) {
  EXPECT_THROW(ParseSwitchMap("host,asw,psw\nh1,S1,P1\nh1,S2,P1\n", "--topology"), Error);
  EXPECT_THROW(ParseSwitchMap("host,asx,psw\n", "--topology"), Error);
  EXPECT_THROW(ParseSwitchMap("host,asw,psw\n", "--topology"), Error);
  SwitchMap m = ParseSwitchMap("host,asw,psw,dsw\nh1,S1,P2,G\nh1,S1,P1,G\nh2,S2,P1,G\n", "--topology");
  EXPECT_EQ(m.hosts(), 2);
  EXPECT_EQ(m.tor_psws[0], (std::vector<int32_t>{0, 1}));
}

TEST(JobTraceTest, SyntheticIsDeterministicAndFollowsTheMix) {
  SyntheticTraceOptions o;
  o.jobs = 20000;
  JobTrace a = MakeSyntheticTrace(o), b = MakeSyntheticTrace(o);
  ASSERT_EQ(a.jobs.size(), 20000u);
  std::vector<double> durations;
  int64_t eight = 0;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].submit_s, b.jobs[i].submit_s);
    EXPECT_EQ(a.jobs[i].gpus, b.jobs[i].gpus);
    durations.push_back(a.jobs[i].duration_s);
    eight += a.jobs[i].gpus == 8;
  }
  std::sort(durations.begin(), durations.end());
  EXPECT_NEAR(durations[10000], 420, 30);              // the median asked for
  EXPECT_NEAR(durations[18000], 17940, 17940 * 0.1);  // and the 90th percentile
  EXPECT_NEAR(double(eight) / 20000, 0.463, 0.02);
  // 10 jobs per hour: the last of 20,000 arrives near 2,000 hours.
  EXPECT_NEAR(a.jobs.back().submit_s / 3600, 2000, 60);
  o.seed = 2;
  EXPECT_NE(MakeSyntheticTrace(o).jobs[5].duration_s, a.jobs[5].duration_s);
}

TEST(JobTraceTest, SizeMixAndSyntheticBounds) {
  SyntheticTraceOptions o;
  ParseSizeMix("8:0.5, 64:0.5", "--size-mix", &o);
  EXPECT_EQ(o.size_buckets, (std::vector<int64_t>{8, 64}));
  EXPECT_THROW(ParseSizeMix("8", "--size-mix", &o), Error);
  EXPECT_THROW(ParseSizeMix("8:x", "--size-mix", &o), Error);
  o.duration_p90_s = o.duration_median_s;
  EXPECT_THROW(ValidateSyntheticOptions(o), Error);
}

}  // namespace
}  // namespace railsim::spec
