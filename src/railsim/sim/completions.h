// Completions: when the groups' flows finish, and the flows that finish
// together in one event.
//
// A group's flows share a rate and an update time, so they finish in the
// order of their bytes left, in which the filler sorted them: each group has
// one entry in a min-heap, at its next flow's finish. A refill reopens
// groups and leaves their entries stale (the serial no longer matches);
// stale entries are dropped when they reach the top, and the heap is
// rebuilt once they outnumber the live ones, so that schedules with many
// small refills (ECMP, pipelined) do not sift through a growing heap.
//
// Flows that finish within a relative kSameTime of the earliest finish
// finish with it, in one event (float noise of equal-rate flows). Over
// ranks, each rank finds its own and they are merged by group, so every
// rank sees the same finished groups with the same counts.
//
// Not thread-safe. Holds references to its constructor's arguments, which
// must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "railsim/sim/islands.h"
#include "railsim/sim/link_counter.h"
#include "railsim/sim/max_min_fill.h"
#include "railsim/sim/ranks.h"

namespace railsim::sim {

/// Flows finishing within this relative time of the earliest finish in an
/// event finish with it: equal-rate flows' finish times differ by float
/// noise, and one event for them all saves a refill each.
constexpr double kSameTime = 1e-9;

/// Flows finishing in one event: this rank's flows[begin, end) of group
/// `group` of island `island`, and their count over all ranks.
struct Finished {
  int32_t island;
  size_t group, begin, end;
  int64_t count;
};

class Completions {
 public:
  Completions(std::vector<Island>* islands, LinkCounter* counter, MaxMinFiller* filler, Ranks ranks);
  Completions(const Completions&) = delete;
  Completions& operator=(const Completions&) = delete;

  /// The earliest finish among this rank's groups; +inf when none.
  double NextFinish();

  /// Takes the flows finishing at `t`, the earliest finish over all ranks,
  /// and within kSameTime of it: returns them by (island, group), counts
  /// them off their islands' unfinished flows, and takes their rates off
  /// their links (unless their island has none left: its next fill starts
  /// from empty links). Empty when no rank has any. The result is valid
  /// until the next call.
  const std::vector<Finished>& FinishFlows(double t);

  /// `island`'s groups from `first` on are new (MaxMinFiller::Refill);
  /// `groups_total` is the number of groups over all islands.
  void Refilled(int32_t island, size_t first, size_t groups_total);

 private:
  // A group's next finish. Ordered by time, then island, then group.
  struct Entry {
    double time_s;
    int32_t group;
    uint32_t serial;  // the group's when pushed: stale once it was reopened
    int32_t island;
    bool operator>(const Entry& o) const {
      return time_s > o.time_s ||
             (time_s == o.time_s && (island > o.island || (island == o.island && group > o.group)));
    }
  };

  // The group's next flow's finish, if it has an unfinished flow.
  void Push(int32_t island, size_t group);
  // Over ranks: finished_ becomes every group with flows finished on any
  // rank, with their count over the ranks and this rank's range (empty
  // where it has none).
  void MergeFinished();

  // Fixed for the simulation.
  std::vector<Island>& islands_;
  LinkCounter& counter_;
  MaxMinFiller& filler_;
  const Ranks ranks_;

  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;

  // The last event's finished flows, and scratch kept between events.
  std::vector<Finished> finished_;
  std::vector<FlowRange> ranges_;               // finished flows, counted on their links
  std::vector<const Finished*> range_finished_;  // per range: its flows
  std::vector<size_t> group_base_;              // MergeFinished(): per island, its first group's number
  std::vector<int64_t> merge_counts_;           // MergeFinished(): per group number, its count
};

}  // namespace railsim::sim
