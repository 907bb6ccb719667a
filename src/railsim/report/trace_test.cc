#include "railsim/report/trace.h"

#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "railsim/request/job_flags.h"

namespace railsim::report {
namespace {

struct EstimateRun {
  request::Job job;
  spec::Strategy strategy;
  perf::Estimate estimate;
};

EstimateRun EstimateOf(const request::JobFlags& job_flags, const request::StrategyFlags& strategy_flags) {
  EstimateRun r{request::ParseJob(job_flags), {}, {}};
  r.strategy = request::ParseStrategy(strategy_flags, r.job.context, r.job.global_batch, r.job.attention);
  r.estimate = perf::EstimateIteration(r.job.context, r.strategy);
  return r;
}

// Seconds per (track, cat) and per track, read back from the trace file's JSON.
struct Sums {
  std::map<int, std::map<std::string, double>> by_key;
  std::map<int, double> total, end;
};

Sums ReadTrace(const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text);  // throws on invalid JSON
  EXPECT_TRUE(doc.at("traceEvents").is_array());
  Sums s;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    const std::string ph = e.at("ph");
    EXPECT_TRUE(ph == "X" || ph == "M") << ph;
    EXPECT_EQ(e.at("pid"), 1);
    if (ph != "X") continue;
    const int tid = e.at("tid");
    const double ts = e.at("ts"), dur = e.at("dur");
    EXPECT_GE(ts, 0);
    EXPECT_GT(dur, 0);
    // Spans of a track follow each other without overlapping.
    EXPECT_GE(ts, s.end[tid] - 1e-6) << e.dump();
    s.end[tid] = ts + dur;
    s.by_key[tid][e.at("cat").get<std::string>()] += dur / 1e6;
    s.total[tid] += dur / 1e6;
  }
  return s;
}

TEST(TraceTest, EachStageTrackAddsUpToTheBreakdownAndTheIterationTime) {
  request::JobFlags job;
  job.model.model = "gpt3-175b";
  job.system = "dgx-h100";
  job.gpus = "1024";
  job.global_batch = "1536";
  request::StrategyFlags s;
  s.tp = "8";
  s.pp = "8";
  s.micro_batch = "1";
  s.sequence_parallel = true;
  const EstimateRun r = EstimateOf(job, s);
  const perf::TimeBreakdown& b = r.estimate.breakdown;
  const Sums sums = ReadTrace(TraceJson(BuildIterationTrace(r.job.context, r.strategy, r.estimate)));
  ASSERT_EQ(sums.total.size(), 2u);  // first and last stage; nothing hidden
  for (int track : {0, 1}) {
    for (const perf::TimeBreakdown::Component& c : b.components()) {
      const double traced = sums.by_key.at(track).count(c.key) ? sums.by_key.at(track).at(c.key) : 0.0;
      EXPECT_NEAR(traced, c.seconds, 1e-9 * r.estimate.iteration_time_s) << "track " << track << " " << c.key;
    }
    std::printf("track %d: spans add up to %.6f s, estimate prints %.6f s\n", track, sums.total.at(track),
                r.estimate.iteration_time_s);
    EXPECT_NEAR(sums.total.at(track), r.estimate.iteration_time_s, 1e-9 * r.estimate.iteration_time_s);
    EXPECT_NEAR(sums.end.at(track) / 1e6, r.estimate.iteration_time_s, 1e-9 * r.estimate.iteration_time_s);
  }
  EXPECT_GT(b.bubble_s, 0);  // 8 stages: a bubble to draw
}

TEST(TraceTest, HiddenMoeDispatchIsOnItsOwnTrack) {
  request::JobFlags job;
  job.model.model = "deepseek-v3";
  job.system = "dgx-h100";
  job.gpus = "2048";
  job.global_batch = "4096";
  request::StrategyFlags s;
  s.tp = "1";
  s.pp = "16";
  s.ep = "64";
  s.micro_batch = "1";
  s.moe.overlap = true;
  const EstimateRun r = EstimateOf(job, s);
  const IterationTrace trace = BuildIterationTrace(r.job.context, r.strategy, r.estimate);
  ASSERT_EQ(trace.tracks.size(), 3u);
  EXPECT_EQ(trace.tracks[2], "overlapped communication");
  const Sums sums = ReadTrace(TraceJson(trace));
  ASSERT_GT(r.estimate.breakdown.ep_comm_hidden_s, 0);
  EXPECT_NEAR(sums.by_key.at(2).at("ep_comm_hidden_s"), r.estimate.breakdown.ep_comm_hidden_s,
              1e-9 * r.estimate.iteration_time_s);
  // The picture: a PNG (its signature), wider than tall.
  const std::string png = TracePng(trace);
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

}  // namespace
}  // namespace railsim::report
