// Traffic analysis: who talks to whom in one training iteration, and over
// which links of the built network.
//
// The pairs come from the flows of the collectives the performance model
// times (perf/iteration_comm.h), read through comm/'s plans (which pairs a
// ring, a tree, a hierarchical all-reduce or a forwarded all-to-all
// connects), with each parallel group where the job's placement puts it.
// Every pair's bytes are then routed on the built network (net/) and summed
// per tier. Stored sparsely: one entry per communicating pair, never N x N.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "railsim/net/topology.h"
#include "railsim/perf/context.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/iteration_comm.h"
#include "railsim/spec/strategy.h"

namespace railsim::study {

/// Where a pair sits: inside one HB domain, on one rail across domains, or
/// across rails and domains (the bytes only a shared spine can carry
/// directly; Rail-only forwards them through the HB domain).
enum class TrafficClass : uint8_t { kHbDomain, kSameRail, kCrossRail };
constexpr int kTrafficClasses = 3;
const char* TrafficClassName(TrafficClass c);  ///< "hb_domain", "same_rail", "cross_rail"

/// Link tiers the bytes cross (PCIe between a GPU and its NIC is not counted).
enum class TrafficTier : uint8_t { kNvlink, kNicToLeaf, kLeafToSpine, kSpineToCore };
constexpr int kTrafficTiers = 4;
const char* TrafficTierName(TrafficTier t);  ///< "nvlink", "nic_to_leaf", "leaf_to_spine", "spine_to_core"

struct PairTraffic {
  int32_t src = 0;
  int32_t dst = 0;  ///< == src: through the HB switch's in-network reduction
  TrafficClass traffic_class = TrafficClass::kHbDomain;
  std::array<double, perf::kParallelisms> bytes{};
  double total() const {
    double t = 0;
    for (double b : bytes) t += b;
    return t;
  }
};

struct TrafficOptions {
  net::Design design = net::Design::kRailOptimized;
};

struct TrafficResult {
  int64_t gpus = 0;             ///< of the built graph: the pairs' GPU ids are below it
  int64_t hb_domain_size = 0;   ///< K, as built
  int64_t gpus_per_domain = 0;  ///< of each domain the job uses (K unless it uses part of each)
  net::Design design = net::Design::kRailOptimized;
  int radix = 0;
  int tiers = 0;
  std::vector<PairTraffic> pairs;  ///< by (src, dst)
  int64_t pairs_communicating = 0;  ///< src != dst with bytes
  int64_t flows = 0;                ///< flows read off the plans (before merging into pairs)
  double bytes_total = 0;
  std::array<double, kTrafficClasses> bytes_by_class{};
  std::array<double, perf::kParallelisms> bytes_by_parallelism{};
  std::array<std::array<double, kTrafficClasses>, perf::kParallelisms> bytes_by_parallelism_and_class{};
  /// Bytes summed over the links of each tier (a flow up and down a tier
  /// counts twice there).
  std::array<double, kTrafficTiers> bytes_by_tier{};
  std::vector<perf::GroupCheck> placement_check;
  /// Per placement_check entry: the share of its parallelism's bytes that
  /// change rail, or -1 for groups whose bytes are counted with dp's.
  std::vector<double> placement_cross_rail_share;
  int64_t job_gpus() const { return gpus / hb_domain_size * gpus_per_domain; }
  int64_t gpu_pairs() const { return job_gpus() * (job_gpus() - 1); }  ///< ordered pairs of the job's GPUs
};

/// Analyses one iteration of `s` in context `c` (whose network kind must
/// match `o.design`: Rail-only for rail-only, rail-optimized otherwise).
/// The pairs are GPUs of the built graph: a job on part of each HB domain
/// (c.domain_use) keeps the real ids of its GPUs, rails and NICs. Requires a
/// strategy valid for c.model on c.gpus and for c.placement, and the built
/// GPUs within net's build limit.
TrafficResult AnalyzeTraffic(const perf::PerfContext& c, const spec::Strategy& s, const TrafficOptions& o);

}  // namespace railsim::study
