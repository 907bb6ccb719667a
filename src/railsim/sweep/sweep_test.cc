#include "railsim/sweep/sweep.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "railsim/study/collective_study.h"
#include "railsim/study/design_setup.h"
#include "railsim/study/failures.h"
#include "railsim/study/network_study.h"

namespace railsim::sweep {
namespace {

using study::ClusterSetup;
using study::CollectiveOutcome;
using study::CollectiveRequest;
using study::DesignSetup;
using study::EvaluateDesign;
using study::MonteCarloOptions;
using study::MonteCarloResult;
using study::RunCollective;
using study::DefaultSparePolicy;
using study::RunMonteCarlo;
using study::ComponentEffects;

std::vector<SweepRow> RunAll(const spec::SweepConfig& c, int threads) {
  SweepSpecs specs = LoadSweepSpecs(c);
  std::vector<SweepRow> rows;
  RunSweepPoints(c, specs, ShardPoints(c.points, 0, 1, {}), threads, [&](const SweepRow& r) { rows.push_back(r); });
  std::sort(rows.begin(), rows.end(), [](const SweepRow& a, const SweepRow& b) { return a.index < b.index; });
  return rows;
}

TEST(SweepTest, ShardsSplitThePointsRoundRobinAndSkipFinishedOnes) {
  EXPECT_EQ((std::vector<int64_t>{1, 4, 7}), ShardPoints(9, 1, 3, {}));
  EXPECT_EQ((std::vector<int64_t>{0, 6}), ShardPoints(9, 0, 3, {3, 5}));
  EXPECT_EQ((std::vector<int64_t>{}), ShardPoints(2, 2, 3, {}));
}

// An estimate row holds what perf::EstimateIteration says for that point,
// and a point whose strategy is invalid holds the validator's message.
TEST(SweepTest, EstimateRowsAreTheEstimateAndBadPointsAreRows) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "estimate",
    "fixed": {"model": "gpt3-175b", "system": "dgx-h100", "gpus": 256, "tp": 8, "global_batch_size": 512,
              "micro_batch_size": 1},
    "axes": {"pp": [8, 7]}})");
  std::vector<SweepRow> rows = RunAll(c, 1);
  ASSERT_EQ(2u, rows.size());
  spec::ModelSpec model = spec::LoadModel("gpt3-175b", "");
  perf::PerfContext ctx = perf::MakePerfContext(model, spec::LoadSystem("dgx-h100", ""), 256,
                                                comm::NetworkKind::kRailOptimized);
  spec::Strategy s;
  s.tp = 8;
  s.pp = 8;
  s.dp = 4;
  s.micro_batch = 1;
  s.global_batch = 512;
  perf::Estimate e = perf::EstimateIteration(ctx, s);
  ASSERT_EQ("", rows[0].error);
  EXPECT_EQ(e.iteration_time_s, rows[0].results[0]);
  EXPECT_EQ(e.mfu, rows[0].results[1]);
  EXPECT_EQ(512.0 / 4, rows[0].results[5]);  // micro-batches per pipeline: 512 / dp 4 / micro-batch 1
  // 8 x 7 x 1 = 56 does not divide 256 GPUs.
  EXPECT_EQ("dp: tp x pp x cp = 8 x 7 x 1 = 56 does not divide gpus 256", rows[1].error);
  EXPECT_TRUE(rows[1].results.empty());
}

TEST(SweepTest, NetworkRowsCountTheBuiltGraph) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "network",
    "fixed": {"gpus": 1024, "hb_size": 8, "radix": 64}, "axes": {"design": ["rail-only", "fat-tree"]}})");
  std::vector<SweepRow> rows = RunAll(c, 2);
  ASSERT_EQ(2u, rows.size());
  // Rail-only on 1,024 GPUs, K = 8: 8 rails of 128 GPUs; a rail needs 4 leaves
  // (32 down, 32 up) and 2 spines of 64 ports: 6 switches per rail, 48 in all.
  ASSERT_EQ("", rows[0].error);
  EXPECT_EQ(2, rows[0].results[0]);    // tiers
  EXPECT_EQ(48, rows[0].results[1]);   // switches
  net::TopologyParams p;
  p.design = net::Design::kFatTree;
  p.gpus = 1024;
  p.hb_domain_size = 8;
  p.radix = 64;
  p.port_speed_Bps = 50e9;
  spec::PortClass pc = *spec::LoadCatalog("default", "").Find(50e9);
  EXPECT_EQ(EvaluateDesign(p, pc).bom.cost_usd, rows[1].results[7]);
}

