// LinkCounter: how many flows of a range cross each directed link, counted
// on the workers' threads and summed over the ranks.
//
// Counts are integers, merged by sums, so they do not depend on how the
// flows were split over threads or ranks; link totals are then kept as
// counts times a rate (sim/max_min_fill.h), which is why `threads` and ranks
// change no result to the last bit.
//
// Not thread-safe (it starts its own threads). Holds references to the
// router and the workers, which must outlive it.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "railsim/sim/flow_router.h"
#include "railsim/sim/flow_store.h"
#include "railsim/sim/islands.h"
#include "railsim/sim/ranks.h"
#include "railsim/sim/workers.h"

namespace railsim::sim {

/// This rank's flows[begin, end) of one island's store.
struct FlowRange {
  const Flow* flows;
  size_t begin, end;
};

class LinkCounter {
 public:
  LinkCounter(const FlowRouter& router, const Workers& workers, Ranks ranks);
  LinkCounter(const LinkCounter&) = delete;
  LinkCounter& operator=(const LinkCounter&) = delete;

  /// Counts, per directed link, the flows of `island`'s flows[begin, end)
  /// (with `only_bytes` > 0, those with exactly that many bytes left) that
  /// cross it, over all ranks (every rank's range counts). The counted links
  /// are counted() (in link order over ranks); read each with Take().
  void Count(const Island& island, size_t begin, size_t end, double only_bytes = 0);

  /// The links the last Count() found crossed.
  const std::vector<int32_t>& counted() const { return counted_; }

  /// Returns link `link`'s count and zeroes it (every counted link must be
  /// taken before the next count).
  int64_t Take(int32_t link) {
    const int64_t count = count_[size_t(link)];
    count_[size_t(link)] = 0;
    return count;
  }

  /// Counts a batch of items at once (groups, or buckets about to become
  /// groups): calls apply(k, link, count) for every link that item k's flows
  /// (`ranges[k]` on each rank) cross on any rank, with their count over the
  /// ranks, item by item (an item's links in any order). Over ranks, the
  /// batch takes one collective.
  template <typename Apply>
  void CountBatch(std::span<const FlowRange> ranges, Apply apply) {
    if (!ranks_.split()) {
      for (size_t k = 0; k < ranges.size(); ++k) {
        CountLocal(ranges[k].flows, ranges[k].begin, ranges[k].end);
        for (int32_t l : counted_) apply(k, l, Take(l));
      }
      return;
    }
    for (const auto& [key, count] : GatherBatch(ranges)) apply(size_t(key >> 32), int32_t(key & 0xFFFFFFFF), count);
  }

 private:
  // One thread's counts: per directed link (zero outside `links`), and the
  // links it counted.
  struct ThreadCounts {
    std::vector<int64_t> count;
    std::vector<int32_t> links;
  };

  // Count() of this rank's flows[begin, end) alone.
  void CountLocal(const Flow* flows, size_t begin, size_t end, double only_bytes = 0);
  // CountBatch() over ranks: (item << 32 | link, count over the ranks),
  // ascending.
  const std::vector<std::pair<int64_t, int64_t>>& GatherBatch(std::span<const FlowRange> ranges);

  // Fixed for the simulation.
  const FlowRouter& router_;
  const Workers& workers_;
  const Ranks ranks_;

  // Per directed link: the last count, until taken (zero otherwise).
  std::vector<int64_t> count_;
  std::vector<int32_t> counted_;  // the links with a count

  // Scratch, kept between counts so that small counts allocate nothing.
  std::vector<ThreadCounts> thread_counts_;  // per worker
  std::vector<int64_t> reduce_counts_;       // Count() over ranks: the island's links' counts
  std::vector<int64_t> batch_mine_;          // GatherBatch(): this rank's (key, count) pairs
  std::vector<std::pair<int64_t, int64_t>> batch_pairs_;  // GatherBatch()'s result
};

}  // namespace railsim::sim
