// FillRounds: max-min filling in rounds, with no memory per flow.
//
// A round computes every link's share (what is left of it over its
// unfrozen flows), then each link's least flow share (the least, over the
// flows crossing it, of the least share on their paths), and freezes at
// once every link whose share is that least: in exact arithmetic max-min
// gives those flows exactly that share. Only links (and flow caps) up to
// the least share of any other link freeze, so that groups come out in
// increasing rate. The round's flows are then sorted into one bucket per
// rate (American flag sort, in place) plus the unfrozen ones.
//
// Regular cases (d-mod-k, one rate per tier) settle in a few rounds; each
// round is two passes over the flows on the workers' threads and a
// reduction over the ranks, so rounds split over both.
//
// Not thread-safe (it starts its own threads). Holds references to its
// constructor's arguments, which must outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "railsim/sim/fill_state.h"
#include "railsim/sim/flow_router.h"
#include "railsim/sim/islands.h"
#include "railsim/sim/link_counter.h"
#include "railsim/sim/ranks.h"
#include "railsim/sim/workers.h"

namespace railsim::sim {

class FillRounds {
 public:
  /// `task_caps`: per task, its flows' rate cap (0: none); `distinct_caps`:
  /// the distinct nonzero caps, ascending.
  FillRounds(const FlowRouter& router, const Workers& workers, LinkCounter* counter, Ranks ranks,
             const std::vector<double>& task_caps, const std::vector<double>& distinct_caps);
  FillRounds(const FillRounds&) = delete;
  FillRounds& operator=(const FillRounds&) = delete;

  /// One round over `island`'s unfrozen flows[start, n), whose links are
  /// `touched` (each with its unfrozen count in `links`): moves the flows it
  /// freezes to the front of the range, one bucket per rate, sets `*frozen`
  /// to the buckets that hold flows on some rank (ascending rate), and puts
  /// their rates on their links. Returns where the unfrozen flows start.
  /// Requires some unfrozen flow (the least share always freezes one).
  size_t Round(Island& island, size_t start, size_t n, std::span<const int32_t> touched, LinkRates* links,
               std::vector<FrozenRange>* frozen);

 private:
  // One thread's part of a pass: per directed link, the least flow share it
  // saw (+inf outside the pass); the least cap above a flow's share; flows
  // per bucket.
  struct ThreadScratch {
    std::vector<double> least;
    double cap_min;
    std::vector<int64_t> buckets;
  };

  // The least share on the flow's path, and its cap.
  double LeastShare(const Flow& flow, const int32_t* path, int n) const;
  // The index in levels_ of the rate the flow freezes at this round, or
  // levels_.size() if it stays unfrozen.
  size_t Bucket(const Flow& flow) const;
  // Over ranks: least_ of the touched links and the least cap above a
  // flow's share, their minima over the ranks.
  void ReduceLeast(std::span<const int32_t> touched, double* cap_min);
  // Moves each flow of the round into its bucket's range [next[k], end[k])
  // by following cycles, each flow moved at most once.
  void PlaceInBuckets(Island& island, std::vector<size_t>* next, const std::vector<size_t>& end);

  // Fixed for the simulation.
  const FlowRouter& router_;
  const Workers& workers_;
  LinkCounter& counter_;
  const Ranks ranks_;
  const std::vector<double>& task_caps_;
  const std::vector<double>& distinct_caps_;

  // This round, per directed link (valid on the touched links): its share,
  // its least flow share, and whether it freezes.
  std::vector<double> share_;
  std::vector<double> least_;
  std::vector<uint8_t> freeze_;
  // This round: the rates it freezes, ascending, and the bound no rate
  // above freezes at.
  std::vector<double> levels_;
  double bound_ = 0;

  // Scratch, kept between rounds.
  std::vector<ThreadScratch> thread_scratch_;  // per worker
  std::vector<double> reduce_least_;           // ReduceLeast()'s values
  std::vector<FlowRange> ranges_;              // the buckets, counted on their links
};

}  // namespace railsim::sim
