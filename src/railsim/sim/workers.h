// Workers: the threads that share each pass over a range of flows. A pass
// is split into contiguous pieces, one per worker; each worker writes only
// its own scratch (indexed by worker), which the caller then merges in a
// fixed way (integer sums, minima), so that no result depends on the number
// of workers. Threads are started per pass and joined before it returns.
//
// Copyable on purpose (two numbers). ForEach is not reentrant.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

namespace railsim::sim {

class Workers {
 public:
  /// Requires count >= 1. Passes over fewer than `parallel_min_flows` flows
  /// stay on the calling thread.
  Workers(size_t count, int64_t parallel_min_flows)
      : count_(count), parallel_min_flows_(size_t(std::max<int64_t>(1, parallel_min_flows))) {}

  size_t size() const { return count_; }

  /// Calls fn(worker, b, e) over [begin, end) split among the workers, worker
  /// 0 on the calling thread (one piece on this thread when the range is
  /// small). `fn` must be safe to call from several threads at once.
  template <typename Fn>
  void ForEach(size_t begin, size_t end, Fn&& fn) const {
    const size_t n = end - begin, w = n < parallel_min_flows_ ? 1 : count_;
    if (w == 1) {
      fn(size_t{0}, begin, end);
      return;
    }
    std::vector<std::thread> pool;
    for (size_t k = 1; k < w; ++k) {
      pool.emplace_back([&, k] { fn(k, begin + n * k / w, begin + n * (k + 1) / w); });
    }
    fn(size_t{0}, begin, begin + n / w);
    for (std::thread& thread : pool) thread.join();
  }

 private:
  size_t count_;
  size_t parallel_min_flows_;
};

}  // namespace railsim::sim
