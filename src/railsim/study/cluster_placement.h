// Which GPUs a scheduler policy gives a job on a shared cluster: the free
// GPUs per HB domain and per leaf group, and one function per policy.
//
// - first-fit: the lowest free GPU ids, one GPU at a time (topology-naive).
// - domain-packing: whole free HB domains first, the remainder (or a job
//   smaller than a domain) in the domain with the fewest free GPUs that holds
//   it (rail-aligned packing).
// - fewest-leaves: Slurm's topology/tree: the leaf group (domains under one
//   leaf switch) with the fewest free GPUs that holds the job, else leaf
//   groups by most free GPUs first; inside, domains by most free first.
// - block: Slurm's topology/block with --segment: the job in segments of
//   `segment` GPUs, each inside one HB domain (an NVL72 rack), best fit.
// - wait-for-fit: domain-packing's placement when it exists; after the
//   bound, first-fit's (ClusterState::Place is asked with `waited_out`).
// Not thread-safe; one per replay.
#pragma once

#include <cstdint>
#include <vector>

#include "railsim/study/cluster.h"
#include "railsim/study/cluster_fabric.h"

namespace railsim::study {

class ClusterState {
 public:
  explicit ClusterState(const ClusterFabric& fabric);

  int64_t free_gpus() const { return free_total_; }
  /// The GPUs `policy` gives a job of `gpus`, ascending, or empty when it
  /// cannot be placed now. `waited_out`: wait-for-fit's bound has passed.
  std::vector<int64_t> Place(SchedulerPolicy policy, int64_t gpus, int64_t segment, bool waited_out) const;
  void Take(const std::vector<int64_t>& gpus) { Mark(gpus, true); }
  void Release(const std::vector<int64_t>& gpus) { Mark(gpus, false); }

 private:
  std::vector<int64_t> FirstFit(int64_t gpus) const;
  std::vector<int64_t> DomainPacking(int64_t gpus) const;
  std::vector<int64_t> FewestLeaves(int64_t gpus) const;
  std::vector<int64_t> Block(int64_t gpus, int64_t segment) const;
  int64_t BestFitDomain(int64_t n, const std::vector<int64_t>& skip) const;
  void Mark(const std::vector<int64_t>& gpus, bool busy);
  // Appends up to `n` free GPUs of `domain` (lowest ids first) to `out`.
  void TakeFrom(int64_t domain, int64_t n, std::vector<int64_t>* out) const;

  const ClusterFabric& fabric_;
  int64_t k_;
  std::vector<uint8_t> busy_;
  std::vector<int64_t> domain_free_;
  std::vector<int64_t> block_free_;
  std::vector<std::vector<int64_t>> block_domains_;
  std::vector<int64_t> domain_hist_;  // domains per free-GPU count 0..K
  int64_t free_total_;
};

}  // namespace railsim::study
