// The compare verdict and side-by-side table from a hand-made study result:
// every sentence's numbers are worked out here from the inputs.
#include "railsim/report/compare_report.h"

#include <gtest/gtest.h>

namespace railsim::report {
namespace {

study::DesignResult Design(net::Design design, double cost, double power, int tiers, double saving,
                           double power_saving) {
  study::DesignResult d;
  d.params.design = design;
  d.bom.cost_usd = cost;
  d.bom.power_w = power;
  d.bom.tiers = tiers;
  d.bom.switches = 10 * tiers;
  d.bom.transceivers = 100 * tiers;
  d.cost_saving = saving;
  d.power_saving = power_saving;
  return d;
}

search::RankedStrategy Ranked(double seconds, int tp) {
  search::RankedStrategy r;
  r.estimate.iteration_time_s = seconds;
  r.estimate.mfu = 0.5;
  r.strategy.tp = tp;
  r.strategy.dp = 64 / tp;
  return r;
}

// Two HB domain sizes at one radix: at K 8 both designs need 3 tiers (no
// saving); at K 64 Rail-only saves $400 of $1,000 and 300 W of 1 kW. The job
// runs 1.00 s vs 1.00 s at K 8 and 2.10 s on Rail-only vs 2.00 s at K 64.
const std::string kModel = "m", kSystem = "s";

study::CompareResult Result(double rail_only_k64_s) {
  study::CompareResult r;
  r.scenario.gpus = 64;
  r.scenario.hb_domain_sizes = {8, 64};
  r.scenario.radixes = {16};
  r.scenario.port_speed_Bps = 50e9;  // 400 Gb/s
  r.scenario.global_batch_sizes = {32};
  // Not assigned from literals: GCC 12 warns falsely (-Wrestrict) when a
  // short literal is assigned to a std::string here.
  r.model_name = kModel;
  r.system_name = kSystem;
  for (int k : {8, 64}) {
    study::NetworkCase c;
    c.params.gpus = 64;
    c.params.hb_domain_size = k;
    c.params.radix = 16;
    c.designs.push_back(Design(net::Design::kRailOptimized, 1000, 1000, 3, 0, 0));
    c.designs.push_back(k == 8 ? Design(net::Design::kRailOnly, 1000, 1000, 3, 0, 0)
                               : Design(net::Design::kRailOnly, 600, 700, 1, 0.4, 0.3));
    r.network.push_back(c);
    study::TrainingCase t;
    t.hb_domain_size = k;
    t.global_batch = 32;
    t.feasible = true;
    t.rail_optimized.best = Ranked(k == 8 ? 1.0 : 2.0, 8);
    t.rail_only.best = Ranked(k == 8 ? 1.0 : rail_only_k64_s, 4);
    t.ideal.best = Ranked(0.5, 64);
    t.rail_optimized.fits = t.rail_only.fits = t.ideal.fits = true;
    t.rail_optimized.shape.radix = 16;
    r.training.push_back(t);
  }
  return r;
}

bool Has(const std::vector<std::string>& lines, const std::string& text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(CompareReportTest, VerdictStatesSavingsTimeAndTheWrongChoice) {
  std::vector<std::string> v = CompareVerdict(Result(2.1));
  for (const std::string& l : v) std::printf("  %s\n", l.c_str());
  EXPECT_TRUE(Has(v, "HB domain 8: Rail-only saves nothing at radix 16 (3 switch tiers on both)"));
  EXPECT_TRUE(Has(v, "HB domain 64: Rail-only saves $400 (40.0%) of network cost and 300 W (30.0%) of power at "
                     "radix 16"));
  EXPECT_TRUE(Has(v, "changes by +0.0% at batch 32 for m against rail-optimized"));
  EXPECT_TRUE(Has(v, "changes by +5.0% at batch 32 for m against rail-optimized"));
  // Ideal 0.5 s: 0.5 / 1.0 at K 8, 0.5 / 2.1 at K 64.
  EXPECT_TRUE(Has(v, "reaches 50.0% of the ideal network's speed (one HB domain of every GPU) with HB domain 8 and "
                     "23.8% with HB domain 64"));
  EXPECT_TRUE(Has(v, "wrong choice where a job's fastest layout sends between rails: here m at batch 32 with HB "
                     "domain 64 runs +5.0% slower (best layouts: tp 8 pp 1 dp 8 cp 1 on rail-optimized, tp 4 pp 1 "
                     "dp 16 cp 1 on Rail-only)"));
  // Within 1%: no job is named.
  std::vector<std::string> close = CompareVerdict(Result(2.01));
  EXPECT_FALSE(Has(close, "here m at batch"));
  EXPECT_TRUE(Has(close, "No job of this scenario runs more than 1% slower on Rail-only"));
}

TEST(CompareReportTest, SideBySideHasOneColumnPerDesign) {
  SideBySideTable t = CompareSideBySide(Result(2.1), 64);
  EXPECT_EQ("HB domain 64: 64 s GPUs in HB domains of 64, 400Gbps NICs; jobs timed on the radix-16 networks",
            t.title);
  auto row = [&](const std::string& label) -> const SideBySideTable::Row* {
    for (const SideBySideTable::Row& r : t.rows) {
      if (r.label == label) return &r;
    }
    return nullptr;
  };
  ASSERT_TRUE(row("network at radix 16") && row("network at radix 16")->section);
  ASSERT_TRUE(row("cost"));
  EXPECT_EQ("$1,000", row("cost")->cells[0]);
  EXPECT_EQ("$600", row("cost")->cells[1]);
  EXPECT_EQ("-", row("cost")->cells[2]);
  ASSERT_TRUE(row("Rail-only saves: cost"));
  EXPECT_EQ("$400 (40.0%)", row("Rail-only saves: cost")->cells[1]);
  ASSERT_TRUE(row("iteration time"));
  EXPECT_EQ("2.000 s", row("iteration time")->cells[0]);
  EXPECT_EQ("2.100 s", row("iteration time")->cells[1]);
  EXPECT_EQ("0.500 s", row("iteration time")->cells[2]);
  ASSERT_TRUE(row("Rail-only's time against it"));
  EXPECT_EQ("+5.0%", row("Rail-only's time against it")->cells[0]);
  EXPECT_EQ("+320.0%", row("Rail-only's time against it")->cells[2]);
}

}  // namespace
}  // namespace railsim::report
