// The calibration fit: it recovers known parameters from rows railsim itself
// generated with noise, recovers aws-p5's fitted NCCL numbers from the p5
// nccl-tests files, fits the published DGX H100 step times as well as
// the target (mean 1.5%, worst 4%; perf/h100_calibration_test.cc),
// reports held-out rows, and reads the nccl-tests text and CSV forms of the
// same rows to the same answer. Prints predicted against measured.
#include "railsim/calibrate/calibrate.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/report/calibrate_report.h"
#include "railsim/spec/presets.h"

namespace railsim::calibrate {
namespace {

std::string DataPath(const std::string& name) { return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/" + name; }

const FittedParameter& Param(const CalibrationResult& r, const std::string& key) {
  for (const FittedParameter& p : r.parameters) {
    if (p.key == key) return p;
  }
  ADD_FAILURE() << key;
  return r.parameters.front();
}

void PrintRows(const CalibrationResult& r) {
  std::printf("  %-40s %9s %11s %11s %7s\n", "row", "set", "measured", "predicted", "error");
  for (const CalibrationRow& row : r.rows) {
    std::printf("  %-40s %9s %9.4g s %9.4g s %+6.1f%%\n", row.label.c_str(), row.held_out ? "held out" : "fitted",
                row.measured_s, row.predicted_s, 100 * row.error());
  }
}

// Rows of every modelled collective on 1, 2 and 8 nodes of 8 GPUs from 8 KiB
// to 8 GiB, timed on `truth`, each off by uniform noise of +-`noise`.
std::vector<NcclTestsRun> SyntheticRuns(const spec::SystemSpec& truth, double noise) {
  std::mt19937_64 rng(7);
  std::vector<NcclTestsRun> runs;
  for (NcclCollective op : {NcclCollective::kAllReduce, NcclCollective::kAllGather, NcclCollective::kReduceScatter,
                            NcclCollective::kAllToAll, NcclCollective::kSendRecv}) {
    for (int64_t nodes : {1, 2, 8}) {
      NcclTestsRun run;
      run.file = fmt::format("synthetic-{}-{}", NcclCollectiveName(op), nodes);
      run.collective = op;
      run.nodes = nodes;
      run.ranks = 8 * nodes;
      for (int e = 13; e <= 33; e += 2) {
        NcclTestsRow row;
        row.line = e;
        row.size_bytes = std::ldexp(1.0, e);
        double u = double(rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
        row.oop_time_us = PredictCollective(truth, run, row) * 1e6 * (1 + noise * (2 * u - 1));
        run.rows.push_back(row);
      }
      runs.push_back(run);
    }
  }
  return runs;
}

TEST(CalibrateTest, RecoversKnownCommunicationParametersWithinTheNoise) {
  spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  spec::SystemSpec truth = base;
  truth.hb_efficiency = 0.74;
  truth.hb_latency_s = 5e-6;
  truth.hb_in_network_allreduce_efficiency = 0.9;
  truth.nic_efficiency = 0.86;
  truth.nic_latency_s = 12e-6;
  // NCCL's model's own: trees and all-to-all slower than rings, an EFA-like
  // plugin latency, a per-peer all-to-all cost.
  truth.nccl.nic_tree_efficiency = 0.8;
  truth.nccl.nic_alltoall_efficiency = 0.83;
  truth.nccl.nic_reported_latency_s = 20e-6;
  truth.nccl.p2p_peer_latency_s = 4e-6;
  const double noise = 0.02;
  CalibrationResult r = Calibrate(base, SyntheticRuns(truth, noise), {}, {});
  std::printf("  %-36s %10s %10s %10s\n", "parameter", "base", "true", "fitted");
  for (auto [key, value] : {std::pair{"hb_efficiency", truth.hb_efficiency}, {"hb_latency", truth.hb_latency_s},
                            {"hb_in_network_allreduce_efficiency", truth.hb_in_network_allreduce_efficiency},
                            {"nic_efficiency", truth.nic_efficiency}, {"nic_latency", truth.nic_latency_s},
                            {"nccl.nic_tree_efficiency", truth.nccl.nic_tree_efficiency},
                            {"nccl.nic_alltoall_efficiency", truth.nccl.nic_alltoall_efficiency},
                            {"nccl.nic_reported_latency_us", truth.nccl.nic_reported_latency_s},
                            {"nccl.p2p_peer_latency_us", truth.nccl.p2p_peer_latency_s}}) {
    const FittedParameter& p = Param(r, key);
    std::printf("  %-36s %10.4g %10.4g %10.4g\n", key, p.before, value, p.after);
    EXPECT_TRUE(p.fitted) << key;
    // Hundreds of rows each off by at most 2%: the fit lands well inside it.
    EXPECT_NEAR(value, p.after, noise * value) << key;
  }
  std::printf("  mean error %.2f%%, worst %.2f%% (noise +-%.0f%%)\n", 100 * r.comm_fit.mean_abs, 100 * r.comm_fit.worst,
              100 * noise);
  // Uniform noise of +-2% averages 1% off; a fit that explains the rest
  // leaves about that, and no row far beyond the noise.
  EXPECT_LE(r.comm_fit.mean_abs, 0.55 * noise);
  EXPECT_LE(r.comm_fit.worst, 1.25 * noise);
  // Compute parameters have no row to fit: left as they were.
  EXPECT_FALSE(Param(r, "gpu.gemm_efficiency").fitted);
  EXPECT_EQ(base.gpu.gemm_efficiency, r.system.gpu.gemm_efficiency);
}

// The published H100 step times, from a system whose compute numbers are
// off (GEMM 0.75, attention 0.5, overlap cost 0.5, no fixed costs): the fit
// must land within the target for those rows (1.5% mean, 4% worst;
// H100CalibrationTest.Bf16StepTimes reaches 0.6% and 1.3% with the preset).
TEST(CalibrateTest, H100StepTimesWithinTheCalibrationTestsError) {
  spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  base.gpu.gemm_efficiency = 0.75;
  base.gpu.flash_attention_efficiency = 0.5;
  base.gpu.tp_comm_overlap_cost = 0.5;
  base.gpu.iteration_overhead_s = 0;
  base.gpu.pipeline_chunk_overhead_s = 0;
  std::vector<StepRun> steps = ReadSteps(DataPath("h100-steps.csv"), "--steps");
  CalibrationResult r = Calibrate(base, {}, steps, {});
  PrintRows(r);
  for (const FittedParameter& p : r.parameters) {
    std::printf("  %-32s %8.4g -> %8.4g %s\n", p.key.c_str(), p.before, p.after, p.fitted ? "" : "(not fitted)");
  }
  std::printf("  mean error %.2f%%, worst %.2f%%\n", 100 * r.step_fit.mean_abs, 100 * r.step_fit.worst);
  EXPECT_EQ(20, r.step_fit.rows);
  EXPECT_LE(r.step_fit.mean_abs, 0.015);
  EXPECT_LE(r.step_fit.worst, 0.04);
  // The fixed costs are fitted: every row pays the per-iteration cost and,
  // per micro-batch and virtual stage, the per-chunk cost. These NeMo runs
  // need no per-iteration cost (docs/calibrate.md): it ends at its lower
  // bound, 0, and says so rather than "fitted".
  EXPECT_EQ(ParamStatus::kAtBound, Param(r, "gpu.iteration_overhead").status);
  EXPECT_EQ(0, Param(r, "gpu.iteration_overhead").after);
  EXPECT_TRUE(Param(r, "gpu.pipeline_chunk_overhead").fitted);
  EXPECT_EQ(20, Param(r, "gpu.iteration_overhead").rows);
  EXPECT_EQ(20, Param(r, "gpu.pipeline_chunk_overhead").rows);
  // Not asserted: the split between GEMM and attention efficiency. These
  // rows leave it loose (from this base 0.75 and 0.39, 0.25% mean; from the
  // preset's 0.65 and 0.66, 0.4% mean with a fifth held out), as
  // docs/calibrate.md says.
  // No FP8 row: the FP8 GEMM efficiency is left as it was.
  EXPECT_FALSE(Param(r, "gpu.fp8_gemm_efficiency").fitted);
  EXPECT_EQ(base.gpu.fp8_gemm_efficiency, r.system.gpu.fp8_gemm_efficiency);
}

// aws-p5's NIC efficiencies and latencies were fitted (by this command) on
// the p5 nccl-tests rows. From a base with each of them 5% off, the fit
// comes back to the preset's numbers within 1%, and to its errors on those
// rows (NcclCalibrationTest.AwsP5EightNodes: 6.9% mean, 18.4% worst).
// Further off, the ring's efficiency can land where the rows no longer see
// it: above 0.919 the ring is bound elsewhere, so the rows give only that
// lower bound. The rows are of one node count, so the latencies are fitted
// only as the preset's were, with fit_scale_at_one_node_count.
TEST(CalibrateTest, RecoversAwsP5PresetFromAPerturbedBase) {
  CalibrationOptions as_the_preset;
  as_the_preset.fit_scale_at_one_node_count = true;
  const spec::SystemSpec p5 = spec::LoadSystem("aws-p5", "--system");
  spec::SystemSpec base = p5;
  base.nic_efficiency *= 0.95;
  base.nccl.nic_tree_efficiency *= 1.05;
  base.nccl.nic_alltoall_efficiency *= 0.95;
  base.nccl.nic_reported_latency_s *= 1.05;
  base.nccl.p2p_peer_latency_s *= 0.95;
  CalibrationResult r =
      Calibrate(base, ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "x"), {}, as_the_preset);
  PrintRows(r);
  std::printf("  %-32s %10s %10s %10s\n", "parameter", "base", "preset", "fitted");
  for (auto [key, value] :
       {std::pair{"nic_efficiency", p5.nic_efficiency}, {"nccl.nic_tree_efficiency", p5.nccl.nic_tree_efficiency},
        {"nccl.nic_alltoall_efficiency", p5.nccl.nic_alltoall_efficiency},
        {"nccl.nic_reported_latency_us", p5.nccl.nic_reported_latency_s},
        {"nccl.p2p_peer_latency_us", p5.nccl.p2p_peer_latency_s}}) {
    const FittedParameter& p = Param(r, key);
    std::printf("  %-32s %10.4g %10.4g %10.4g\n", key, p.before, value, p.after);
    EXPECT_TRUE(p.fitted) << key;
    EXPECT_NEAR(value, p.after, 0.01 * value) << key;
  }
  // The older model's latencies add to the per-peer cost on every
  // all-to-all row of one node count: the rows cannot split them.
  EXPECT_FALSE(Param(r, "nic_latency").fitted);
  EXPECT_EQ("not fitted: the 7 measured rows that depend on it see it only as they see nccl.p2p_peer_latency_us",
            Param(r, "nic_latency").provenance);
  std::printf("  mean error %.2f%%, worst %.2f%%\n", 100 * r.comm_fit.mean_abs, 100 * r.comm_fit.worst);
  EXPECT_LE(r.comm_fit.mean_abs, 0.07);
  EXPECT_LE(r.comm_fit.worst, 0.19);
  // The sentence names what was measured: sizes, collectives, nodes.
  EXPECT_EQ(fmt::format("Communication within {:.1f}% (mean {:.1f}%) on the sizes measured (32MiB to 8GiB of "
                        "all_gather, all_reduce, alltoall); not fitted above 8 nodes (64 GPUs); compute not fitted "
                        "(no --steps).",
                        100 * r.comm_fit.worst, 100 * r.comm_fit.mean_abs),
            r.trust);
  // The preset itself is where the fit ends: calibrating it changes nothing.
  CalibrationResult again =
      Calibrate(p5, ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "x"), {}, as_the_preset);
  for (const FittedParameter& p : again.parameters) EXPECT_EQ(p.before, p.after) << p.key;
}

TEST(CalibrateTest, HoldOutReportsRowsTheFitDidNotSee) {
  spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  std::vector<StepRun> steps = ReadSteps(DataPath("h100-steps.csv"), "--steps");
  CalibrationOptions o;
  o.holdout = 0.2;
  CalibrationResult r = Calibrate(base, {}, steps, o);
  PrintRows(r);
  std::printf("  fitted: mean %.2f%% worst %.2f%%; held out: mean %.2f%% worst %.2f%%\n", 100 * r.step_fit.mean_abs,
              100 * r.step_fit.worst, 100 * r.step_held_out.mean_abs, 100 * r.step_held_out.worst);
  EXPECT_EQ(16, r.step_fit.rows);
  EXPECT_EQ(4, r.step_held_out.rows);
  EXPECT_LE(r.step_held_out.worst, 0.08);
  // No parameter counts a held-out row among those it was fitted to, and
  // no provenance names a held-out line on its own.
  for (const FittedParameter& p : r.parameters) EXPECT_LE(p.rows, r.step_fit.rows) << p.key;
  for (const CalibrationRow& row : r.rows) {
    if (!row.held_out) continue;
    std::string line = row.source.substr(row.source.rfind(':') + 1);
    for (const FittedParameter& p : r.parameters) {
      for (const std::string& around : {":" + line + ",", ", " + line + ",", ", " + line + ")", ":" + line + ")"}) {
        EXPECT_EQ(std::string::npos, p.provenance.find(around)) << p.provenance;
      }
    }
  }
  EXPECT_NE(std::string::npos, r.trust.find("held-out")) << r.trust;
  // The same seed, the same split and fit, byte for byte.
  EXPECT_EQ(report::CalibrateJson(r), report::CalibrateJson(Calibrate(base, {}, steps, o)));
}

TEST(CalibrateTest, TextAndCsvOfTheSameRowsGiveTheSameFit) {
  spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  std::vector<NcclTestsRun> text;
  for (const char* f : {"all_reduce_perf.txt", "all_gather_perf.txt", "alltoall_perf.txt"}) {
    text.push_back(ReadNcclTests(DataPath(std::string("nccl-tests/p5-8nodes/") + f), "x")[0]);
  }
  std::vector<NcclTestsRun> csv = ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "x");
  CalibrationResult a = Calibrate(base, text, {}, {}), b = Calibrate(base, csv, {}, {});
  PrintRows(a);
  std::printf("  %s\n", a.trust.c_str());
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    // The text's times carry four to six digits; the CSV's come from algbw.
    EXPECT_NEAR(a.parameters[i].after, b.parameters[i].after, 2e-3 * std::fabs(b.parameters[i].after))
        << a.parameters[i].key;
  }
  // The fit beats the base system on the rows it was given.
  double before = 0;
  for (const CalibrationRow& row : a.rows) before += std::fabs(row.before_s / row.measured_s - 1) / a.rows.size();
  std::printf("  mean error before %.1f%%, after %.1f%%\n", 100 * before, 100 * a.comm_fit.mean_abs);
  EXPECT_LT(a.comm_fit.mean_abs, before);
}

