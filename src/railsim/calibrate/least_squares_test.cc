#include "railsim/calibrate/least_squares.h"

#include <cmath>

#include <gtest/gtest.h>

namespace railsim::calibrate {
namespace {

// y = a / x + b on x = 1..10 with a = 3, b = 0.5 (exact data): the fit
// recovers both from either start.
TEST(LeastSquaresTest, RecoversAnExactModel) {
  auto residuals = [](const std::vector<double>& p) {
    std::vector<double> r;
    for (int x = 1; x <= 10; ++x) r.push_back(p[0] / x + p[1] - (3.0 / x + 0.5));
    return r;
  };
  Bounds b{{0, 0}, {10, 10}};
  std::vector<double> fit = FitLeastSquares(residuals, {{1, 1}, {9, 9}}, b);
  EXPECT_NEAR(3.0, fit[0], 1e-6);
  EXPECT_NEAR(0.5, fit[1], 1e-6);
}

// The unconstrained optimum (a = 3) lies above the bound 2: the fit stops on
// the bound and still finds the best b there (the mean of y - 2/x).
TEST(LeastSquaresTest, StopsAtABound) {
  auto residuals = [](const std::vector<double>& p) {
    std::vector<double> r;
    for (int x = 1; x <= 4; ++x) r.push_back(p[0] / x + p[1] - (3.0 / x + 0.5));
    return r;
  };
  std::vector<double> fit = FitLeastSquares(residuals, {{1, 1}}, Bounds{{0, -5}, {2, 5}});
  EXPECT_EQ(2.0, fit[0]);
  // b = mean over x of (3/x + 0.5 - 2/x) = 0.5 + (1 + 1/2 + 1/3 + 1/4) / 4.
  EXPECT_NEAR(0.5 + (1 + 0.5 + 1.0 / 3 + 0.25) / 4, fit[1], 1e-6);
}

}  // namespace
}  // namespace railsim::calibrate
