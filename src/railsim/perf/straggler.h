// Waiting for the slowest replica: a synchronous training step ends when its
// last data-parallel replica does. Inside a replica the GPUs meet every layer
// (tensor- and context-parallel collectives) or every micro-batch (pipeline
// sends), so they cannot drift far apart; the replicas meet once per step,
// at the gradient reduction. Each replica's time for the same work drifts by
// a random walk (many kernels, launches and host stalls each a little early
// or late), so over T seconds it has standard deviation jitter x sqrt(T),
// independently per replica; the step then takes T plus jitter x sqrt(T)
// times the expected maximum of dp standard normals. Long steps average the
// noise out (the wait grows as sqrt(T), so its share falls as 1 / sqrt(T));
// many replicas wait longer (the expected maximum grows as about
// sqrt(2 ln dp)). Thread-safe: the table is read-only once built.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace railsim::perf {

/// The expected maximum of `n` independent standard normal variables (0 for
/// n <= 1; 0.5642 for 2, 1.5388 for 10, 3.4418 for 2,048), by quadrature
/// to better than 1e-8 up to n = 1e6 (1e-6 at 1e8). Costs 131 exp, erfc and
/// pow calls: look values up in an ExpectedMaxTable per strategy.
double ExpectedMaxOfNormals(int64_t n);

/// ExpectedMaxOfNormals for every divisor of a GPU count (the data-parallel
/// sizes a strategy on that many GPUs can have), computed once per context
/// so a strategy looks its value up instead of integrating. Copyable on
/// purpose (a PerfContext holds one).
class ExpectedMaxTable {
 public:
  ExpectedMaxTable() = default;
  explicit ExpectedMaxTable(int64_t gpus);
  /// ExpectedMaxOfNormals(n): from the table when n divides the GPU count,
  /// else computed (131 exp, erfc and pow calls).
  double Of(int64_t n) const;

 private:
  std::vector<int64_t> n_;  ///< ascending divisors
  std::vector<double> value_;
};

/// The wait for the slowest replica of a step whose replicas each work `seconds`:
/// jitter x sqrt(seconds) x expected_max (jitter in sqrt(s), expected_max
/// from ExpectedMaxOfNormals). Requires seconds >= 0.
inline double StragglerWait(double jitter, double seconds, double expected_max) {
  return jitter * std::sqrt(seconds) * expected_max;
}

}  // namespace railsim::perf
