// Accuracy on H100 against published runs: NVIDIA's dgxc-benchmarking
// recipes (tests/data/h100-calibration.csv, BF16; h100-fp8-calibration.csv,
// FP8) on DGX H100: distributed optimizer, overlapped gradient reduction and
// parameter gathering, sequence parallelism wherever tp > 1, no
// recomputation, TP-communication overlap where the recipe enables it.
// Prints predicted vs measured step time for every row.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testutil/reference_data.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

struct Row {
  std::string id, model;
  int layers = 0, hidden = 0, heads = 0, groups = 0, ffn = 0, vocab = 0, seq = 0;
  bool swiglu = false;
  int64_t gpus = 0;
  int tp = 1, pp = 1, cp = 1, vp = 1;
  int64_t dp = 1, micro_batch = 1, global_batch = 1;
  bool tp_comm_overlap = false;
  std::string precision = "bf16";
  double step_time_s = 0;
};

std::vector<Row> ReadBf16() {
  std::vector<Row> rows;
  for (const std::vector<std::string>& c : testutil::ReadReferenceCsv("h100-calibration.csv")) {
    Row r;
    r.id = c[0];
    r.model = c[1];
    r.layers = std::stoi(c[2]);
    r.hidden = std::stoi(c[3]);
    r.heads = std::stoi(c[4]);
    r.groups = std::stoi(c[5]);
    r.ffn = std::stoi(c[6]);
    r.swiglu = c[7] == "true";
    r.vocab = std::stoi(c[8]);
    r.seq = std::stoi(c[9]);
    r.gpus = std::stoll(c[10]);
    r.tp = std::stoi(c[11]);
    r.pp = std::stoi(c[12]);
    r.cp = std::stoi(c[13]);
    r.vp = std::stoi(c[14]);
    r.dp = std::stoll(c[15]);
    r.micro_batch = std::stoll(c[16]);
    r.global_batch = std::stoll(c[17]);
    r.tp_comm_overlap = c[18] == "true";
    r.step_time_s = std::stod(c[19]);
    rows.push_back(r);
  }
  return rows;
}

std::vector<Row> ReadFp8() {
  std::vector<Row> rows;
  for (const std::vector<std::string>& c : testutil::ReadReferenceCsv("h100-fp8-calibration.csv")) {
    Row r;
    r.id = c[0];
    r.model = c[1];
    r.gpus = std::stoll(c[2]);
    r.tp = std::stoi(c[3]);
    r.pp = std::stoi(c[4]);
    r.cp = std::stoi(c[5]);
    r.vp = std::stoi(c[6]);
    r.dp = std::stoll(c[7]);
    r.micro_batch = std::stoll(c[8]);
    r.global_batch = std::stoll(c[9]);
    r.tp_comm_overlap = c[10] == "true";
    r.precision = c[11];
    r.step_time_s = std::stod(c[12]);
    rows.push_back(r);
  }
  return rows;
}

// The preset of the row's model, with the dimensions the recipe ran (GPT-3's
// vocabulary as the source counts it).
spec::ModelSpec ModelFor(const Row& r) {
  spec::ModelSpec m = spec::LoadModel(r.model, "--model");
  if (r.layers > 0) {
    EXPECT_EQ(m.num_layers, r.layers) << r.id;
    EXPECT_EQ(m.hidden_size, r.hidden) << r.id;
    EXPECT_EQ(m.num_attention_heads, r.heads) << r.id;
    EXPECT_EQ(m.num_query_groups, r.groups) << r.id;
    EXPECT_EQ(m.ffn_hidden_size, r.ffn) << r.id;
    EXPECT_EQ(m.swiglu, r.swiglu) << r.id;
    EXPECT_EQ(m.seq_length, r.seq) << r.id;
    m.vocab_size = r.vocab;
  } else {
    m.vocab_size = 51200;
  }
  return m;
}

spec::Strategy StrategyFor(const Row& r) {
  spec::Strategy s;
  s.tp = r.tp;
  s.pp = r.pp;
  s.cp = r.cp;
  s.vp = r.vp;
  s.dp = r.dp;
  s.micro_batch = r.micro_batch;
  s.global_batch = r.global_batch;
  s.sequence_parallel = r.tp > 1;
  s.dp_sharding = spec::DpSharding::kOptimizer;
  s.overlap_dp_comm = true;
  s.tp_comm_overlap = r.tp_comm_overlap;
  s.precision = r.precision == "fp8" ? spec::Precision::kFp8 : spec::Precision::kBf16;
  return s;
}

// The rows are NeMo recipes: the nemo stack's fixed costs.
PerfContext NemoContext(const Row& r, const spec::SystemSpec& system) {
  PerfContext c = MakePerfContext(ModelFor(r), system, r.gpus, comm::NetworkKind::kRailOptimized);
  ApplyStack(spec::Stack::kNemo, &c);
  return c;
}

