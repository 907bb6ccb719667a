// The network a shared cluster's jobs are placed on and share: where each GPU
// sits (HB domain, rail, leaf switch), the directed links a message between
// two GPUs crosses, and max-min fair rates of many flows at once.
//
// Two kinds: a network built by net/builder.h (rail-only, rail-optimized,
// fat-tree; routes are net::Topology::RouteInto, with Rail-only's forwarding
// through the HB domain for cross-rail pairs), or a switch map read from a
// file (spec::SwitchMap: hosts -> ToR -> aggregation -> one core layer), with
// a fixed number of GPUs per host and each ToR cabled for full bisection: as
// many NIC-speed cables up as NICs below, split evenly over its aggregation
// switches, each flow hashed (ECMP) onto one; aggregation to core as one link
// of their total (the map gives no link counts or speeds: an assumption,
// stated in docs/cluster.md).
//
// Immutable once made; safe to share between threads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "railsim/net/topology.h"
#include "railsim/spec/job_trace.h"

namespace railsim::study {

/// Most hops a path has (net::kMaxRouteHops).
constexpr int kMaxPathLinks = 12;

class ClusterFabric {
 public:
  /// Builds `params` (which must pass net::ValidateTopologyParams).
  static std::shared_ptr<const ClusterFabric> Built(const net::TopologyParams& params);
  /// The switch map's hosts in file order, `gpus_per_host` GPUs each (one HB
  /// domain per host), NICs of `nic_bw_Bps`, NVLink of `hb_bw_Bps` per GPU.
  static std::shared_ptr<const ClusterFabric> FromSwitchMap(const spec::SwitchMap& map, int gpus_per_host,
                                                            double nic_bw_Bps, double hb_bw_Bps);

  /// "rail-only", "rail-optimized", "fat-tree" or "switch-map".
  const std::string& design() const { return design_; }
  int64_t gpus() const { return gpus_; }
  int64_t hb_domain_size() const { return hb_domain_size_; }
  int64_t domains() const { return gpus_ / hb_domain_size_; }
  double nic_bw_Bps() const { return nic_bw_Bps_; }
  double hb_bw_Bps() const { return hb_bw_Bps_; }
  /// Leaf switch of a GPU's NIC (a dense id over the whole network).
  int32_t leaf_of(int64_t gpu) const { return gpu_leaf_[size_t(gpu)]; }
  /// The leaf group a domain's schedulers see: the leaf of its first GPU.
  int32_t domain_block(int64_t domain) const { return gpu_leaf_[size_t(domain * hb_domain_size_)]; }
  int32_t leaf_count() const { return leaf_count_; }
  int64_t directed_links() const { return static_cast<int64_t>(capacity_Bps_.size()); }
  double capacity(int32_t link) const { return capacity_Bps_[size_t(link)]; }
  /// True for directed links above the leaves (leaf-spine, spine-core,
  /// ToR-aggregation, aggregation-core): the links jobs under different
  /// leaves share.
  bool above_leaf(int32_t link) const { return above_leaf_[size_t(link)] != 0; }

  /// The directed links from GPU src to GPU dst (src != dst), written to
  /// `out` (room for kMaxPathLinks); returns how many. Deterministic.
  int Path(int64_t src, int64_t dst, int32_t* out) const;

 private:
  ClusterFabric() = default;
  int SwitchMapPath(int64_t src, int64_t dst, int32_t* out) const;

  std::string design_;
  int64_t gpus_ = 0;
  int64_t hb_domain_size_ = 1;
  double nic_bw_Bps_ = 0, hb_bw_Bps_ = 0;
  std::vector<int32_t> gpu_leaf_;
  int32_t leaf_count_ = 0;
  std::vector<double> capacity_Bps_;
  std::vector<uint8_t> above_leaf_;
  std::unique_ptr<net::Topology> topology_;  // built designs
  // Switch map: per ToR its first ToR-aggregation link pair and aggregations.
  std::vector<std::vector<int32_t>> tor_psws_;
  std::vector<int32_t> tor_first_up_;
  std::vector<int32_t> tor_cables_;  // cables from a ToR to each of its aggregation switches
  int32_t psw_first_up_ = 0;
};

/// Flows for MaxMinRates: flow f crosses links[starts[f] .. starts[f + 1]).
struct FlowSet {
  std::vector<int64_t> starts = {0};
  std::vector<int32_t> links;
  int64_t size() const { return static_cast<int64_t>(starts.size()) - 1; }
  void Add(const int32_t* path, int n) {
    links.insert(links.end(), path, path + n);
    starts.push_back(static_cast<int64_t>(links.size()));
  }
};

/// Max-min fair rates (bytes/s) of every flow of `flows` sharing the fabric's
/// directed links (progressive filling: the most loaded link's fair share
/// freezes its flows, repeatedly). Flows with no links get the NIC rate.
std::vector<double> MaxMinRates(const ClusterFabric& fabric, const FlowSet& flows);

}  // namespace railsim::study
