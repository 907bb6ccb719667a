#include "railsim/study/cluster_placement.h"

#include <algorithm>

namespace railsim::study {

ClusterState::ClusterState(const ClusterFabric& fabric)
    : fabric_(fabric),
      k_(fabric.hb_domain_size()),
      busy_(size_t(fabric.gpus()), 0),
      domain_free_(size_t(fabric.domains()), fabric.hb_domain_size()),
      block_free_(size_t(fabric.leaf_count()), 0),
      block_domains_(size_t(fabric.leaf_count())),
      domain_hist_(size_t(fabric.hb_domain_size()) + 1, 0),
      free_total_(fabric.gpus()) {
  for (int64_t d = 0; d < fabric.domains(); ++d) {
    block_free_[size_t(fabric.domain_block(d))] += k_;
    block_domains_[size_t(fabric.domain_block(d))].push_back(d);
  }
  domain_hist_[size_t(k_)] = fabric.domains();
}

void ClusterState::TakeFrom(int64_t domain, int64_t n, std::vector<int64_t>* out) const {
  for (int64_t g = domain * k_; g < (domain + 1) * k_ && n > 0; ++g) {
    if (!busy_[size_t(g)]) {
      out->push_back(g);
      --n;
    }
  }
}

std::vector<int64_t> ClusterState::FirstFit(int64_t gpus) const {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < fabric_.domains() && static_cast<int64_t>(out.size()) < gpus; ++d) {
    if (domain_free_[size_t(d)] > 0) TakeFrom(d, gpus - static_cast<int64_t>(out.size()), &out);
  }
  return out;
}

// The domain with the fewest free GPUs >= n (lowest id on ties), not in `skip`; -1 if none.
int64_t ClusterState::BestFitDomain(int64_t n, const std::vector<int64_t>& skip) const {
  int64_t best = -1;
  for (int64_t d = 0; d < fabric_.domains(); ++d) {
    int64_t f = domain_free_[size_t(d)];
    if (f < n || (best >= 0 && f >= domain_free_[size_t(best)])) continue;
    if (std::find(skip.begin(), skip.end(), d) != skip.end()) continue;
    best = d;
    if (f == n) break;
  }
  return best;
}

std::vector<int64_t> ClusterState::DomainPacking(int64_t gpus) const {
  const int64_t whole = gpus / k_, rest = gpus % k_;
  if (domain_hist_[size_t(k_)] < whole) return {};
  std::vector<int64_t> chosen;
  // Whole free domains, lowest ids first.
  for (int64_t d = 0; d < fabric_.domains() && static_cast<int64_t>(chosen.size()) < whole; ++d) {
    if (domain_free_[size_t(d)] == k_) chosen.push_back(d);
  }
  std::vector<int64_t> out;
  for (int64_t d : chosen) TakeFrom(d, k_, &out);
  if (rest > 0) {
    int64_t d = BestFitDomain(rest, chosen);
    if (d < 0) return {};
    TakeFrom(d, rest, &out);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> ClusterState::FewestLeaves(int64_t gpus) const {
  int64_t best = -1;
  for (int64_t b = 0; b < static_cast<int64_t>(block_free_.size()); ++b) {
    int64_t f = block_free_[size_t(b)];
    if (f >= gpus && (best < 0 || f < block_free_[size_t(best)])) best = b;
  }
  std::vector<int64_t> blocks;
  if (best >= 0) {
    blocks.push_back(best);
  } else {
    for (int64_t b = 0; b < static_cast<int64_t>(block_free_.size()); ++b) {
      if (block_free_[size_t(b)] > 0) blocks.push_back(b);
    }
    std::stable_sort(blocks.begin(), blocks.end(),
                     [&](int64_t a, int64_t b) { return block_free_[size_t(a)] > block_free_[size_t(b)]; });
  }
  std::vector<int64_t> out;
  for (int64_t b : blocks) {
    std::vector<int64_t> domains = block_domains_[size_t(b)];
    std::stable_sort(domains.begin(), domains.end(),
                     [&](int64_t x, int64_t y) { return domain_free_[size_t(x)] > domain_free_[size_t(y)]; });
    for (int64_t d : domains) {
      if (static_cast<int64_t>(out.size()) >= gpus) break;
      TakeFrom(d, gpus - static_cast<int64_t>(out.size()), &out);
    }
    if (static_cast<int64_t>(out.size()) >= gpus) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> ClusterState::Block(int64_t gpus, int64_t segment) const {
  segment = std::min(segment, k_);
  std::vector<int64_t> free = domain_free_;
  std::vector<int64_t> out;
  for (int64_t left = gpus; left > 0;) {
    int64_t piece = std::min(segment, left);
    int64_t best = -1;
    for (int64_t d = 0; d < fabric_.domains(); ++d) {
      if (free[size_t(d)] >= piece && (best < 0 || free[size_t(d)] < free[size_t(best)])) best = d;
    }
    if (best < 0) return {};
    // The segment's GPUs: the next free ones of that domain not yet given.
    int64_t n = piece;
    for (int64_t g = best * k_; g < (best + 1) * k_ && n > 0; ++g) {
      if (!busy_[size_t(g)] && std::find(out.begin(), out.end(), g) == out.end()) {
        out.push_back(g);
        --n;
      }
    }
    free[size_t(best)] -= piece;
    left -= piece;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> ClusterState::Place(SchedulerPolicy policy, int64_t gpus, int64_t segment,
                                         bool waited_out) const {
  if (gpus > free_total_) return {};
  switch (policy) {
    case SchedulerPolicy::kFirstFit: return FirstFit(gpus);
    case SchedulerPolicy::kDomainPacking: return DomainPacking(gpus);
    case SchedulerPolicy::kFewestLeaves: return FewestLeaves(gpus);
    case SchedulerPolicy::kBlock: return Block(gpus, segment > 0 ? segment : k_);
    case SchedulerPolicy::kWaitForFit: {
      std::vector<int64_t> packed = DomainPacking(gpus);
      return packed.empty() && waited_out ? FirstFit(gpus) : packed;
    }
  }
  return {};
}

void ClusterState::Mark(const std::vector<int64_t>& gpus, bool busy) {
  for (int64_t g : gpus) {
    int64_t d = g / k_;
    --domain_hist_[size_t(domain_free_[size_t(d)])];
    busy_[size_t(g)] = busy;
    int64_t delta = busy ? -1 : 1;
    domain_free_[size_t(d)] += delta;
    ++domain_hist_[size_t(domain_free_[size_t(d)])];
    block_free_[size_t(fabric_.domain_block(d))] += delta;
    free_total_ += delta;
  }
}

}  // namespace railsim::study
