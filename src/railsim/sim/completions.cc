#include "railsim/sim/completions.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace railsim::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double FinishTime(const Group& g, const Flow& f) { return g.updated_s + std::max(0.0, f.remaining_bytes) / g.level; }

}  // namespace

Completions::Completions(std::vector<Island>* islands, LinkCounter* counter, MaxMinFiller* filler, Ranks ranks)
    : islands_(*islands), counter_(*counter), filler_(*filler), ranks_(ranks) {}

double Completions::NextFinish() {
  while (!heap_.empty()) {
    const Entry& e = heap_.top();
    const std::vector<Group>& groups = islands_[size_t(e.island)].groups;
    if (size_t(e.group) < groups.size() && groups[size_t(e.group)].serial == e.serial) return e.time_s;
    heap_.pop();
  }
  return kInf;
}

void Completions::Push(int32_t island, size_t group) {
  const Island& is = islands_[size_t(island)];
  const Group& g = is.groups[group];
  if (g.cursor < g.end) heap_.push({FinishTime(g, is.flows[g.cursor]), int32_t(group), g.serial, island});
}

void Completions::Refilled(int32_t island, size_t first, size_t groups_total) {
  if (heap_.size() > 2 * groups_total + 64) {
    heap_ = {};
    for (size_t i = 0; i < islands_.size(); ++i) {
      for (size_t k = 0; k < islands_[i].groups.size(); ++k) Push(int32_t(i), k);
    }
    return;
  }
  for (size_t k = first; k < islands_[size_t(island)].groups.size(); ++k) Push(island, k);
}

const std::vector<Finished>& Completions::FinishFlows(double t) {
  const double limit = t + kSameTime * std::max(t, 1e-12);
  finished_.clear();
  while (NextFinish() <= limit) {
    const Entry e = heap_.top();
    heap_.pop();
    Island& island = islands_[size_t(e.island)];
    Group& g = island.groups[size_t(e.group)];
    const size_t begin = g.cursor;
    while (g.cursor < g.end && FinishTime(g, island.flows[g.cursor]) <= limit) ++g.cursor;
    if (g.cursor > begin) finished_.push_back({e.island, size_t(e.group), begin, g.cursor, int64_t(g.cursor - begin)});
    Push(e.island, size_t(e.group));
  }
  std::sort(finished_.begin(), finished_.end(), [](const Finished& a, const Finished& b) {
    return a.island < b.island || (a.island == b.island && a.group < b.group);
  });
  if (ranks_.split()) MergeFinished();
  if (finished_.empty()) return finished_;
  for (const Finished& f : finished_) islands_[size_t(f.island)].unfinished -= f.count;
  // They leave their links in the order of (island, group), so that the
  // totals do not depend on which rank holds which flows.
  ranges_.clear();
  range_finished_.clear();
  for (const Finished& f : finished_) {
    const Island& island = islands_[size_t(f.island)];
    if (island.unfinished == 0) continue;
    ranges_.push_back({island.flows.data(), f.begin, f.end});
    range_finished_.push_back(&f);
  }
  counter_.CountBatch(ranges_, [&](size_t k, int32_t l, int64_t c) {
    const Finished& f = *range_finished_[k];
    filler_.TakeOff(l, c, islands_[size_t(f.island)].groups[f.group].level);
  });
  return finished_;
}

void Completions::MergeFinished() {
  // Groups are numbered across the islands, which every rank holds alike,
  // for one collective.
  std::vector<size_t>& base = group_base_;
  base.assign(islands_.size() + 1, 0);
  for (size_t i = 0; i < islands_.size(); ++i) base[i + 1] = base[i] + islands_[i].groups.size();
  auto number = [&](const Finished& f) { return base[size_t(f.island)] + f.group; };
  double window[2] = {kInf, kInf};  // the least group number, and minus the greatest
  if (!finished_.empty()) {
    window[0] = double(number(finished_.front()));
    window[1] = -double(number(finished_.back()));
  }
  ranks_.MinAll(window);
  if (window[0] == kInf) return;
  const size_t lo = size_t(window[0]), hi = size_t(-window[1]);
  std::vector<int64_t>& counts = merge_counts_;
  counts.assign(hi - lo + 1, 0);
  for (const Finished& f : finished_) counts[number(f) - lo] = f.count;
  ranks_.SumAll(counts);
  std::vector<Finished> merged;
  size_t mine = 0;
  for (size_t n = 0; n < counts.size(); ++n) {
    if (counts[n] == 0) continue;
    const size_t island = size_t(std::upper_bound(base.begin(), base.end(), lo + n) - base.begin()) - 1;
    Finished f{int32_t(island), lo + n - base[island], 0, 0, counts[n]};
    if (mine < finished_.size() && number(finished_[mine]) == lo + n) {
      f.begin = finished_[mine].begin;
      f.end = finished_[mine].end;
      ++mine;
    }
    merged.push_back(f);
  }
  finished_.swap(merged);
}

}  // namespace railsim::sim