// An all-to-all row holds what `railsim alltoall` computes; simulated_s is
// NaN (left out of the row) unless the point simulates.
TEST(SweepTest, AllToAllRowsAreTheCollectiveStudy) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "alltoall",
    "fixed": {"system": "dgx-a100", "gpus": 64, "bytes_per_pair": "1MB", "radix": 16},
    "axes": {"network": ["rail-optimized", "rail-only"], "simulate": [false, true]}})");
  std::vector<SweepRow> rows = RunAll(c, 2);
  ASSERT_EQ(4u, rows.size());
  CollectiveRequest r;
  r.system = spec::LoadSystem("dgx-a100", "");
  r.gpus = 64;
  r.network = comm::NetworkKind::kRailOnly;
  r.network_options.radix = 16;
  r.op = comm::Op::kAllToAll;
  r.group = {64, 1};
  r.bytes = 1e6 * 64;
  r.simulate = true;
  CollectiveOutcome o = RunCollective(r);
  ASSERT_EQ("", rows[3].error);
  EXPECT_EQ(o.analytic_s, rows[3].results[0]);
  EXPECT_EQ(o.sim.time_s, rows[3].results[1]);
  EXPECT_EQ(o.analytic_s, rows[2].results[0]);
  EXPECT_TRUE(std::isnan(rows[2].results[1]));
  // Rail-only forwards cross-rail bytes through the HB domain: slower than
  // rail-optimized's direct all-to-all on the same NICs.
  EXPECT_GT(rows[2].results[0], rows[0].results[0]);
}

// A collective row is `railsim collective` at that point: the dp group of
// tp 8 on 128 H100s spans 16 HB domains under Megatron's order, and lies in
// two domains with dp fastest (dp-tp-pp), which is faster.
TEST(SweepTest, CollectiveRowsPlaceTheGroupAsCollectiveDoes) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "collective",
    "fixed": {"system": "dgx-h100", "gpus": 128, "op": "all-reduce", "bytes": "64MiB", "group": "dp", "tp": 8},
    "axes": {"placement": ["tp-cp-ep-dp-pp", "dp-tp-pp"]}})");
  std::vector<SweepRow> rows = RunAll(c, 2);
  ASSERT_EQ(2u, rows.size());
  ASSERT_EQ("", rows[0].error);
  ASSERT_EQ("", rows[1].error);
  CollectiveRequest r;
  r.system = spec::LoadSystem("dgx-h100", "");
  r.gpus = 128;
  r.op = comm::Op::kAllReduce;
  r.bytes = 64.0 * 1024 * 1024;
  r.group = {16, 8};  // 16 members, 8 apart: one per HB domain
  const double strided = RunCollective(r).analytic_s;
  r.group = {16, 1};  // 16 consecutive GPUs: two HB domains
  const double packed = RunCollective(r).analytic_s;
  EXPECT_EQ(strided, rows[0].results[0]);
  EXPECT_EQ(packed, rows[1].results[0]);
  EXPECT_DOUBLE_EQ(r.bytes / strided, rows[0].results[1]);  // algbw
  EXPECT_TRUE(std::isnan(rows[0].results[2]));             // not simulated
}

