#include "railsim/sim/fill_lists.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>

namespace railsim::sim {
namespace {

constexpr uint32_t kUnfrozen = UINT32_MAX;

// A touched link's share as it was when pushed; the least first, then the
// least slot (links tie in the order of their ids).
struct SlotShare {
  double share;
  int32_t slot;
  bool operator>(const SlotShare& o) const { return share > o.share || (share == o.share && slot > o.slot); }
};

}  // namespace

FillLists::FillLists(const FlowRouter& router, Ranks ranks) : router_(router), ranks_(ranks) {
  slot_.assign(router.directed_links(), -1);
}

void FillLists::Fill(Island& island, size_t start, std::span<const int32_t> touched, LinkRates* links,
                     std::vector<FrozenRange>* frozen) {
  if (ranks_.split()) {
    FillGathered(island, start, touched, links, frozen);
    return;
  }
  FillFlows(island.flows.data() + start, island.flows.size() - start, touched, links);
  frozen->clear();
  for (size_t k = 0; k < levels_.size(); ++k) {
    if (group_bounds_[k + 1] > group_bounds_[k]) {
      frozen->push_back({levels_[k], start + group_bounds_[k], start + group_bounds_[k + 1]});
    }
  }
}

void FillLists::FillGathered(Island& island, size_t start, std::span<const int32_t> touched, LinkRates* links,
                             std::vector<FrozenRange>* frozen) {
  std::vector<Flow> all;
  ranks_.GatherFlows({island.flows.data() + start, island.flows.size() - start}, &all);
  FillFlows(all.data(), all.size(), touched, links);
  const size_t ranks = size_t(ranks_.size()), rank = size_t(ranks_.rank());
  // This rank's even share of group k: all[*from, *to); false when no rank
  // has any.
  auto share = [&](size_t k, size_t* from, size_t* to) {
    const size_t b = group_bounds_[k], e = group_bounds_[k + 1];
    *from = b + (e - b) * rank / ranks;
    *to = b + (e - b) * (rank + 1) / ranks;
    return e > b;
  };
  size_t kept = 0, from = 0, to = 0;
  for (size_t k = 0; k < levels_.size(); ++k) kept += share(k, &from, &to) ? to - from : 0;
  FlowStore& flows = island.flows;
  flows.shrink(start);
  flows.Reserve(start + kept);
  frozen->clear();
  for (size_t k = 0; k < levels_.size(); ++k) {
    if (!share(k, &from, &to)) continue;
    const size_t begin = flows.size();
    for (size_t i = from; i < to; ++i) flows.push_back(all[i]);
    frozen->push_back({levels_[k], begin, flows.size()});
  }
}

void FillLists::FillFlows(Flow* flows, size_t count, std::span<const int32_t> touched, LinkRates* links) {
  // Every touched link's list of the flows crossing it, sized up front.
  list_begin_.assign(touched.size() + 1, 0);
  for (size_t i = 0; i < touched.size(); ++i) {
    slot_[size_t(touched[i])] = int32_t(i);
    list_begin_[i + 1] = list_begin_[i] + uint32_t(links->unfrozen[size_t(touched[i])]);
  }
  list_.resize(list_begin_.back());
  list_end_.assign(list_begin_.begin(), list_begin_.end() - 1);
  int32_t path[net::kMaxRouteHops];
  for (size_t i = 0; i < count; ++i) {
    const int hops = router_.PathOf(flows[i], path);
    for (int h = 0; h < hops; ++h) list_[list_end_[size_t(slot_[size_t(path[h])])]++] = uint32_t(i);
  }
  // Freeze the link with the least share, and its unfrozen flows at that
  // level (held no lower than the last: a share only grows while filling,
  // up to float noise).
  group_of_.assign(count, kUnfrozen);
  levels_.clear();
  std::vector<SlotShare> items;
  for (size_t i = 0; i < touched.size(); ++i) {
    if (links->unfrozen[size_t(touched[i])] > 0) items.push_back({links->Share(touched[i]), int32_t(i)});
  }
  std::priority_queue<SlotShare, std::vector<SlotShare>, std::greater<SlotShare>> shares(std::greater<SlotShare>(),
                                                                                        std::move(items));
  double level = 0;
  while (!shares.empty()) {
    const SlotShare e = shares.top();
    shares.pop();
    const int32_t l = touched[size_t(e.slot)];
    if (links->unfrozen[size_t(l)] == 0) continue;
    const double share = links->Share(l);
    if (share > e.share * (1 + 1e-12) + 1e-300) {  // grew since pushed: re-key
      shares.push({share, e.slot});
      continue;
    }
    level = std::max(level, share);
    const uint32_t g = uint32_t(levels_.size());
    levels_.push_back(level);
    for (uint32_t k = list_begin_[size_t(e.slot)]; k < list_begin_[size_t(e.slot) + 1]; ++k) {
      const uint32_t i = list_[k];
      if (group_of_[i] != kUnfrozen) continue;
      group_of_[i] = g;
      const int hops = router_.PathOf(flows[i], path);
      for (int h = 0; h < hops; ++h) {
        links->used[size_t(path[h])] += level;
        --links->unfrozen[size_t(path[h])];
      }
    }
  }
  for (int32_t l : touched) slot_[size_t(l)] = -1;
  // Flows into their groups' ranges (cycle leader, each flow moved once).
  group_bounds_.assign(levels_.size() + 1, 0);
  for (uint32_t g : group_of_) ++group_bounds_[g + 1];
  for (size_t g = 0; g < levels_.size(); ++g) group_bounds_[g + 1] += group_bounds_[g];
  std::vector<size_t> next(group_bounds_.begin(), group_bounds_.end() - 1);
  for (size_t k = 0; k < levels_.size(); ++k) {
    while (next[k] < group_bounds_[k + 1]) {
      Flow f = flows[next[k]];
      uint32_t g = group_of_[next[k]];
      while (g != k) {
        const size_t to = next[g]++;
        std::swap(f, flows[to]);
        std::swap(g, group_of_[to]);
      }
      flows[next[k]] = f;
      group_of_[next[k]] = uint32_t(k);
      ++next[k];
    }
  }
}

}  // namespace railsim::sim
