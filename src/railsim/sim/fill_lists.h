// FillLists: max-min filling link by link, with per-link lists of flows.
//
// One pass builds, for every touched link, the list of the unfrozen flows
// crossing it (4 bytes per flow and link); then a lazy min-heap of link
// shares freezes the link with the least share, and with it every unfrozen
// flow on its list, one link after another (a share only grows while
// filling, so a stale entry is re-keyed when popped). It costs one pass
// whatever the number of distinct rates (ECMP's collisions give many), but
// it is sequential: over ranks, every rank gathers the unfrozen flows and
// fills them all the same way, then keeps an even share of each group.
//
// Requires no flow caps. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "railsim/sim/fill_state.h"
#include "railsim/sim/flow_router.h"
#include "railsim/sim/islands.h"
#include "railsim/sim/ranks.h"

namespace railsim::sim {

class FillLists {
 public:
  /// Holds a reference to `router`, which must outlive it.
  FillLists(const FlowRouter& router, Ranks ranks);
  FillLists(const FillLists&) = delete;
  FillLists& operator=(const FillLists&) = delete;

  /// Fills all of `island`'s unfrozen flows[start, end), whose links are
  /// `touched` in ascending order (links freeze in the order of their ids
  /// when their shares tie), each with its unfrozen count in `links`. Moves
  /// each group's flows together (not sorted) and sets `*frozen` to the
  /// groups in the order they froze; puts their rates on their links. Over
  /// ranks, this rank's flows are replaced by its share of every group, and
  /// a group may hold none of them.
  void Fill(Island& island, size_t start, std::span<const int32_t> touched, LinkRates* links,
            std::vector<FrozenRange>* frozen);

 private:
  // Fills flows[0, count), all of the fill's unfrozen flows: group k at rate
  // levels_[k] is flows[group_bounds_[k], group_bounds_[k + 1]) (maybe
  // empty).
  void FillFlows(Flow* flows, size_t count, std::span<const int32_t> touched, LinkRates* links);
  // Fill() over ranks, from every rank's unfrozen flows gathered.
  void FillGathered(Island& island, size_t start, std::span<const int32_t> touched, LinkRates* links,
                    std::vector<FrozenRange>* frozen);

  // Fixed for the simulation.
  const FlowRouter& router_;
  const Ranks ranks_;

  // Per directed link: its index in the touched links during a fill, else -1.
  std::vector<int32_t> slot_;

  // The last fill's groups: their rates, and where each starts.
  std::vector<double> levels_;
  std::vector<size_t> group_bounds_;

  // Scratch, kept between fills: many small fills would otherwise pay for
  // allocating and zeroing it each time.
  std::vector<uint32_t> list_begin_;  // per touched link: where its list starts in list_
  std::vector<uint32_t> list_;        // the lists, flow indices
  std::vector<uint32_t> list_end_;    // per touched link: where its list ends, while building
  std::vector<uint32_t> group_of_;    // per flow: its group, or kUnfrozen
};

}  // namespace railsim::sim