struct Outcome {
  double mean_abs = 0, worst = 0;
};

Outcome Check(const std::vector<Row>& rows) {
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  Outcome o;
  std::printf("  %-20s %9s %9s %7s  %s\n", "run", "measured", "predicted", "error", "memory");
  for (const Row& r : rows) {
    spec::ModelSpec m = ModelFor(r);
    spec::Strategy s = StrategyFor(r);
    spec::ValidateStrategy(m, r.gpus, s);
    PerfContext c = NemoContext(r, h100);
    Estimate e = EstimateIteration(c, s);
    double error = e.iteration_time_s / r.step_time_s - 1;
    o.mean_abs += std::fabs(error) / double(rows.size());
    o.worst = std::max(o.worst, std::fabs(error));
    std::printf("  %-20s %8.2fs %8.2fs %+6.1f%%  %.1f GiB%s\n", r.id.c_str(), r.step_time_s, e.iteration_time_s,
                100 * error, e.memory.total_bytes / double(1 << 30), e.memory.fits ? "" : " DOES NOT FIT");
    EXPECT_TRUE(e.memory.fits) << r.id << ": ran on 80 GB GPUs";
    if (std::getenv("RAILSIM_DEBUG")) {
      for (const TimeBreakdown::Component& part : e.breakdown.components()) {
        std::printf("      %-22s %.3f\n", part.label, part.seconds);
      }
    }
  }
  std::printf("  mean absolute error %.1f%%, worst %.1f%%\n", 100 * o.mean_abs, 100 * o.worst);
  return o;
}

TEST(H100CalibrationTest, Bf16StepTimes) {
  std::vector<Row> rows = ReadBf16();
  ASSERT_EQ(rows.size(), 20u);
  Outcome o = Check(rows);
  // The target is 1.5% / 4%. With the straggler wait the step times
  // grow with the data-parallel size as the runs do: 0.6% / 1.3% (before it
  // the smallest Nemotron-4 15B run was +5.6%).
  EXPECT_LE(o.mean_abs, 0.007);
  EXPECT_LE(o.worst, 0.014);
}

TEST(H100CalibrationTest, Fp8StepTimes) {
  std::vector<Row> rows = ReadFp8();
  ASSERT_EQ(rows.size(), 5u);
  Outcome o = Check(rows);
  // The target is 4%: 3.8% reached. The runs themselves are not
  // monotonic in scale (6.72 s on 1,024 GPUs, 6.24 s on 2,048), so no
  // smooth model reaches a small worst error: 7.5% (the 1,024-GPU run).
  EXPECT_LE(o.mean_abs, 0.038);
  EXPECT_LE(o.worst, 0.075);
}

// FP8 against BF16 on the same GPT-3 175B layouts: the step-time ratio the
// runs show, and the memory that FP8 weight copies add; TP-communication
// overlap off makes every row with tp > 1 slower.
TEST(H100CalibrationTest, Fp8AndTpOverlapChangeWhatTheRunsShow) {
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  std::vector<Row> bf16 = ReadBf16(), fp8 = ReadFp8();
  std::printf("  %-20s %14s %15s\n", "layout", "measured fp8/bf16", "predicted");
  for (const Row& r8 : fp8) {
    const Row* r16 = nullptr;
    for (const Row& r : bf16) {
      if (r.model == r8.model && r.gpus == r8.gpus) r16 = &r;
    }
    ASSERT_NE(r16, nullptr) << r8.id;
    PerfContext c = NemoContext(*r16, h100);
    Estimate e16 = EstimateIteration(c, StrategyFor(*r16));
    Estimate e8 = EstimateIteration(c, StrategyFor(r8));
    const double measured = r8.step_time_s / r16->step_time_s, predicted = e8.iteration_time_s / e16.iteration_time_s;
    std::printf("  %-20s %14.3f %15.3f\n", r8.id.c_str(), measured, predicted);
    EXPECT_NEAR(predicted, measured, 0.07) << r8.id;
    EXPECT_GT(e8.memory.fp8_weights_bytes, 0);
    EXPECT_EQ(e16.memory.fp8_weights_bytes, 0);
    EXPECT_LT(e8.memory.activations_bytes, e16.memory.activations_bytes);
  }
  for (const Row& r : bf16) {
    if (!r.tp_comm_overlap) continue;
    PerfContext c = NemoContext(r, h100);
    spec::Strategy with = StrategyFor(r), without = with;
    without.tp_comm_overlap = false;
    Estimate a = EstimateIteration(c, with), b = EstimateIteration(c, without);
    EXPECT_LT(a.iteration_time_s, b.iteration_time_s) << r.id;
    EXPECT_LT(a.breakdown.tp_comm_s, 0.5 * b.breakdown.tp_comm_s) << r.id;
  }
}

// The fit of these numbers: study/h100_refit_test.cc (RAILSIM_FIT=1).

}  // namespace
}  // namespace railsim::perf
