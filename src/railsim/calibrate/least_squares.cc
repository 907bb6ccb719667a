#include "railsim/calibrate/least_squares.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace railsim::calibrate {

double SumOfSquares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

namespace {

// Solves a x = b for a small dense system by Gaussian elimination with
// partial pivoting; false when it is singular.
bool Solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* x) {
  const size_t n = b.size();
  for (size_t c = 0; c < n; ++c) {
    size_t pivot = c;
    for (size_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    }
    if (!(std::fabs(a[pivot][c]) > 1e-300)) return false;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (size_t r = c + 1; r < n; ++r) {
      double f = a[r][c] / a[c][c];
      for (size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x->assign(n, 0);
  for (size_t c = n; c-- > 0;) {
    double s = b[c];
    for (size_t k = c + 1; k < n; ++k) s -= a[c][k] * (*x)[k];
    (*x)[c] = s / a[c][c];
  }
  return true;
}

std::vector<double> Clamped(std::vector<double> x, const Bounds& b) {
  for (size_t j = 0; j < x.size(); ++j) x[j] = std::clamp(x[j], b.lo[j], b.hi[j]);
  return x;
}

// One Levenberg-Marquardt run from `x`; returns the end point, its cost in `cost`.
std::vector<double> Run(const ResidualFunction& f, std::vector<double> x, const Bounds& b, double* cost) {
  const size_t p = x.size();
  std::vector<double> r = f(x);
  double c = SumOfSquares(r);
  double lambda = 1e-3;
  for (int iter = 0; iter < kMaxLeastSquaresIterations; ++iter) {
    // Jacobian by forward differences, stepping inward at an upper bound.
    std::vector<std::vector<double>> jac(p);
    for (size_t j = 0; j < p; ++j) {
      double h = 1e-4 * (b.hi[j] - b.lo[j]);
      if (x[j] + h > b.hi[j]) h = -h;
      std::vector<double> xh = x;
      xh[j] += h;
      std::vector<double> rh = f(xh);
      jac[j].resize(r.size());
      for (size_t i = 0; i < r.size(); ++i) jac[j][i] = (rh[i] - r[i]) / h;
    }
    std::vector<double> g(p, 0);
    std::vector<std::vector<double>> a(p, std::vector<double>(p, 0));
    for (size_t j = 0; j < p; ++j) {
      for (size_t i = 0; i < r.size(); ++i) g[j] += jac[j][i] * r[i];
      for (size_t k = 0; k < p; ++k) {
        for (size_t i = 0; i < r.size(); ++i) a[j][k] += jac[j][i] * jac[k][i];
      }
    }
    // Active set: a parameter at a bound that the gradient pushes outward stays.
    std::vector<size_t> active;
    for (size_t j = 0; j < p; ++j) {
      bool held_low = x[j] <= b.lo[j] && g[j] > 0, held_high = x[j] >= b.hi[j] && g[j] < 0;
      if (!held_low && !held_high && a[j][j] > 0) active.push_back(j);
    }
    if (active.empty()) break;
    bool improved = false;
    for (int trial = 0; trial < 10 && !improved; ++trial) {
      const size_t n = active.size();
      std::vector<std::vector<double>> m(n, std::vector<double>(n));
      std::vector<double> rhs(n), step;
      for (size_t u = 0; u < n; ++u) {
        for (size_t v = 0; v < n; ++v) m[u][v] = a[active[u]][active[v]];
        m[u][u] += lambda * a[active[u]][active[u]];
        rhs[u] = -g[active[u]];
      }
      if (Solve(m, rhs, &step)) {
        std::vector<double> xn = x;
        for (size_t u = 0; u < n; ++u) xn[active[u]] += step[u];
        xn = Clamped(xn, b);
        std::vector<double> rn = f(xn);
        double cn = SumOfSquares(rn);
        if (cn < c) {
          improved = true;
          const bool small = c - cn <= 1e-12 * (1 + c);
          x = xn;
          r = rn;
          c = cn;
          lambda = std::max(lambda / 4, 1e-9);
          if (small) iter = kMaxLeastSquaresIterations;  // converged
          continue;
        }
      }
      lambda *= 8;
    }
    if (!improved) break;
  }
  *cost = c;
  return x;
}

// Coordinate sweeps around `x`: each parameter in turn over kSweepPoints
// steps of kSweepStep of its range either side, the best point kept. The
// fitted models are piecewise (NCCL's choice of algorithm and protocol
// switches as a parameter moves, a hidden tier starts to bind), and
// Levenberg-Marquardt's local slopes stop at such kinks; a sweep steps over
// them.
constexpr int kSweepPoints = 10;
constexpr double kSweepStep = 0.01;
constexpr int kSweepRounds = 2;

std::vector<double> Sweep(const ResidualFunction& f, std::vector<double> x, const Bounds& b, double* cost) {
  for (size_t j = 0; j < x.size(); ++j) {
    const double at = x[j], step = kSweepStep * (b.hi[j] - b.lo[j]);
    for (int k = -kSweepPoints; k <= kSweepPoints; ++k) {
      std::vector<double> xk = x;
      xk[j] = std::clamp(at + k * step, b.lo[j], b.hi[j]);
      const double c = SumOfSquares(f(xk));
      if (c < *cost) {
        *cost = c;
        x = xk;
      }
    }
  }
  return x;
}

}  // namespace

std::vector<double> FitLeastSquares(const ResidualFunction& residuals, const std::vector<std::vector<double>>& starts,
                                    const Bounds& bounds) {
  assert(!starts.empty());
  std::vector<double> best;
  double best_cost = 0;
  for (const std::vector<double>& start : starts) {
    assert(start.size() == bounds.lo.size() && start.size() == bounds.hi.size());
    double cost = 0;
    std::vector<double> x = Run(residuals, Clamped(start, bounds), bounds, &cost);
    if (best.empty() || cost < best_cost) {
      best = x;
      best_cost = cost;
    }
  }
  for (int round = 0; round < kSweepRounds; ++round) {
    double cost = best_cost;
    std::vector<double> x = Sweep(residuals, best, bounds, &cost);
    if (!(cost < best_cost)) break;
    x = Run(residuals, x, bounds, &cost);
    best = x;
    best_cost = cost;
  }
  return best;
}

}  // namespace railsim::calibrate