// A failures row is one design's Monte Carlo, the same numbers with the same
// seed as the study gives; Rail-only's default policy keeps spares on rails.
TEST(SweepTest, FailuresRowsAreTheMonteCarlo) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "failures",
    "fixed": {"gpus": 256, "radix": 16, "trials": 200, "checkpoint_interval": "30min"},
    "axes": {"network": ["rail-optimized", "rail-only"]}})");
  std::vector<SweepRow> rows = RunAll(c, 2);
  ASSERT_EQ(2u, rows.size());
  ClusterSetup setup;
  setup.system = spec::LoadSystem("dgx-h100", "");
  setup.gpus = 256;
  setup.network.radix = 16;
  MonteCarloOptions o;
  o.trials = 200;
  o.checkpoint_interval_s = 1800;
  o.catalog = spec::LoadFailureCatalog("h100-fleet", "");
  for (size_t i = 0; i < 2; ++i) {
    const net::Design design = i == 0 ? net::Design::kRailOptimized : net::Design::kRailOnly;
    DesignSetup d = SetUpDesign(setup, design);
    MonteCarloResult m = RunMonteCarlo(d, ComponentEffects(setup, d, o.catalog, o.days), DefaultSparePolicy(design), o);
    ASSERT_EQ("", rows[i].error);
    EXPECT_EQ(m.interruptions_mean, rows[i].results[0]);
    EXPECT_EQ(m.goodput, rows[i].results[5]);
    EXPECT_EQ(double(m.spares_needed), rows[i].results[7]);
  }
  // "any" spare policy on Rail-only is a row's error, not an abort.
  spec::SweepConfig bad = spec::ParseSweepConfigJson(R"({"study": "failures",
    "fixed": {"gpus": 256, "radix": 16, "trials": 10, "network": "rail-only", "spare_policy": "any"}})");
  std::vector<SweepRow> bad_rows = RunAll(bad, 1);
  ASSERT_EQ(1u, bad_rows.size());
  EXPECT_EQ(0u, bad_rows[0].error.find("spare_policy: ")) << bad_rows[0].error;
}

// The default catalog prices 800 Gb/s ports (a point no catalog of the
// paper's covers): rail-only, 1,024 GPUs, K = 8, radix 64 at 800G.
TEST(SweepTest, EightHundredGigabitPortsArePricedByTheDefaultCatalog) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "network",
    "fixed": {"design": "rail-only", "gpus": 1024, "hb_size": 8, "radix": 64, "port_speed": "800Gbps"}})");
  std::vector<SweepRow> rows = RunAll(c, 1);
  ASSERT_EQ(1u, rows.size());
  ASSERT_EQ("", rows[0].error);
  // 48 switches x 64 ports = 3,072 ports; 1,024 NIC-leaf + 1,024 leaf-spine
  // links, two transceivers each = 4,096. At $1,250 and 28 W per port, $600
  // and 16 W per transceiver: $3,840,000 + $2,457,600 = $6,297,600 and
  // 86,016 W + 65,536 W = 151,552 W.
  EXPECT_EQ(3072, rows[0].results[2]);
  EXPECT_EQ(4096, rows[0].results[4]);
  EXPECT_EQ(6'297'600, rows[0].results[7]);
  EXPECT_EQ(151'552, rows[0].results[10]);
  EXPECT_TRUE(std::isnan(rows[0].results[11])) << "no server, no whole cluster";
}

