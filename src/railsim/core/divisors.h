// Divisors of a positive integer, ascending: the degrees a parallel split
// of n things can take (search/ enumerates strategies with them; perf/
// tabulates per data-parallel size with them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace railsim {

/// Every d in [1, n] with n % d == 0, ascending. Requires n >= 1.
inline std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace railsim
