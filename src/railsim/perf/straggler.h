// Waiting for the slowest GPU: a synchronous training step ends when its
// last GPU does. Each GPU's time for the same work drifts by a random walk
// (many kernels, launches and host stalls each a little early or late), so
// over T seconds it has standard deviation jitter x sqrt(T), independently
// per GPU; the step then takes T plus jitter x sqrt(T) times the expected
// maximum of N standard normals, N the GPUs that synchronise. Long steps
// average the noise out (the wait grows as sqrt(T), so its share falls as
// 1 / sqrt(T)); large jobs wait longer (the expected maximum grows as about
// sqrt(2 ln N)). Pure functions, thread-safe.
#pragma once

#include <cmath>
#include <cstdint>

namespace railsim::perf {

/// The expected maximum of `n` independent standard normal variables (0 for
/// n <= 1; 0.5642 for 2, 1.5388 for 10, 3.4418 for 2,048), by quadrature
/// to better than 1e-4. Costs about 2,000 erfc calls: compute once per
/// cluster size (perf::MakePerfContext does), not per strategy.
double ExpectedMaxOfNormals(int64_t n);

/// The wait for the slowest GPU of a step whose GPUs each work `seconds`:
/// jitter x sqrt(seconds) x expected_max (jitter in sqrt(s), expected_max
/// from ExpectedMaxOfNormals). Requires seconds >= 0.
inline double StragglerWait(double jitter, double seconds, double expected_max) {
  return jitter * std::sqrt(seconds) * expected_max;
}

}  // namespace railsim::perf