// With a server, the row carries the whole cluster: 1,152 GPUs = 16 GB200
// NVL72 racks of 72. Rail-only, K = 72, radix 64, 400G: 72 rails of 16 GPUs,
// four rails to a 64-port switch: 18 switches x 64 = 1,152 ports at $694 and
// 17 W, 1,152 links x 2 = 2,304 transceivers at $199 and 9 W: $799,488 +
// $458,496 = $1,257,984 and 19,584 + 20,736 = 40,320 W. Racks: 16 x $3 M =
// $48 M and 16 x 120 kW = 1.92 MW. Cluster $49,257,984 and 1,960,320 W.
TEST(SweepTest, NetworkRowsCarryTheWholeClusterWithAServer) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "network",
    "fixed": {"design": "rail-only", "gpus": 1152, "hb_size": 72, "radix": 64, "server": "gb200-nvl72"}})");
  std::vector<SweepRow> rows = RunAll(c, 1);
  ASSERT_EQ(1u, rows.size());
  ASSERT_EQ("", rows[0].error);
  EXPECT_EQ(18, rows[0].results[1]);
  EXPECT_EQ(1'257'984, rows[0].results[7]);
  EXPECT_EQ(40'320, rows[0].results[10]);
  EXPECT_EQ(49'257'984, rows[0].results[11]);
  EXPECT_EQ(1'960'320, rows[0].results[12]);
  EXPECT_NEAR(1'257'984.0 / 49'257'984, rows[0].results[13], 1e-12);
  EXPECT_NEAR(40'320.0 / 1'960'320, rows[0].results[14], 1e-12);
}

// A compare row, by hand where the network side allows: 4,096 GPUs in HB
// domains of 8 at radix 64 and 400 Gb/s. Rail-optimized needs 3 tiers
// (4,096 > 64^2 / 2): 5E/k = 320 switches, 20,480 ports x $694 + 24,576
// transceivers x $199 = $19,103,744; Rail-only is 8 rails of 512 GPUs in 2
// tiers, 8 x 3 x 512/64 = 192 switches, 12,288 ports x $694 + 16,384
// transceivers x $199 = $11,788,288 (38.3% less). With 512 DGX H100 at $400,000: the cluster costs $216.6 M.
// The training side is the compare study's own: the same times as
// RunCompare gives for that scenario, and Rail-only no slower for a dense
// GPT-3 (the paper's claim); MoE dropped with "none". A point whose
// scenario keeps two HB domain sizes is an error row naming hb_size.
TEST(SweepTest, CompareRowsAreTheComparisonAtOnePoint) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "compare",
    "fixed": {"model": "gpt3-175b", "system": "dgx-h100", "global_batch_size": 1536, "radix": 64,
              "moe_model": "none", "server": "dgx-h100"},
    "axes": {"gpus": [4096], "hb_size": [8, 3]}})");
  std::vector<SweepRow> rows = RunAll(c, 1);
  ASSERT_EQ(2u, rows.size());
  ASSERT_EQ("", rows[0].error);
  const std::vector<double>& r = rows[0].results;
  const std::vector<std::string> keys = SweepResultKeys(spec::SweepStudy::kCompare);
  ASSERT_EQ(keys.size(), r.size());
  auto at = [&](const std::string& key) { return r[size_t(std::find(keys.begin(), keys.end(), key) - keys.begin())]; };
  EXPECT_EQ(320, at("rail_optimized_switches"));
  EXPECT_EQ(19'103'744, at("rail_optimized_cost_usd"));
  EXPECT_EQ(192, at("rail_only_switches"));
  EXPECT_EQ(11'788'288, at("rail_only_cost_usd"));
  EXPECT_NEAR(0.383, at("cost_saving"), 0.001);
  EXPECT_EQ(512 * 400'000.0 + 11'788'288, at("rail_only_cluster_cost_usd"));
  EXPECT_GT(at("rail_only_iteration_time_s"), 0);
  EXPECT_NEAR(0, at("rail_only_slowdown"), 0.01);
  EXPECT_NEAR(at("rail_only_iteration_time_s") / at("rail_optimized_iteration_time_s") - 1, at("rail_only_slowdown"),
              1e-12);
  EXPECT_GT(at("rail_optimized_usd_per_pflops_day"), at("rail_only_usd_per_pflops_day"));  // same speed, cheaper
  EXPECT_TRUE(std::isnan(at("moe_rail_only_iteration_time_s")));
  // HB domains of 3 do not divide 4,096 GPUs: an error row.
  EXPECT_TRUE(rows[1].results.empty());
  EXPECT_NE(std::string::npos, rows[1].error.find("does not divide")) << rows[1].error;
  // Without hb_size the scenario's two sizes (8 and 256) are refused by name.
  spec::SweepConfig two = spec::ParseSweepConfigJson(R"({"study": "compare",
    "fixed": {"gpus": 4096, "radix": 64, "moe_model": "none", "model": "gpt3-175b", "global_batch_size": 1536}})");
  std::vector<SweepRow> refused = RunAll(two, 1);
  ASSERT_EQ(1u, refused.size());
  EXPECT_EQ(0u, refused[0].error.find("hb_size: a compare point compares one HB domain size")) << refused[0].error;
}

