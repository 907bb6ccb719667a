#include "railsim/sim/fill_rounds.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <numeric>

#include "railsim/core/interrupt.h"

namespace railsim::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

FillRounds::FillRounds(const FlowRouter& router, const Workers& workers, LinkCounter* counter, Ranks ranks,
                       const std::vector<double>& task_caps, const std::vector<double>& distinct_caps)
    : router_(router),
      workers_(workers),
      counter_(*counter),
      ranks_(ranks),
      task_caps_(task_caps),
      distinct_caps_(distinct_caps) {
  const size_t directed = router.directed_links();
  share_.assign(directed, kInf);
  least_.assign(directed, kInf);
  freeze_.assign(directed, 0);
  thread_scratch_.resize(workers.size());
  for (ThreadScratch& scratch : thread_scratch_) {
    scratch.least.assign(directed, kInf);
    scratch.cap_min = kInf;
  }
}

double FillRounds::LeastShare(const Flow& flow, const int32_t* path, int n) const {
  double m = kInf;
  for (int h = 0; h < n; ++h) m = std::min(m, share_[size_t(path[h])]);
  const double cap = task_caps_[size_t(flow.task())];
  return cap > 0 ? std::min(m, cap) : m;
}

size_t FillRounds::Bucket(const Flow& flow) const {
  int32_t path[net::kMaxRouteHops];
  const int n = router_.PathOf(flow, path);
  const double m = LeastShare(flow, path, n);
  const double cap = task_caps_[size_t(flow.task())];
  bool frozen = cap > 0 && cap == m && cap <= bound_;
  for (int h = 0; h < n && !frozen; ++h) frozen = freeze_[size_t(path[h])];
  if (!frozen) return levels_.size();
  auto it = std::lower_bound(levels_.begin(), levels_.end(), m);
  assert(it != levels_.end() && *it == m && "a frozen flow's rate is its bottleneck's share");
  return size_t(it - levels_.begin());
}

