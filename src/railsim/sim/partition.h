// Partition: how one simulation is split over cooperating processes (MPI
// ranks under `mpirun`), seen from sim/, which knows no MPI.
//
// Every rank calls Simulate() with the same topology, plan and options, and
// its own Partition. Each rank creates and holds only its share of every
// step's flows (so the flow records, the simulator's memory per flow, are
// about the total over size()), and every global decision (link shares,
// the links that freeze, the next completion, the flows finishing, the ends
// of steps) is made from values reduced over the ranks, so that all ranks
// take the same decisions at the same times to the last bit, and the result
// is the single process's. Only integer sums and minima are reduced (they
// do not depend on the order of the ranks).
//
// The calls are collective: every rank makes the same calls in the same
// order with the same sizes. mpi/partition.h implements it with MPI;
// tests use ranks on threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "railsim/sim/flow_store.h"

namespace railsim::sim {

class Partition {
 public:
  virtual ~Partition() = default;

  /// This process's index in [0, size()), and the number of processes.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  /// Replaces every value by its sum over the ranks.
  virtual void SumInt64(std::span<int64_t> values) = 0;
  /// Replaces every value by its least over the ranks.
  virtual void MinDouble(std::span<double> values) = 0;
  /// Set `*all` to every rank's `mine`, concatenated in rank order.
  /// Require fewer than 2^31 bytes in all.
  virtual void GatherFlows(std::span<const Flow> mine, std::vector<Flow>* all) = 0;
  virtual void GatherInt64(std::span<const int64_t> mine, std::vector<int64_t>* all) = 0;
};

}  // namespace railsim::sim
