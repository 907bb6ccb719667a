#include "railsim/sim/max_min_fill.h"

#include <algorithm>
#include <cassert>

#include "railsim/core/interrupt.h"

namespace railsim::sim {

MaxMinFiller::MaxMinFiller(const FlowRouter& router, const Workers& workers, LinkCounter* counter, Ranks ranks,
                           const TaskGraph& tasks, const SimOptions& options)
    : counter_(*counter),
      distinct_caps_(tasks.distinct_caps()),
      max_list_entries_(options.max_list_entries),
      rounds_first_entries_(options.rounds_first_entries),
      rounds_(router, workers, counter, ranks, tasks.flow_caps(), tasks.distinct_caps()),
      lists_(router, ranks) {
  const std::vector<net::Link>& links = router.topology().links();
  const size_t directed = router.directed_links();
  links_.capacity.resize(directed);
  for (size_t l = 0; l < links.size(); ++l) {
    const double efficiency =
        links[l].kind == net::LinkKind::kNvlink ? options.hb_efficiency : options.nic_efficiency;
    links_.capacity[2 * l] = links_.capacity[2 * l + 1] = links[l].capacity_Bps * efficiency;
  }
  links_.used.assign(directed, 0);
  links_.unfrozen.assign(directed, 0);
  carried_bytes_.assign(directed, 0);
}

size_t MaxMinFiller::Unfreeze(Island& island, size_t first, double now) {
  if (first == 0) {
    for (int32_t l : island.links) links_.used[size_t(l)] = 0;
  }
  std::vector<Group>& groups = island.groups;
  if (first == groups.size()) return groups.empty() ? 0 : groups.back().end;
  assert(island.flows.size() == groups.back().end && "no unfrozen flows while groups are reopened");
  const size_t start = groups[first].begin;
  if (first > 0) {
    ranges_.clear();
    for (size_t k = first; k < groups.size(); ++k) {
      ranges_.push_back({island.flows.data(), groups[k].cursor, groups[k].end});
    }
    counter_.CountBatch(ranges_, [&](size_t k, int32_t l, int64_t c) { TakeOff(l, c, groups[first + k].level); });
  }
  size_t write = start;
  for (size_t k = first; k < groups.size(); ++k) {
    const Group& g = groups[k];
    const double sent_per_flow = g.level * (now - g.updated_s);
    for (size_t i = g.cursor; i < g.end; ++i) {
      Flow f = island.flows[i];
      f.remaining_bytes -= sent_per_flow;
      island.flows[write++] = f;
    }
  }
  island.flows.shrink(write);
  groups_total_ -= groups.size() - first;
  groups.resize(first);
  island.level_max.resize(first);
  return start;
}

size_t MaxMinFiller::Refill(Island& island, bool full, double r_min, double now) {
  size_t first = 0;
  if (!full) {
    // Reopen from the first group at or above the threshold (refilling
    // slower groups after it gives them their rates again).
    const double threshold = r_min * (1 - 1e-12);
    first = size_t(std::lower_bound(island.level_max.begin(), island.level_max.end(), threshold) -
                   island.level_max.begin());
  }
  Fill(island, Unfreeze(island, first, now), now);
  return first;
}

void MaxMinFiller::Release(Island& island) {
  groups_total_ -= island.groups.size();
  island.groups.clear();
  island.level_max.clear();
  island.flows.Release();
}

void MaxMinFiller::CountUnfrozen(const Island& island, size_t begin, size_t end, double bytes_per_flow) {
  counter_.Count(island, begin, end);
  for (int32_t l : counter_.counted()) {
    if (links_.unfrozen[size_t(l)] == 0) touched_.push_back(l);
    const int64_t c = counter_.Take(l);
    links_.unfrozen[size_t(l)] += c;
    carried_bytes_[size_t(l)] += double(c) * bytes_per_flow;
  }
}

void MaxMinFiller::Fill(Island& island, size_t start, double now) {
  // The unfrozen flows on their links, and the bytes of the steps started
  // since the last fill in the same pass, as counts times bytes so that the
  // totals do not depend on the order of the flows.
  const size_t n = island.flows.size();
  touched_.clear();
  size_t counted_to = start;
  for (const NewFlows& added : island.new_flows) {
    assert(added.begin >= counted_to && added.end <= n && "new flows are unfrozen");
    CountUnfrozen(island, counted_to, added.begin, 0);
    CountUnfrozen(island, added.begin, added.end, added.bytes_per_flow);
    if (added.other_bytes > 0) {
      // The flows of the other size (their bytes left are still their
      // bytes) make up the difference.
      counter_.Count(island, added.begin, added.end, added.other_bytes);
      for (int32_t l : counter_.counted()) {
        carried_bytes_[size_t(l)] += double(counter_.Take(l)) * (added.other_bytes - added.bytes_per_flow);
      }
    }
    counted_to = added.end;
  }
  CountUnfrozen(island, counted_to, n, 0);
  island.new_flows.clear();
  // Rounds settle the regular cases in a few passes and split over ranks;
  // lists cost one pass whatever the number of distinct rates, but every
  // rank runs them whole. So a large fill starts in rounds while each
  // freezes at least half of what is left, and goes on by lists once what
  // is left fits them.
  bool rounds = false;
  int64_t before = 0;
  while (true) {
    ThrowIfInterrupted();  // a fill of millions of flows takes a second
    int64_t entries = 0;  // over all ranks: none left when every flow is frozen
    for (int32_t l : touched_) entries += links_.unfrozen[size_t(l)];
    if (entries == 0) break;
    rounds = before == 0 ? entries >= rounds_first_entries_ : rounds && 2 * entries <= before;
    before = entries;
    if (distinct_caps_.empty() && entries <= max_list_entries_ && !rounds) {
      std::sort(touched_.begin(), touched_.end());
      lists_.Fill(island, start, touched_, &links_, &frozen_);
      MakeGroups(island, now);
      break;
    }
    start = rounds_.Round(island, start, n, touched_, &links_, &frozen_);
    MakeGroups(island, now);
  }
  for ([[maybe_unused]] int32_t l : touched_) assert(links_.unfrozen[size_t(l)] == 0);
}

void MaxMinFiller::MakeGroups(Island& island, double now) {
  auto by_remaining = [](const Flow& x, const Flow& y) { return x.remaining_bytes < y.remaining_bytes; };
  for (const FrozenRange& range : frozen_) {
    Flow* b = island.flows.data() + range.begin;
    Flow* e = island.flows.data() + range.end;
    if (!std::is_sorted(b, e, by_remaining)) std::sort(b, e, by_remaining);
    island.groups.push_back({range.level, now, range.begin, range.end, range.begin, next_serial_++});
    island.level_max.push_back(island.level_max.empty() ? range.level
                                                        : std::max(range.level, island.level_max.back()));
    ++groups_total_;
  }
}

}  // namespace railsim::sim
