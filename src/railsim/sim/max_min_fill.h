// MaxMinFiller: max-min fair rates for an island's flows by progressive
// filling, kept up to date as flows start and finish.
//
// Each direction of each link is shared max-min fairly. A fill freezes
// flows into groups (one rate each, sorted by bytes left) after the
// island's groups already frozen; rates change only when flows start or
// finish, and are refilled only where the change reaches: when flows finish,
// every flow slower than the slowest finished one keeps its rate (max-min
// filling below that level does not see them), so only the groups at or
// above it are reopened and refilled. A step's new flows refill their
// islands whole.
//
// A fill first counts the unfrozen flows on their links (and the bytes of
// new flows, as counts times bytes). Fills of rounds_first_entries (flow,
// link) pairs or more start in rounds (sim/fill_rounds.h: no memory per
// flow, split over threads and ranks) while each settles at least half of
// what is left; then, once what is left fits max_list_entries and no flow
// is capped, it goes on by lists (sim/fill_lists.h: one pass whatever the
// number of distinct rates), else on in rounds.
//
// Not thread-safe (it starts its own threads). Holds references to its
// constructor's arguments, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "railsim/sim/fill_lists.h"
#include "railsim/sim/fill_rounds.h"
#include "railsim/sim/fill_state.h"
#include "railsim/sim/islands.h"
#include "railsim/sim/link_counter.h"
#include "railsim/sim/simulator.h"
#include "railsim/sim/task_graph.h"

namespace railsim::sim {

class MaxMinFiller {
 public:
  MaxMinFiller(const FlowRouter& router, const Workers& workers, LinkCounter* counter, Ranks ranks,
               const TaskGraph& tasks, const SimOptions& options);
  MaxMinFiller(const MaxMinFiller&) = delete;
  MaxMinFiller& operator=(const MaxMinFiller&) = delete;

  /// Reopens `island`'s groups[first, end): their live flows' bytes left
  /// brought up to `now`, moved together from groups[first].begin (the
  /// finished ones dropped) and their rates taken off the links; with
  /// first == 0 the island's links start empty. Returns where they start.
  size_t Unfreeze(Island& island, size_t first, double now);

  /// Gives `island`'s flows their max-min rates at `now`: with `full`,
  /// every group reopened; otherwise the groups at or above `r_min` (the
  /// slowest finished flow's rate). Returns the index of the first group
  /// that is new.
  size_t Refill(Island& island, bool full, double r_min, double now);

  /// `flows` finished flows at rate `level` leave link `link`.
  void TakeOff(int32_t link, int64_t flows, double level) { links_.used[size_t(link)] -= double(flows) * level; }

  /// The island's flows have all finished: its groups go and its flows'
  /// memory goes back. Its links are zeroed when a step joins it again.
  void Release(Island& island);

  /// Groups over all islands.
  size_t groups_total() const { return groups_total_; }

  /// Per directed link: its capacity in bytes/s, and the bytes it carried
  /// (AddBytes() and every fill's new flows).
  double capacity(size_t link) const { return links_.capacity[link]; }
  const std::vector<double>& carried_bytes() const { return carried_bytes_; }
  void AddBytes(int32_t link, double bytes) { carried_bytes_[size_t(link)] += bytes; }

 private:
  // Fills `island`'s unfrozen flows[start, end).
  void Fill(Island& island, size_t start, double now);
  // The fill's unfrozen flows[begin, end) of `island` on their links, each
  // with `bytes_per_flow` more carried bytes.
  void CountUnfrozen(const Island& island, size_t begin, size_t end, double bytes_per_flow);
  // frozen_ become groups of `island` at `now`.
  void MakeGroups(Island& island, double now);

  // Fixed for the simulation.
  LinkCounter& counter_;
  const std::vector<double>& distinct_caps_;
  const int64_t max_list_entries_;
  const int64_t rounds_first_entries_;

  // The link state through the simulation (sim/fill_state.h), and each
  // directed link's bytes carried, for the result.
  LinkRates links_;
  std::vector<double> carried_bytes_;

  // Groups: the next one's serial, and how many there are over all islands.
  uint32_t next_serial_ = 0;
  size_t groups_total_ = 0;

  // The two ways to fill, each with its scratch.
  FillRounds rounds_;
  FillLists lists_;

  // Scratch, kept between fills: a fill's links (those its unfrozen flows
  // cross), the groups a round or the lists froze, and the reopened groups
  // counted on their links.
  std::vector<int32_t> touched_;
  std::vector<FrozenRange> frozen_;
  std::vector<FlowRange> ranges_;
};

}  // namespace railsim::sim