TEST(SweepTest, RowsDoNotDependOnTheThreadCount) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "estimate",
    "fixed": {"model": "gpt3-175b", "system": "dgx-a100", "tp": 8, "micro_batch_size": 1, "global_batch_size": 1024},
    "axes": {"gpus": [512, 1024], "pp": [4, 8, 16, 5]}})");
  std::vector<SweepRow> one = RunAll(c, 1), three = RunAll(c, 3);
  ASSERT_EQ(8u, one.size());
  ASSERT_EQ(8u, three.size());
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].results, three[i].results) << i;
    EXPECT_EQ(one[i].error, three[i].error) << i;
  }
}

TEST(SweepTest, UnknownPresetsFailBeforeAnyPointRuns) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "estimate",
    "fixed": {"system": "dgx-a100", "tp": 8, "pp": 1, "micro_batch_size": 1, "global_batch_size": 8, "gpus": 8},
    "axes": {"model": ["gpt3-175b", "gpt-3"]}})");
  try {
    LoadSweepSpecs(c);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ("/axes/model/1", e.where());
  }
}

// expert_tensor_parallel_size in a sweep: an estimate row is
// perf::EstimateIteration of that strategy (a degree, or "tp"), a point that
// breaks MoE parallel folding's rule is a row with the validator's message,
// and a collective row places the folded ep group as `railsim collective`.
TEST(SweepTest, ExpertTensorParallelSizeIsAStrategyParameter) {
  spec::SweepConfig c = spec::ParseSweepConfigJson(R"({"study": "estimate",
    "fixed": {"model": "mixtral-8x22b", "system": "dgx-h100", "gpus": 32, "tp": 4, "pp": 1, "ep": 8,
              "sequence_parallel": true,
              "global_batch_size": 16, "micro_batch_size": 1},
    "axes": {"expert_tensor_parallel_size": [1, "tp", 8]}})");
  std::vector<SweepRow> rows = RunAll(c, 1);
  ASSERT_EQ(3u, rows.size());
  perf::PerfContext ctx = perf::MakePerfContext(spec::LoadModel("mixtral-8x22b", ""), spec::LoadSystem("dgx-h100", ""),
                                                32, comm::NetworkKind::kRailOptimized);
  spec::Strategy s;
  s.tp = 4;
  s.dp = 8;
  s.ep = 8;
  s.sequence_parallel = true;
  s.global_batch = 16;
  ASSERT_EQ("", rows[1].error);
  EXPECT_EQ(perf::EstimateIteration(ctx, s).iteration_time_s, rows[1].results[0]);
  s.etp = 1;
  ASSERT_EQ("", rows[0].error);
  EXPECT_EQ(perf::EstimateIteration(ctx, s).iteration_time_s, rows[0].results[0]);
  EXPECT_NE(rows[0].results[0], rows[1].results[0]);
  EXPECT_EQ("expert_tensor_parallel_size: expected ep x expert tensor-parallel size to divide tp x cp x dp = 32 "
            "(the expert layers fold onto the attention's GPUs, as in Megatron-Core), got 8 x 8 = 64; "
            "--expert-tensor-parallel-size 1 fits",
            rows[2].error);

  spec::SweepConfig collective = spec::ParseSweepConfigJson(R"({"study": "collective",
    "fixed": {"system": "dgx-h100", "gpus": 32, "op": "all-to-all", "bytes": "1MiB", "group": "ep", "tp": 4,
              "ep": 8}, "axes": {"expert_tensor_parallel_size": [1, "tp", 16]}})");
  rows = RunAll(collective, 1);
  ASSERT_EQ(3u, rows.size());
  CollectiveRequest r;
  r.system = spec::LoadSystem("dgx-h100", "");
  r.gpus = 32;
  r.op = comm::Op::kAllToAll;
  r.bytes = 1024.0 * 1024;
  r.group = {8, 1};  // etp 1: eight consecutive GPUs, one HB domain
  EXPECT_EQ(RunCollective(r).analytic_s, rows[0].results[0]);
  r.group = {8, 4};  // etp = tp = 4: every fourth GPU, all four domains
  EXPECT_EQ(RunCollective(r).analytic_s, rows[1].results[0]);
  EXPECT_EQ(0u, rows[2].error.find("expert_tensor_parallel_size: expected ep x expert tensor-parallel size"));
}

}  // namespace
}  // namespace railsim::sweep
