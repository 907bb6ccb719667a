// A small bounded nonlinear least-squares solver (Levenberg-Marquardt with
// an active set at the bounds) for fits of a handful of parameters, as
// `railsim calibrate` runs (calibrate/calibrate.h). Deterministic: the same
// residual function and starts give the same answer bit for bit.
#pragma once

#include <functional>
#include <vector>

namespace railsim::calibrate {

/// Box constraints, one pair per parameter; lo[j] < hi[j].
struct Bounds {
  std::vector<double> lo, hi;
};

/// Residuals of a parameter vector (always the same length).
using ResidualFunction = std::function<std::vector<double>(const std::vector<double>& x)>;

/// The sum of squared residuals, the quantity FitLeastSquares minimises.
double SumOfSquares(const std::vector<double>& r);

/// Budget per start: iterations, each costing one residual evaluation per
/// parameter (the Jacobian by forward differences) plus a few trial steps.
constexpr int kMaxLeastSquaresIterations = 40;

/// The x within `bounds` with the least sum of squared residuals that
/// Levenberg-Marquardt reaches from each of `starts` (clamped into the
/// bounds); the best end point, the earlier start on a tie, then polished by
/// coordinate sweeps (a hundredth of each range, ten steps either side) and
/// Levenberg-Marquardt again, which steps over the kinks of piecewise models.
/// Requires at least one start, each as long as the bounds.
std::vector<double> FitLeastSquares(const ResidualFunction& residuals, const std::vector<std::vector<double>>& starts,
                                    const Bounds& bounds);

}  // namespace railsim::calibrate
