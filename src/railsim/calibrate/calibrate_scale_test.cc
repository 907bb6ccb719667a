// Calibration across node counts: nccl-tests text generated from a known
// system at 2 to 64 nodes, fitted at one node count and predicting the
// others; and what calibrate says about parameters it cannot fit (at a
// bound, not constrained by the rows, left at the base with one node count).
#include "railsim/calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "railsim/report/calibrate_report.h"
#include "railsim/spec/presets.h"

namespace railsim::calibrate {
namespace {

constexpr int kGpusPerNode = 8;
const int64_t kNodeCounts[] = {2, 4, 8, 16, 32, 64};

// The truth the synthetic rows come from: aws-p5 with every efficiency 5
// to 11% lower (the NICs and NVLink of another cluster), its per-step and
// per-peer latencies (EFA's, which the base gets right), and a fixed cost
// per call that railsim's model does not have (the launch and the host's
// synchronisation): the kind of cost a fit at one node count pushes into
// the per-step latencies, which then carry it up with the node count.
struct Truth {
  spec::SystemSpec system;
  double fixed_s = 10e-6;
  double noise = 0.02;  ///< uniform, +-
};

Truth MakeTruth(const spec::SystemSpec& base) {
  Truth t;
  t.system = base;
  t.system.nic_efficiency = 0.85;
  t.system.nccl.nic_tree_efficiency = 0.78;
  t.system.nccl.nic_alltoall_efficiency = 0.76;
  t.system.hb_efficiency = 0.78;
  return t;
}

// The text nccl-tests prints for `op` on `nodes` nodes of 8 GPUs, 32 MiB to
// 8 GiB, each time the truth's prediction plus its fixed cost, off by the
// noise (drawn from `rng`). busbw is algbw x 2(n-1)/n for all-reduce and
// (n-1)/n for the others, as nccl-tests computes it.
std::string NcclTestsText(NcclCollective op, int64_t nodes, const Truth& truth, std::mt19937_64& rng) {
  const int64_t ranks = kGpusPerNode * nodes;
  const std::string name = NcclCollectiveName(op);
  std::string text = fmt::format("# Collective test starting: {}_perf\n", name);
  for (int64_t r = 0; r < ranks; ++r) {
    text += fmt::format("#  Rank {:3d} Group  0 Pid 1 on node-{} device {} [0000:04:00] NVIDIA H100 80GB HBM3\n", r,
                        r / kGpusPerNode, r % kGpusPerNode);
  }
  NcclTestsRun run;
  run.collective = op;
  run.ranks = ranks;
  run.nodes = nodes;
  const double bus = op == NcclCollective::kAllReduce ? 2.0 * double(ranks - 1) / double(ranks)
                                                      : double(ranks - 1) / double(ranks);
  for (int e = 25; e <= 33; ++e) {
    NcclTestsRow row;
    row.size_bytes = std::ldexp(1.0, e);
    const double u = double(rng() >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    const double t_us =
        (PredictCollective(truth.system, run, row) + truth.fixed_s) * 1e6 * (1 + truth.noise * (2 * u - 1));
    const int64_t count = int64_t(row.size_bytes) / 4 / (op == NcclCollective::kAllReduce ? 1 : ranks);
    const double algbw = row.size_bytes / (t_us * 1e3);
    text += fmt::format("{:12d} {:12d} float {} -1 {:.2f} {:.2f} {:.2f} 0 {:.2f} {:.2f} {:.2f} 0\n",
                        int64_t(row.size_bytes), count, op == NcclCollective::kAllReduce ? "sum" : "none", t_us,
                        algbw, algbw * bus, t_us, algbw, algbw * bus);
  }
  return text;
}

// all_reduce, all_gather and alltoall at every node count, in that order.
std::vector<NcclTestsRun> SyntheticSweeps(const Truth& truth) {
  std::mt19937_64 rng(11);
  std::vector<NcclTestsRun> runs;
  for (int64_t nodes : kNodeCounts) {
    for (NcclCollective op : {NcclCollective::kAllReduce, NcclCollective::kAllGather, NcclCollective::kAllToAll}) {
      const std::string file = fmt::format("{}nodes/{}_perf.txt", nodes, NcclCollectiveName(op));
      runs.push_back(ParseNcclTestsText(NcclTestsText(op, nodes, truth, rng), file));
    }
  }
  return runs;
}

std::vector<NcclTestsRun> AtNodes(const std::vector<NcclTestsRun>& runs, int64_t nodes) {
  std::vector<NcclTestsRun> out;
  for (const NcclTestsRun& r : runs) {
    if (r.nodes == nodes) out.push_back(r);
  }
  return out;
}

struct Extrapolation {
  double mean = 0, worst = 0;
  int rows = 0;
};

// The error of `system` on every row of `runs` not at `fitted_nodes`.
Extrapolation ErrorElsewhere(const spec::SystemSpec& system, const std::vector<NcclTestsRun>& runs,
                             int64_t fitted_nodes) {
  Extrapolation e;
  for (const NcclTestsRun& run : runs) {
    if (run.nodes == fitted_nodes) continue;
    for (const NcclTestsRow& row : run.rows) {
      const double err = std::fabs(PredictCollective(system, run, row) / (row.oop_time_us * 1e-6) - 1);
      e.mean += err;
      e.worst = std::max(e.worst, err);
      ++e.rows;
    }
  }
  e.mean /= e.rows;
  return e;
}

// Fitted at one node count, the calibrated system predicts the other five
// within 9% on every row. The truth's fixed cost (10 us) and noise (+-2%)
// are what the model cannot follow; a fit that pushed them into the
// per-step latencies would carry them up with the node count (at 2 nodes a
// ring all-reduce has 2 network steps, at 64 nodes 126; an all-to-all 8
// remote peers per rank, then 504): fitted so at 2 nodes, the rows at the
// other counts were off by up to 20%. Fitted at 2 nodes with the tree's NIC
// efficiency free to soak up the fixed cost (it was, before parameters the
// rows see only weakly went back to the base), 10.0%.
TEST(CalibrateScaleTest, FittedAtOneNodeCountPredictsTheOthers) {
  const spec::SystemSpec base = spec::LoadSystem("aws-p5", "--system");
  const Truth truth = MakeTruth(base);
  const std::vector<NcclTestsRun> runs = SyntheticSweeps(truth);
  std::printf("  %-8s %12s %12s %12s %12s\n", "fitted", "fit mean", "fit worst", "others mean", "others worst");
  for (int64_t nodes : kNodeCounts) {
    CalibrationResult r = Calibrate(base, AtNodes(runs, nodes), {}, {});
    const Extrapolation e = ErrorElsewhere(r.system, runs, nodes);
    std::printf("  %-8s %11.1f%% %11.1f%% %11.1f%% %11.1f%%\n", fmt::format("{} nodes", nodes).c_str(),
                100 * r.comm_fit.mean_abs, 100 * r.comm_fit.worst, 100 * e.mean, 100 * e.worst);
    EXPECT_EQ(5 * 27, e.rows);
    EXPECT_LE(e.worst, 0.09) << nodes << " nodes";
  }
}


const FittedParameter& Param(const CalibrationResult& r, const std::string& key) {
  for (const FittedParameter& p : r.parameters) {
    if (p.key == key) return p;
  }
  ADD_FAILURE() << key;
  return r.parameters.front();
}

bool HasNote(const CalibrationResult& r, const std::string& note) {
  return std::find(r.notes.begin(), r.notes.end(), note) != r.notes.end();
}

const std::string kNcclConstantsNote =
    "not fitted: NCCL's own constants (the system's \"nccl\" object: the base, NVLink and network latencies per "
    "algorithm and protocol, the protocols' bandwidth caps, the channel speeds), which come from NCCL's source; a "
    "fixed cost they lack shows in the fitted latencies";

// From a base of another fabric (dgx-h100: InfiniBand's latencies, every
// efficiency 0.94), fitted at one node count of 4 or more, the others are
// predicted within 8%. At 4 nodes the rows bound the tree's NIC efficiency
// from one side: at 0.94 NCCL picks the tree and the rows read 13% fast;
// at 0.85 and below it picks the ring and the tree moves nothing nearby.
// The fit finds 0.78 (the truth's), but calibrate used to put it back at
// 0.94 as "depending on it only far from its value", and the rows at 16-64
// nodes, where the tree sets the time, read up to 16% fast. At 2 nodes the
// tree hides behind the NVLink stage (below), the base's 0.94 stays, and
// the others read up to 20% fast: printed, not asserted.
TEST(CalibrateScaleTest, ABaseFromAnotherFabricFittedAtOneNodeCountPredictsTheOthers) {
  const spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  const Truth truth = MakeTruth(spec::LoadSystem("aws-p5", "--system"));
  const std::vector<NcclTestsRun> runs = SyntheticSweeps(truth);
  std::printf("  %-8s %12s %12s %12s\n", "fitted", "fit mean", "others mean", "others worst");
  for (int64_t nodes : kNodeCounts) {
    CalibrationResult r = Calibrate(base, AtNodes(runs, nodes), {}, {});
    const Extrapolation e = ErrorElsewhere(r.system, runs, nodes);
    std::printf("  %-8s %11.1f%% %11.1f%% %11.1f%%\n", fmt::format("{} nodes", nodes).c_str(),
                100 * r.comm_fit.mean_abs, 100 * e.mean, 100 * e.worst);
    if (nodes == 2) continue;
    EXPECT_LE(e.worst, 0.08) << nodes << " nodes";
    if (nodes == 4) {
      const FittedParameter& tree = Param(r, "nccl.nic_tree_efficiency");
      EXPECT_TRUE(tree.fitted) << tree.provenance;
      EXPECT_NEAR(truth.system.nccl.nic_tree_efficiency, tree.after, 0.02 * 0.78);
    }
  }
}

// Parameters the rows see only weakly stay at the base (the truth's, for
// the latencies) instead of soaking up the truth's fixed cost: at 2 nodes
// NVLS-Tree's network stage hides behind its NVLink stage, so the tree's NIC
// efficiency moves the all-reduce rows by about 1.5% across 0.69-0.95, and
// the fit used to take it to 0.69 (truth 0.78); the older model's NIC and
// NVLink latencies, which add to the all-to-all's per-peer cost, were
// fitted at 10-28 us at 4-64 nodes (truth 6 and 8 us). What the rows see fully is still
// fitted: the all-to-all's NIC efficiency within 2% of the truth's 0.76.
TEST(CalibrateScaleTest, WeaklySeenParametersStayAtTheBase) {
  const spec::SystemSpec base = spec::LoadSystem("aws-p5", "--system");
  const Truth truth = MakeTruth(base);
  const std::vector<NcclTestsRun> runs = SyntheticSweeps(truth);
  for (int64_t nodes : kNodeCounts) {
    CalibrationResult r = Calibrate(base, AtNodes(runs, nodes), {}, {});
    // At 2 nodes an all-to-all has 8 remote peers per rank, few enough that
    // a fixed cost per call shows: putting nic_latency back would raise the
    // rows' squared error by more than 4 residual variances, and it takes in
    // the truth's 10 us (23 us).
    if (nodes > 2) {
      for (const char* key : {"nic_latency", "hb_latency"}) {
        const FittedParameter& p = Param(r, key);
        EXPECT_EQ(ParamStatus::kWithinNoise, p.status) << nodes << " nodes, " << key << ": " << p.provenance;
      }
      EXPECT_EQ(truth.system.nic_latency_s, r.system.nic_latency_s) << nodes << " nodes";
      EXPECT_EQ(truth.system.hb_latency_s, r.system.hb_latency_s) << nodes << " nodes";
    }
    const FittedParameter& alltoall = Param(r, "nccl.nic_alltoall_efficiency");
    EXPECT_TRUE(alltoall.fitted) << nodes << " nodes";
    EXPECT_NEAR(truth.system.nccl.nic_alltoall_efficiency, alltoall.after, 0.02 * 0.76) << nodes << " nodes";
  }
  CalibrationResult two = Calibrate(base, AtNodes(runs, 2), {}, {});
  const FittedParameter& tree = Param(two, "nccl.nic_tree_efficiency");
  EXPECT_EQ(ParamStatus::kWithinNoise, tree.status) << tree.provenance;
  EXPECT_EQ(base.nccl.nic_tree_efficiency, tree.after);
  EXPECT_EQ(0u, tree.provenance.find("not fitted: the 8 measured rows that depend on it (2nodes/all_reduce_perf.txt:"))
      << tree.provenance;
  EXPECT_NE(std::string::npos, tree.provenance.find("fit the base's value as well as the fitted 0.69")) << tree.provenance;
  bool noted = false;
  for (const std::string& note : two.notes) {
    if (note.rfind("left at the base: the rows fit the base's values as well as the fitted ones, within their noise: ",
                   0) == 0) {
      noted = note.find("nccl.nic_tree_efficiency") != std::string::npos;
    }
  }
  EXPECT_TRUE(noted) << fmt::format("{}", fmt::join(two.notes, "\n"));
  const std::string table = report::CalibrateTable(two);
  EXPECT_NE(std::string::npos, table.find("left at the base: within the noise")) << table;
  // Kept on purpose, it says so, not "within the noise".
  CalibrationOptions keep_tree;
  keep_tree.keep = {"nccl.nic_tree_efficiency"};
  EXPECT_EQ(ParamStatus::kKept,
            Param(Calibrate(base, AtNodes(runs, 2), {}, keep_tree), "nccl.nic_tree_efficiency").status);
  // At 64 nodes the ring's NIC stage hides behind its NVLink hop: with the
  // NIC efficiency back at the base's, every row predicts the same.
  CalibrationResult r64 = Calibrate(base, AtNodes(runs, 64), {}, {});
  const FittedParameter& ring = Param(r64, "nic_efficiency");
  EXPECT_EQ(ParamStatus::kNotConstrained, ring.status) << ring.provenance;
  EXPECT_EQ(base.nic_efficiency, ring.after);
  EXPECT_EQ(0u, ring.provenance.find("not fitted: the 9 measured rows that depend on it predict the same with the "
                                     "base's value as with the fitted "))
      << ring.provenance;
}

// At 8 nodes only, the per-step and per-peer latencies stay at aws-p5's,
// said in the status, the provenance and one note; the efficiencies, whose
// share of the time does not grow with the node count, are fitted.
TEST(CalibrateScaleTest, OneNodeCountLeavesTheScaleDependentParametersAtTheBase) {
  const spec::SystemSpec base = spec::LoadSystem("aws-p5", "--system");
  CalibrationResult r = Calibrate(base, AtNodes(SyntheticSweeps(MakeTruth(base)), 8), {}, {});
  for (const char* key : {"nccl.nic_reported_latency_us", "nccl.p2p_peer_latency_us"}) {
    const FittedParameter& p = Param(r, key);
    EXPECT_EQ(ParamStatus::kOneNodeCount, p.status) << key;
    EXPECT_FALSE(p.fitted) << key;
    EXPECT_EQ(p.before, p.after) << key;
    EXPECT_EQ(fmt::format("not fitted: its cost grows with the node count, and the {} measured rows that depend on it "
                          "come from one node count (8 nodes)",
                          p.rows),
              p.provenance);
  }
  EXPECT_TRUE(HasNote(r, "left at the base: one node count in the data: nccl.nic_reported_latency_us (8 nodes), "
                         "nccl.p2p_peer_latency_us (8 nodes); each costs more per node (per network step of a ring or "
                         "tree, per remote peer of an all-to-all), which rows of one node count cannot tell from a "
                         "fixed cost; add a sweep at another node count to fit them"))
      << fmt::format("{}", fmt::join(r.notes, "\n"));
  EXPECT_TRUE(HasNote(r, kNcclConstantsNote));
  for (const char* key : {"nic_efficiency", "nccl.nic_tree_efficiency", "nccl.nic_alltoall_efficiency"}) {
    EXPECT_EQ(ParamStatus::kFitted, Param(r, key).status) << key;
  }
  // The one-count rule goes by the rows that see a parameter: NCCL's
  // model times an all-to-all's older NIC latency as a fixed cost per
  // call, so the all-to-all rows of one count fit it.
  EXPECT_NE(ParamStatus::kOneNodeCount, Param(r, "nic_latency").status);
}

// Rows at 4 and 32 nodes tell a cost per network step or remote peer from
// a fixed one: the latencies are fitted, and the rows at the other four
// counts are predicted within 10%.
TEST(CalibrateScaleTest, TwoNodeCountsFitTheScaleDependentParameters) {
  const spec::SystemSpec base = spec::LoadSystem("aws-p5", "--system");
  const std::vector<NcclTestsRun> runs = SyntheticSweeps(MakeTruth(base));
  std::vector<NcclTestsRun> fitted = AtNodes(runs, 4);
  for (const NcclTestsRun& run : AtNodes(runs, 32)) fitted.push_back(run);
  CalibrationResult r = Calibrate(base, fitted, {}, {});
  for (const char* key : {"nccl.nic_reported_latency_us", "nccl.p2p_peer_latency_us"}) {
    EXPECT_EQ(ParamStatus::kFitted, Param(r, key).status) << key << ": " << Param(r, key).provenance;
  }
  Extrapolation e;
  for (int64_t nodes : {2, 8, 16, 64}) {
    Extrapolation at = ErrorElsewhere(r.system, AtNodes(runs, nodes), 0);
    e.worst = std::max(e.worst, at.worst);
  }
  std::printf("  fitted at 4 and 32 nodes: others worst %.1f%%\n", 100 * e.worst);
  EXPECT_LE(e.worst, 0.10);
}

// The case: a 16-node all_reduce_perf sweep that the base system
// (dgx-h100's InfiniBand numbers) already meets, so the fit has nothing to
// improve. No parameter is called fitted: each says why it kept its value,
// the net plugin's latency is named as left at the base (one node count)
// and at its bound (0 s, InfiniBand's), and NCCL's tables are named once.
TEST(CalibrateScaleTest, AFitThatMovesNothingSaysWhy) {
  const spec::SystemSpec base = spec::LoadSystem("dgx-h100", "--system");
  NcclTestsRun run;
  run.file = "all_reduce_perf.txt";
  run.ranks = 128;
  run.nodes = 16;
  for (int e = 25; e <= 33; ++e) {
    NcclTestsRow row;
    row.line = e;
    row.size_bytes = std::ldexp(1.0, e);
    row.oop_time_us = PredictCollective(base, run, row) * 1e6;
    run.rows.push_back(row);
  }
  CalibrationResult r = Calibrate(base, {run}, {}, {});
  for (const FittedParameter& p : r.parameters) {
    EXPECT_FALSE(p.fitted) << p.key << ": " << p.provenance;
    EXPECT_NE(ParamStatus::kFitted, p.status) << p.key;
    EXPECT_EQ(p.before, p.after) << p.key;
  }
  for (const CalibrationRow& row : r.rows) EXPECT_EQ(row.before_s, row.predicted_s) << row.label;
  const FittedParameter& latency = Param(r, "nccl.nic_reported_latency_us");
  EXPECT_EQ(ParamStatus::kOneNodeCount, latency.status);
  EXPECT_TRUE(latency.at_bound);
  // Only all-to-all rows pay the per-peer cost and use the all-to-all
  // efficiency.
  EXPECT_EQ(ParamStatus::kNotConstrained, Param(r, "nccl.p2p_peer_latency_us").status);
  EXPECT_EQ(ParamStatus::kNotConstrained, Param(r, "nccl.nic_alltoall_efficiency").status);
  EXPECT_EQ(0, Param(r, "nccl.nic_alltoall_efficiency").rows);
  // The ring's NIC efficiency moves a row only far from its value (above
  // it the ring's NVLink hop binds): not constrained. The NVLink efficiency
  // moves every row, and the base (which made them) fits them best.
  EXPECT_EQ(ParamStatus::kNotConstrained, Param(r, "nic_efficiency").status);
  EXPECT_EQ(ParamStatus::kBaseFitsBest, Param(r, "hb_efficiency").status);
  EXPECT_TRUE(HasNote(r, kNcclConstantsNote));
  EXPECT_TRUE(HasNote(r, "left at the base: one node count in the data: nccl.nic_reported_latency_us (16 nodes); each "
                         "costs more per node (per network step of a ring or tree, per remote peer of an all-to-all), "
                         "which rows of one node count cannot tell from a fixed cost; add a sweep at another node "
                         "count to fit them"));
  bool at_bound_note = false;
  for (const std::string& note : r.notes) {
    if (note.rfind("at a bound (", 0) == 0) {
      at_bound_note = true;
      EXPECT_NE(std::string::npos, note.find("nccl.nic_reported_latency_us (lower bound, 0s)")) << note;
    }
  }
  EXPECT_TRUE(at_bound_note) << fmt::format("{}", fmt::join(r.notes, "\n"));
  // The table says it on the parameter's row, and the JSON per parameter.
  const std::string table = report::CalibrateTable(r);
  EXPECT_NE(std::string::npos, table.find("left at the base: one node count in the data; at bound")) << table;
  EXPECT_EQ(std::string::npos, table.find("  fitted\n")) << table;
  const std::string json = report::CalibrateJson(r);
  EXPECT_NE(std::string::npos, json.find("\"status\": \"left at the base: one node count in the data\"")) << json;
  EXPECT_NE(std::string::npos, json.find("\"at_bound\": true")) << json;
}

// dgx-h100's InfiniBand numbers (no plugin latency, no per-peer cost) on
// the p5's EFA rows: with those latencies at the base the other parameters
// still miss the rows by far more than 10% (24% mean), so the latencies
// are fitted at the one node count, and said to hold near it only.
TEST(CalibrateScaleTest, ABaseFromAnotherFabricFitsTheLatenciesAtOneNodeCount) {
  const std::string csv = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/p5-8nodes.csv";
  CalibrationResult r = Calibrate(spec::LoadSystem("dgx-h100", "--system"), ReadNcclTests(csv, "x"), {}, {});
  for (const char* key : {"nccl.nic_reported_latency_us", "nccl.p2p_peer_latency_us"}) {
    EXPECT_EQ(ParamStatus::kFittedAtOneNodeCount, Param(r, key).status) << key << ": " << Param(r, key).provenance;
    EXPECT_TRUE(Param(r, key).fitted) << key;
    EXPECT_LT(0, Param(r, key).after) << key;
  }
  EXPECT_TRUE(HasNote(r, "fitted at one node count: nccl.nic_reported_latency_us (8 nodes), nccl.p2p_peer_latency_us "
                         "(8 nodes); the rows miss the base's values by more than 10%, so these are fitted to them, "
                         "but they cost more per node and rows of one node count cannot tell that from a fixed cost: "
                         "they hold near that node count only; add a sweep at another node count"))
      << fmt::format("{}", fmt::join(r.notes, "\n"));
  std::printf("  mean error %.1f%%, worst %.1f%%\n", 100 * r.comm_fit.mean_abs, 100 * r.comm_fit.worst);
  EXPECT_LE(r.comm_fit.mean_abs, 0.10);
}

}  // namespace
}  // namespace railsim::calibrate
