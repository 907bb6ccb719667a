// The per-iteration fixed cost is an input of the run: the run's
// --iteration-overhead wins over its stack profile's, which wins over the
// system preset's; a scenario's jobs carry it and round-trip it.

#include <cmath>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "railsim/core/error.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/scenario.h"
#include "railsim/request/job_flags.h"

namespace railsim::study {
namespace {

request::JobFlags Gpt3Job(const std::string& overhead, const std::string& stack = "megatron-core") {
  request::JobFlags job;
  job.model.model = "gpt3-175b";
  job.system = "dgx-h100";
  job.gpus = "1024";
  job.global_batch = "1536";
  job.stack = stack;
  job.iteration_overhead = overhead;
  return job;
}

perf::Estimate EstimateOf(const request::JobFlags& flags) {
  const request::Job job = request::ParseJob(flags);
  // Not assigned from literals: GCC 12 warns falsely (-Wrestrict) when a
  // short literal is assigned to a std::string here.
  const std::string eight = "8", one = "1";
  request::StrategyFlags s;
  s.tp = eight;
  s.pp = eight;
  s.micro_batch = one;
  s.sequence_parallel = true;
  return perf::EstimateIteration(job.context, request::ParseStrategy(s, job.context, job.global_batch, job.attention));
}

TEST(IterationOverheadTest, RunValueWinsOverStackAndSystem) {
  // The presets' own per-iteration cost is production's: none.
  EXPECT_EQ(0.0, request::ParseJob(Gpt3Job("")).context.gpu.iteration_overhead_s);
  EXPECT_DOUBLE_EQ(0.15, request::ParseJob(Gpt3Job("150ms")).context.gpu.iteration_overhead_s);
  EXPECT_DOUBLE_EQ(0.15, request::ParseJob(Gpt3Job("150ms", "nemo")).context.gpu.iteration_overhead_s);
  // A system file's own cost applies when neither the run nor the stack sets one.
  request::JobFlags from_system = Gpt3Job("");
  nlohmann::json system = nlohmann::json::parse(spec::PresetText("dgx-h100", "test"));
  system["gpu"]["iteration_overhead"] = "50ms";
  from_system.system = system.dump();  // inline JSON, as Python passes a dict
  const request::Job with_system = request::ParseJob(from_system);
  EXPECT_DOUBLE_EQ(0.05, with_system.context.gpu.iteration_overhead_s);
  from_system.iteration_overhead = "0s";
  EXPECT_EQ(0.0, request::ParseJob(from_system).context.gpu.iteration_overhead_s);
}

TEST(IterationOverheadTest, AddsExactlyItsTimeToTheFixedCosts) {
  const perf::Estimate base = EstimateOf(Gpt3Job("0s"));
  const perf::Estimate slow = EstimateOf(Gpt3Job("150ms"));
  EXPECT_EQ(0.0, base.breakdown.iteration_overhead_s);
  EXPECT_DOUBLE_EQ(0.15, slow.breakdown.iteration_overhead_s);
  EXPECT_NEAR(0.15, slow.breakdown.overhead_s - base.breakdown.overhead_s, 1e-12);
  // The straggler wait grows with the step, so the step grows by a little more.
  const double grew = slow.iteration_time_s - base.iteration_time_s;
  EXPECT_GE(grew, 0.15);
  EXPECT_LT(grew, 0.16);
  EXPECT_NEAR(base.breakdown.compute_s, slow.breakdown.compute_s, 1e-12);
}

TEST(IterationOverheadTest, FlagIsADurationUpToAMinute) {
  for (std::string bad : {"-1ms", "61s", "abc", "nan", "1e9s"}) {
    try {
      request::ParseJob(Gpt3Job(bad));
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ("--iteration-overhead", e.where()) << bad << ": " << e.what();
    }
  }
  EXPECT_DOUBLE_EQ(60.0, request::ParseJob(Gpt3Job("60s")).context.gpu.iteration_overhead_s);
}

TEST(IterationOverheadTest, ScenarioJobsCarryStackAndOverheadAndRoundTrip) {
  const spec::Scenario s = spec::ParseScenarioJson(R"({"name": "n", "gpus": 64, "hb_domain_sizes": [8],
      "radixes": [64], "port_speed": "400Gbps", "model": "gpt3-175b", "system": "dgx-h100",
      "global_batch_sizes": [64], "stack": "nemo", "iteration_overhead": "120ms",
      "moe_stack": "megatron-2021", "moe_iteration_overhead": "0s"})");
  EXPECT_EQ("nemo", s.stack);
  EXPECT_EQ("megatron-2021", s.moe_stack);
  ASSERT_TRUE(s.iteration_overhead_s.has_value());
  EXPECT_DOUBLE_EQ(0.12, *s.iteration_overhead_s);
  ASSERT_TRUE(s.moe_iteration_overhead_s.has_value());
  EXPECT_EQ(0.0, *s.moe_iteration_overhead_s);
  const spec::Scenario back = spec::ParseScenarioJson(spec::ScenarioToJson(s));
  EXPECT_EQ(s.stack, back.stack);
  EXPECT_EQ(s.moe_stack, back.moe_stack);
  EXPECT_EQ(s.iteration_overhead_s, back.iteration_overhead_s);
  EXPECT_EQ(s.moe_iteration_overhead_s, back.moe_iteration_overhead_s);
  // Left out: the megatron-core profile, and no run value (the stack's, then the system's).
  const spec::Scenario plain = spec::ParseScenarioJson(R"({"name": "n", "gpus": 64, "hb_domain_sizes": [8],
      "radixes": [64], "port_speed": "400Gbps"})");
  EXPECT_EQ("megatron-core", plain.stack);
  EXPECT_FALSE(plain.iteration_overhead_s.has_value());
}

TEST(IterationOverheadTest, ScenarioRefusesBadValuesNamingTheKey) {
  const std::string head = R"({"name": "n", "gpus": 64, "hb_domain_sizes": [8], "radixes": [64], "port_speed": "400Gbps", )";
  struct Case {
    std::string tail, where;
  };
  for (const Case& c : {Case{R"("stack": "nemo2"})", "/stack"}, Case{R"("moe_stack": 3})", "/moe_stack"},
                        Case{R"("iteration_overhead": "61s"})", "/iteration_overhead"},
                        Case{R"("iteration_overhead": "-5ms"})", "/iteration_overhead"},
                        Case{R"("moe_iteration_overhead": "soon"})", "/moe_iteration_overhead"}}) {
    try {
      std::string json = head;
      json.append(c.tail);
      spec::ParseScenarioJson(json);
      ADD_FAILURE() << c.tail << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string::npos, std::string(e.what()).find(c.where)) << c.tail << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace railsim::study
