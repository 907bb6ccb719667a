// The straggler wait: the expected maximum of normals against closed forms
// and tables, and the wait in an estimate against the formula by hand.
#include "railsim/perf/straggler.h"

#include <cmath>

#include <gtest/gtest.h>

#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

TEST(StragglerTest, ExpectedMaxOfNormalsMatchesClosedFormsAndTables) {
  EXPECT_EQ(0, ExpectedMaxOfNormals(1));
  EXPECT_NEAR(1 / std::sqrt(M_PI), ExpectedMaxOfNormals(2), 1e-8);    // closed form
  EXPECT_NEAR(1.5 / std::sqrt(M_PI), ExpectedMaxOfNormals(3), 1e-8);  // closed form
  EXPECT_NEAR(1.538753, ExpectedMaxOfNormals(10), 1e-6);              // Harter's table
  EXPECT_NEAR(2.507594, ExpectedMaxOfNormals(100), 1e-6);
  // Grows as about sqrt(2 ln n): slowly, and never past it.
  EXPECT_LT(ExpectedMaxOfNormals(1 << 20), std::sqrt(2 * std::log(double(1 << 20))));
  EXPECT_GT(ExpectedMaxOfNormals(1 << 20), ExpectedMaxOfNormals(1 << 10));
}

TEST(StragglerTest, TableHoldsEveryDivisorAndComputesTheRest) {
  ExpectedMaxTable t(96);
  for (int64_t n : {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96, 5, 7, 1000}) {
    EXPECT_DOUBLE_EQ(ExpectedMaxOfNormals(n), t.Of(n)) << n;
  }
}

// Llama 3 70B on 1,024 H100s, dp 32: the wait is the jitter times the square
// root of the rest of the step times E[max of 32 normals] (2.0697), and none
// without jitter; twice the replicas (same work each) wait longer.
TEST(StragglerTest, EstimateWaitsForTheSlowestReplica) {
  spec::ModelSpec m = spec::LoadModel("llama3-70b", "--model");
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  h100.gpu.straggler_jitter = 0.03;
  PerfContext c = MakePerfContext(m, h100, 1024, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = testutil::MakeStrategy(8, 4, 32, 1, 512);
  spec::ValidateStrategy(m, 1024, s);
  Estimate e = EstimateIteration(c, s);
  const double rest = e.iteration_time_s - e.breakdown.straggler_s;
  EXPECT_NEAR(2.0697, ExpectedMaxOfNormals(32), 1e-4);
  EXPECT_NEAR(0.03 * std::sqrt(rest) * ExpectedMaxOfNormals(32), e.breakdown.straggler_s, 1e-12);
  EXPECT_NEAR(e.iteration_time_s, e.breakdown.total(), 1e-12);

  h100.gpu.straggler_jitter = 0;
  PerfContext quiet = MakePerfContext(m, h100, 1024, comm::NetworkKind::kRailOptimized);
  EXPECT_EQ(0, EstimateIteration(quiet, s).breakdown.straggler_s);
  EXPECT_NEAR(rest, EstimateIteration(quiet, s).iteration_time_s, 1e-12);

  h100.gpu.straggler_jitter = 0.03;
  PerfContext twice = MakePerfContext(m, h100, 2048, comm::NetworkKind::kRailOptimized);
  spec::Strategy wide = testutil::MakeStrategy(8, 4, 64, 1, 1024);
  spec::ValidateStrategy(m, 2048, wide);
  EXPECT_GT(EstimateIteration(twice, wide).breakdown.straggler_s, e.breakdown.straggler_s);
}

}  // namespace
}  // namespace railsim::perf
