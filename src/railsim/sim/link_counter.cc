#include "railsim/sim/link_counter.h"

#include <algorithm>

#include "railsim/core/interrupt.h"

namespace railsim::sim {

LinkCounter::LinkCounter(const FlowRouter& router, const Workers& workers, Ranks ranks)
    : router_(router), workers_(workers), ranks_(ranks) {
  const size_t directed = router.directed_links();
  count_.assign(directed, 0);
  thread_counts_.resize(workers.size());
  for (ThreadCounts& counts : thread_counts_) counts.count.assign(directed, 0);
}

void LinkCounter::Count(const Island& island, size_t begin, size_t end, double only_bytes) {
  CountLocal(island.flows.data(), begin, end, only_bytes);
  if (!ranks_.split()) return;
  std::vector<int64_t>& counts = reduce_counts_;
  counts.clear();
  for (int32_t l : island.links) counts.push_back(count_[size_t(l)]);
  ranks_.SumAll(counts);
  counted_.clear();
  for (size_t k = 0; k < counts.size(); ++k) {
    const int32_t l = island.links[k];
    count_[size_t(l)] = counts[k];
    if (counts[k] != 0) counted_.push_back(l);
  }
}

void LinkCounter::CountLocal(const Flow* flows, size_t begin, size_t end, double only_bytes) {
  workers_.ForEach(begin, end, [&](size_t worker, size_t b, size_t e) {
    ThreadCounts& counts = thread_counts_[worker];
    int32_t path[net::kMaxRouteHops];
    for (size_t i = b; i < e; ++i) {
      // A pass over millions of flows takes a second: stop it at a stop
      // request (the counts are then thrown away below).
      if ((i & 0xffff) == 0 && InterruptRequested()) break;
      if (only_bytes > 0 && flows[i].remaining_bytes != only_bytes) continue;
      const int n = router_.PathOf(flows[i], path);
      for (int h = 0; h < n; ++h) {
        if (counts.count[size_t(path[h])]++ == 0) counts.links.push_back(path[h]);
      }
    }
  });
  ThrowIfInterrupted();
  counted_.clear();
  for (ThreadCounts& counts : thread_counts_) {
    for (int32_t l : counts.links) {
      if (count_[size_t(l)] == 0) counted_.push_back(l);
      count_[size_t(l)] += counts.count[size_t(l)];
      counts.count[size_t(l)] = 0;
    }
    counts.links.clear();
  }
}

const std::vector<std::pair<int64_t, int64_t>>& LinkCounter::GatherBatch(std::span<const FlowRange> ranges) {
  assert(ranges.size() < (size_t{1} << 31) && "item ids fit the key");
  std::vector<int64_t>& mine = batch_mine_;
  mine.clear();
  for (size_t k = 0; k < ranges.size(); ++k) {
    CountLocal(ranges[k].flows, ranges[k].begin, ranges[k].end);
    for (int32_t l : counted_) {
      mine.push_back(int64_t(k) << 32 | l);
      mine.push_back(Take(l));
    }
  }
  std::vector<int64_t> all;
  ranks_.GatherInt64(mine, &all);
  std::vector<std::pair<int64_t, int64_t>>& pairs = batch_pairs_;
  pairs.clear();
  for (size_t i = 0; i < all.size(); i += 2) pairs.push_back({all[i], all[i + 1]});
  std::sort(pairs.begin(), pairs.end());
  // Sum each key's counts in place.
  size_t kept = 0;
  for (size_t i = 0; i < pairs.size();) {
    int64_t count = 0;
    size_t j = i;
    for (; j < pairs.size() && pairs[j].first == pairs[i].first; ++j) count += pairs[j].second;
    pairs[kept++] = {pairs[i].first, count};
    i = j;
  }
  pairs.resize(kept);
  return pairs;
}

}  // namespace railsim::sim
