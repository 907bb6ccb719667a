// Accuracy against published measurements: Megatron-LM's weak-scaling runs
// (Narayanan et al., SC'21, Table 1; tests/data/megatron-sc21-table1.csv) on
// DGX A100, full recomputation, no sequence parallelism, no distributed
// optimizer, materialised softmax with dropout (2021 Megatron-LM), data-
// parallel all-reduce after the backward pass. Prints predicted vs measured.
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
  double params_billion;
  int heads, hidden, layers, tp, pp, gpus, global_batch, micro_batch, interleave;
  double tflops, percent_peak;
};

std::vector<Row> ReadRows() {
  std::vector<Row> rows;
  for (std::vector<std::string> cells : testutil::ReadReferenceCsv("megatron-sc21-table1.csv")) {
    Row r;
    r.params_billion = std::stod(cells[0]);
    r.heads = std::stoi(cells[1]);
    r.hidden = std::stoi(cells[2]);
    r.layers = std::stoi(cells[3]);
    r.tp = std::stoi(cells[4]);
    r.pp = std::stoi(cells[5]);
    r.gpus = std::stoi(cells[6]);
    r.global_batch = std::stoi(cells[7]);
    r.micro_batch = std::stoi(cells[8]);
    r.interleave = cells[9].empty() ? 0 : std::stoi(cells[9]);
    r.tflops = std::stod(cells[10]);
    r.percent_peak = std::stod(cells[11]);
    rows.push_back(r);
  }
  return rows;
}

std::string PresetFor(const Row& r) {
  if (r.params_billion > 1000) return "megatron-1t";
  char name[32];
  std::snprintf(name, sizeof name, "megatron-%.1fb", r.params_billion);
  return name;
}

spec::Strategy StrategyFor(const Row& r) {
  spec::Strategy s;
  s.tp = r.tp;
  s.pp = r.pp;
  s.dp = r.gpus / (r.tp * r.pp);
  s.micro_batch = r.micro_batch;
  s.global_batch = r.global_batch;
  s.vp = r.interleave > 0 ? r.layers / r.pp / r.interleave : 1;
  s.recompute = spec::Recompute::kFull;
  s.attention = spec::Attention::kClassic;
  s.overlap_dp_comm = false;
  s.grad_reduce_16bit = true;
  s.overlap_p2p_comm = false;  // 2021 Megatron-LM sent between stages in the critical path
  return s;
}

TEST(CalibrationTest, ParameterCountsMatchTable) {
  for (const Row& r : ReadRows()) {
    spec::ModelSpec m = spec::LoadModel(PresetFor(r), "--model");
    EXPECT_NEAR(r.params_billion, CountParams(m).total / 1e9, 0.051) << PresetFor(r);
  }
}

TEST(CalibrationTest, MegatronSc21TableOne) {
  spec::SystemSpec a100 = spec::LoadSystem("dgx-a100", "--system");
  std::vector<Row> rows = ReadRows();
  ASSERT_EQ(10u, rows.size());
  double sum_abs = 0, worst = 0;
  std::printf("  %-16s %9s %9s %7s\n", "model", "measured", "predicted", "error");
  for (const Row& r : rows) {
    spec::ModelSpec m = spec::LoadModel(PresetFor(r), "--model");
    spec::Strategy s = StrategyFor(r);
    spec::ValidateStrategy(m, r.gpus, s);
    PerfContext c = MakePerfContext(m, a100, r.gpus, comm::NetworkKind::kRailOptimized);
    Estimate e = EstimateIteration(c, s);
    double error = e.tflops_per_gpu / r.tflops - 1;
    sum_abs += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
    std::printf("  %-16s %9.1f %9.1f %+6.1f%%   (fits %d, %.1f GiB)\n", PresetFor(r).c_str(), r.tflops,
                e.tflops_per_gpu, 100 * error, e.memory.fits, e.memory.total_bytes / (1 << 30));
    EXPECT_TRUE(e.memory.fits) << PresetFor(r);
    if (std::getenv("RAILSIM_DEBUG")) {
      const TimeBreakdown& t = e.breakdown;
      std::printf("     T=%.2f compute %.2f recomp %.2f tp %.2f pp %.2f dp %.2f bubble %.2f opt %.3f m=%lld\n",
                  e.iteration_time_s, t.compute_s, t.recompute_s, t.tp_comm_s, t.pp_comm_s, t.dp_comm_s,
                  t.bubble_s, t.optimizer_s, (long long)e.microbatches);
    }
  }
  double mean = sum_abs / rows.size();
  std::printf("  mean absolute error %.1f%%, worst %.1f%%\n", 100 * mean, 100 * worst);
  EXPECT_LE(mean, 0.022);
  EXPECT_LE(worst, 0.049);
}

// A check, not a fit: Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models" (arXiv 2205.05198), abstract: the 530B model on
// 2,240 A100s (tp 8, pp 35, dp 8) reaches 54.2% MFU with sequence parallelism
// and selective recomputation, 42.1% with full recomputation. Timed with the
// settings of the SC'21 fit above, which these runs share apart from the two
// techniques. The abstract does not give the pipeline schedule: SC'21's 530B
// run interleaved one layer per virtual stage (vp 3), so both are printed.
TEST(CalibrationTest, KorthikantiAbstractIsACheck) {
  spec::SystemSpec a100 = spec::LoadSystem("dgx-a100", "--system");
  spec::ModelSpec m = spec::LoadModel("megatron-529.6b", "--model");
  Row r{529.6, 128, 20480, 105, 8, 35, 2240, 2240, 1, 0, 0, 0};
  PerfContext c = MakePerfContext(m, a100, r.gpus, comm::NetworkKind::kRailOptimized);
  struct Case {
    spec::Recompute recompute;
    double measured_mfu;
  };
  for (Case k : {Case{spec::Recompute::kSelective, 0.542}, Case{spec::Recompute::kFull, 0.421}}) {
    for (int vp : {1, 3}) {
      spec::Strategy s = StrategyFor(r);
      s.vp = vp;
      s.recompute = k.recompute;
      s.sequence_parallel = true;
      spec::ValidateStrategy(m, r.gpus, s);
      Estimate e = EstimateIteration(c, s);
      double error = e.mfu / k.measured_mfu - 1;
      std::printf("  530B on 2,240 A100, %-9s vp %d: MFU measured %.1f%%, predicted %.1f%%, %+.1f%%\n",
                  k.recompute == spec::Recompute::kFull ? "full" : "selective", vp, 100 * k.measured_mfu,
                  100 * e.mfu, 100 * error);
      EXPECT_TRUE(e.memory.fits);
      // Not fitted: bounds that catch the model drifting away (issue 36
      // reported the largest held-back A100 runs 11-12% too slow).
      EXPECT_LE(std::fabs(error), vp == 3 ? 0.06 : 0.11);
    }
  }
}

}  // namespace
}  // namespace railsim::perf