TEST(CalibrateTest, RowsTheSystemCannotTimeAreErrors) {
  spec::SystemSpec a100 = spec::LoadSystem("dgx-a100", "--system");
  std::vector<StepRun> steps =
      ParseStepsCsv("model,gpus,global-batch-size,tp,pp,micro-batch-size,precision,step_time_s\n"
                    "gpt3-175b,64,64,8,8,1,fp8,9\n",
                    "s.csv", "");
  try {
    Calibrate(a100, {}, steps, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ("s.csv:2: precision: the system's GPU A100-SXM4-80GB does not run fp8 (no FP8 peak, or for mxfp8 and fp4 "
            "no FP4 peak); use bf16", std::string(e.what()));
  }
  NcclTestsRun broadcast;
  broadcast.file = "b.txt";
  broadcast.collective = NcclCollective::kBroadcast;
  broadcast.ranks = 16;
  broadcast.nodes = 2;
  broadcast.rows.push_back({});
  try {
    Calibrate(a100, {broadcast}, {}, {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ("--nccl-tests: no row railsim can fit (broadcast and single-GPU runs are not)", std::string(e.what()));
  }
}

// --holdout 0.9 on one row keeps it in the fit (one always stays): the
// result says how many rows were held out, warns that one row cannot pin
// down the parameters fitted to it, and gives no trust sentence.
TEST(CalibrateTest, TooFewRowsWarnAndGiveNoTrustSentence) {
  std::string text = "Warning: Permanently added 'node-b' (ED25519) to the list of known hosts.\n"
                     "# Collective test starting: all_reduce_perf\n";
  for (int rank = 0; rank < 64; ++rank) {
    text += fmt::format("#  Rank {:2d} Group  0 Pid 1 on node-{} device {} [0000:04:00] GPU\n", rank, rank / 8,
                        rank % 8);
  }
  // The first row of tests/data/nccl-tests/p5-8nodes/all_reduce_perf.txt.
  text += "33554432 8388608 float sum -1 761.56 44.06 86.74 0 737.14 45.52 89.62 0\n";
  NcclTestsRun run = ParseNcclTestsText(text, "one_all_reduce_perf.txt");
  CalibrationOptions o;
  o.holdout = 0.9;
  o.fit_scale_at_one_node_count = true;  // else nothing is fitted to one row of one node count
  CalibrationResult r = Calibrate(spec::LoadSystem("aws-p5", "--system"), {run}, {}, o);
  ASSERT_EQ(1u, r.rows.size());
  EXPECT_FALSE(r.rows[0].held_out);
  EXPECT_EQ(0, r.held_out_rows());
  int fitted = 0;
  for (const FittedParameter& p : r.parameters) fitted += p.fitted ? 1 : 0;
  ASSERT_GE(fitted, 1);
  ASSERT_EQ(1u, r.warnings.size());
  EXPECT_EQ(fmt::format("1 fitted collective row for {} fitted parameter{}: a fit with no more rows than parameters "
                        "can meet every row whatever their true values, so its error says nothing about them; measure "
                        "more rows (more sizes, collectives or node counts)",
                        fitted, fitted == 1 ? "" : "s"),
            r.warnings[0]);
  EXPECT_EQ("", r.trust);
  ASSERT_LE(1u, r.notes.size());
  EXPECT_EQ("one_all_reduce_perf.txt: 1 line skipped (neither results nor headers), the first at line 1: 'Warning: "
            "Permanently added 'node-b' (ED2...'",
            r.notes[0]);
  // The fit meets its one row exactly: "within 0.0%" would say nothing.
  EXPECT_NEAR(0, r.comm_fit.worst, 1e-3);
  const std::string table = report::CalibrateTable(r);
  EXPECT_EQ(0u, table.find("railsim calibrate: aws-p5-calibrated (seed 23, 0 of 1 rows held out)\n")) << table;
  EXPECT_NE(std::string::npos, table.find("\nwarning: 1 fitted collective row for ")) << table;
  EXPECT_EQ(std::string::npos, table.find("Trust")) << table;

  // Many rows: a fifth of them held out, counted in the header.
  std::vector<NcclTestsRun> p5 = ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "x");
  o.holdout = 0.2;
  CalibrationResult many = Calibrate(spec::LoadSystem("aws-p5", "--system"), p5, {}, o);
  size_t rows = 0;
  for (const NcclTestsRun& each : p5) rows += each.rows.size();
  const int held = int(std::llround(0.2 * double(rows)));
  EXPECT_EQ(held, many.held_out_rows());
  EXPECT_TRUE(many.warnings.empty());
  EXPECT_NE("", many.trust);
  EXPECT_EQ(0u, report::CalibrateTable(many).find(
                    fmt::format("railsim calibrate: aws-p5-calibrated (seed 23, {} of {} rows held out)\n", held, rows)));
}

// A base without NCCL's model (a system file with no "nccl" object) is timed
// with railsim's own plans: on the p5's 23 rows the fit reaches 12.0% mean
// where NCCL's model reaches 6.9%. A note says so and names the presets of
// the same GPU that carry NCCL's model; for a GPU none has, it says that.
TEST(CalibrateTest, ABaseWithoutNcclsModelSaysWhereToStart) {
  const std::vector<NcclTestsRun> runs = ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "x");
  spec::SystemSpec hand_written = spec::LoadSystem("aws-p5", "--system");
  hand_written.nccl.enabled = false;
  CalibrationResult older = Calibrate(hand_written, runs, {}, {});
  CalibrationResult nccl = Calibrate(spec::LoadSystem("aws-p5", "--system"), runs, {}, {});
  std::printf("  older model: mean %.1f%%, worst %.1f%%; NCCL's: mean %.1f%%, worst %.1f%%\n",
              100 * older.comm_fit.mean_abs, 100 * older.comm_fit.worst, 100 * nccl.comm_fit.mean_abs,
              100 * nccl.comm_fit.worst);
  EXPECT_GT(older.comm_fit.mean_abs, 1.5 * nccl.comm_fit.mean_abs);
  const std::string start = "; start from a preset of the same GPU that has it (aws-p5, dgx-h100: `railsim presets "
                            "show NAME`, then edit the bandwidths)";
  auto note_ending = [](const CalibrationResult& r, const std::string& end) {
    for (const std::string& note : r.notes) {
      if (note.rfind("the base system has no \"nccl\" object", 0) == 0 && note.size() >= end.size() &&
          note.compare(note.size() - end.size(), end.size(), end) == 0) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(note_ending(older, start)) << fmt::format("{}", fmt::join(older.notes, "\n"));
  EXPECT_FALSE(note_ending(nccl, start));
  spec::SystemSpec other_gpu = hand_written;
  other_gpu.gpu.name = "H100-like accelerator";
  CalibrationResult other = Calibrate(other_gpu, runs, {}, {});
  EXPECT_TRUE(note_ending(other, " (no preset of this GPU carries NCCL's model)"))
      << fmt::format("{}", fmt::join(other.notes, "\n"));
}

}  // namespace
}  // namespace railsim::calibrate