size_t FillRounds::Round(Island& island, size_t start, size_t n, std::span<const int32_t> touched, LinkRates* links,
                         std::vector<FrozenRange>* frozen) {
  for (int32_t l : touched) share_[size_t(l)] = links->unfrozen[size_t(l)] > 0 ? links->Share(l) : kInf;
  // Each link's least flow share: min over its flows of their path's least share.
  const Flow* flows = island.flows.data();
  workers_.ForEach(start, n, [&](size_t worker, size_t b, size_t e) {
    ThreadScratch& scratch = thread_scratch_[worker];
    int32_t path[net::kMaxRouteHops];
    for (size_t i = b; i < e; ++i) {
      if ((i & 0xffff) == 0 && InterruptRequested()) break;  // as LinkCounter::CountLocal's pass
      const int hops = router_.PathOf(flows[i], path);
      const double m = LeastShare(flows[i], path, hops);
      const double cap = task_caps_[size_t(flows[i].task())];
      if (cap > m) scratch.cap_min = std::min(scratch.cap_min, cap);
      for (int h = 0; h < hops; ++h) scratch.least[size_t(path[h])] = std::min(scratch.least[size_t(path[h])], m);
    }
  });
  ThrowIfInterrupted();
  double cap_min = kInf;
  for (ThreadScratch& scratch : thread_scratch_) {
    cap_min = std::min(cap_min, scratch.cap_min);
    scratch.cap_min = kInf;
  }
  for (int32_t l : touched) {
    double least = kInf;
    for (ThreadScratch& scratch : thread_scratch_) {
      least = std::min(least, scratch.least[size_t(l)]);
      scratch.least[size_t(l)] = kInf;
    }
    least_[size_t(l)] = least;
  }
  if (ranks_.split()) ReduceLeast(touched, &cap_min);
  // Links freeze up to the least share of any link that does not.
  bound_ = cap_min;
  for (int32_t l : touched) {
    if (links->unfrozen[size_t(l)] > 0 && share_[size_t(l)] > least_[size_t(l)]) {
      bound_ = std::min(bound_, share_[size_t(l)]);
    }
  }
  levels_.clear();
  for (int32_t l : touched) {
    const double share = share_[size_t(l)];
    freeze_[size_t(l)] = links->unfrozen[size_t(l)] > 0 && share <= least_[size_t(l)] && share <= bound_;
    if (freeze_[size_t(l)]) levels_.push_back(share);
  }
  for (double cap : distinct_caps_) {
    if (cap <= bound_) levels_.push_back(cap);
  }
  std::sort(levels_.begin(), levels_.end());
  levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
  const size_t unfrozen_bucket = levels_.size();
  // Flows per bucket, then each bucket's flows moved together in place.
  workers_.ForEach(start, n, [&](size_t worker, size_t b, size_t e) {
    std::vector<int64_t>& buckets = thread_scratch_[worker].buckets;
    buckets.assign(unfrozen_bucket + 1, 0);
    for (size_t i = b; i < e; ++i) ++buckets[Bucket(flows[i])];
  });
  std::vector<size_t> next(unfrozen_bucket + 2, start);
  std::vector<int64_t> sizes(unfrozen_bucket + 1, 0);  // over all ranks
  for (size_t k = 0; k <= unfrozen_bucket; ++k) {
    size_t c = 0;
    for (const ThreadScratch& scratch : thread_scratch_) {
      c += k < scratch.buckets.size() ? size_t(scratch.buckets[k]) : 0;
    }
    next[k + 1] = next[k] + c;
    sizes[k] = int64_t(c);
  }
  for (ThreadScratch& scratch : thread_scratch_) scratch.buckets.clear();
  ranks_.SumAll(sizes);
  const std::vector<size_t> bucket_begin(next.begin(), next.end() - 1);
  const std::vector<size_t> bucket_end(next.begin() + 1, next.end());
  const size_t frozen_end = bucket_begin[unfrozen_bucket];
  assert(sizes[unfrozen_bucket] < std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) &&
         "the least share always freezes");
  PlaceInBuckets(island, &next, bucket_end);
  // The buckets' flows take their rates on their links, then become groups.
  ranges_.clear();
  for (size_t k = 0; k < unfrozen_bucket; ++k) ranges_.push_back({flows, bucket_begin[k], bucket_end[k]});
  counter_.CountBatch(ranges_, [&](size_t k, int32_t l, int64_t c) {
    links->used[size_t(l)] += double(c) * levels_[k];
    links->unfrozen[size_t(l)] -= c;
  });
  frozen->clear();
  for (size_t k = 0; k < unfrozen_bucket; ++k) {
    if (sizes[k] > 0) frozen->push_back({levels_[k], bucket_begin[k], bucket_end[k]});
  }
  for (int32_t l : touched) {
    freeze_[size_t(l)] = 0;
    share_[size_t(l)] = kInf;
  }
  return frozen_end;
}

void FillRounds::ReduceLeast(std::span<const int32_t> touched, double* cap_min) {
  std::vector<double>& values = reduce_least_;
  values.clear();
  for (int32_t l : touched) values.push_back(least_[size_t(l)]);
  values.push_back(*cap_min);
  ranks_.MinAll(values);
  for (size_t i = 0; i < touched.size(); ++i) least_[size_t(touched[i])] = values[i];
  *cap_min = values.back();
}

void FillRounds::PlaceInBuckets(Island& island, std::vector<size_t>* next, const std::vector<size_t>& end) {
  std::vector<size_t>& at = *next;
  FlowStore& flows = island.flows;
  for (size_t k = 0; k < end.size(); ++k) {
    while (at[k] < end[k]) {
      Flow f = flows[at[k]];
      size_t b = Bucket(f);
      while (b != k) {
        std::swap(f, flows[at[b]++]);
        b = Bucket(f);
      }
      flows[at[k]++] = f;
    }
  }
}

}  // namespace railsim::sim
