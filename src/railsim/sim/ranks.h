// Ranks: the simulator's side of a Partition (sim/partition.h). It says
// which of a step's flows this process holds, and runs the reductions every
// global decision is made from; in one process they leave the values alone.
//
// Copyable on purpose: it is a pointer to a partition the caller owns.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "railsim/sim/flow_store.h"
#include "railsim/sim/partition.h"

namespace railsim::sim {

class Ranks {
 public:
  /// `partition` may be null; one of size 1 counts as none. Not owned.
  explicit Ranks(Partition* partition) : partition_(partition && partition->size() > 1 ? partition : nullptr) {}

  /// Whether the flows are split over several processes.
  bool split() const { return partition_ != nullptr; }
  int size() const { return partition_ ? partition_->size() : 1; }
  int rank() const { return partition_ ? partition_->rank() : 0; }

  /// Whether this process holds the `index`-th flow a step generates
  /// (every size()-th, from its rank).
  bool Owns(int64_t index) const { return !partition_ || index % partition_->size() == partition_->rank(); }

  /// Each value becomes its sum (SumAll) or least (MinAll) over the ranks.
  void SumAll(std::span<int64_t> values) const {
    if (partition_) partition_->SumInt64(values);
  }
  void MinAll(std::span<double> values) const {
    if (partition_) partition_->MinDouble(values);
  }

  /// `*all` becomes every rank's `mine`, in rank order. Requires split().
  void GatherFlows(std::span<const Flow> mine, std::vector<Flow>* all) const { partition_->GatherFlows(mine, all); }
  void GatherInt64(std::span<const int64_t> mine, std::vector<int64_t>* all) const {
    partition_->GatherInt64(mine, all);
  }

 private:
  Partition* partition_;  // null in one process
};

}  // namespace railsim::sim
