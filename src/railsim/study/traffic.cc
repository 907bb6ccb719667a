#include "railsim/study/traffic.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <unordered_map>

#include "railsim/comm/algorithms.h"
#include "railsim/net/builder.h"

namespace railsim::study {
namespace {

// The parallelism whose bytes a group kind's collectives are counted under
// (expert-dp and the hybrid-sharding groups share dp's, etp tp's: none of
// their own).
std::optional<perf::Parallelism> ParallelismOf(perf::GroupKind kind) {
  switch (kind) {
    case perf::GroupKind::kTp: return perf::Parallelism::kTp;
    case perf::GroupKind::kCp: return perf::Parallelism::kCp;
    case perf::GroupKind::kEp: return perf::Parallelism::kEp;
    case perf::GroupKind::kPp: return perf::Parallelism::kPp;
    case perf::GroupKind::kDp: return perf::Parallelism::kDp;
    case perf::GroupKind::kEmbedding: return perf::Parallelism::kEmbedding;
    case perf::GroupKind::kExpertDp:
    case perf::GroupKind::kEtp:
    case perf::GroupKind::kDpShard:
    case perf::GroupKind::kDpReplica: return std::nullopt;
  }
  return std::nullopt;
}


constexpr const char* kClassNames[kTrafficClasses] = {"hb_domain", "same_rail", "cross_rail"};
constexpr const char* kTierNames[kTrafficTiers] = {"nvlink", "nic_to_leaf", "leaf_to_spine", "spine_to_core"};

// Pairs by (src, dst), merged as flows arrive.
class PairTable {
 public:
  PairTable(int64_t gpus, int64_t k) : gpus_(gpus), k_(k) {}

  void Add(int64_t src, int64_t dst, perf::Parallelism p, double bytes) {
    if (bytes <= 0) return;
    const uint64_t key = uint64_t(src) * uint64_t(gpus_) + uint64_t(dst);
    auto [it, inserted] = index_.try_emplace(key, pairs_.size());
    if (inserted) {
      PairTraffic t;
      t.src = int32_t(src);
      t.dst = int32_t(dst);
      t.traffic_class = src / k_ == dst / k_   ? TrafficClass::kHbDomain
                        : src % k_ == dst % k_ ? TrafficClass::kSameRail
                                               : TrafficClass::kCrossRail;
      pairs_.push_back(t);
    }
    pairs_[it->second].bytes[int(p)] += bytes;
  }

  std::vector<PairTraffic> Take() {
    std::sort(pairs_.begin(), pairs_.end(), [](const PairTraffic& a, const PairTraffic& b) {
      return a.src != b.src ? a.src < b.src : a.dst < b.dst;
    });
    index_.clear();
    return std::move(pairs_);
  }

 private:
  int64_t gpus_, k_;
  std::unordered_map<uint64_t, size_t> index_;
  std::vector<PairTraffic> pairs_;
};

// Member indices (a, b) of a point-to-point pattern on a group of n.
template <typename Fn>
void ForEachEdge(perf::PointToPoint p, int64_t n, Fn&& fn) {
  switch (p) {
    case perf::PointToPoint::kNone: break;
    case perf::PointToPoint::kNext:
      for (int64_t j = 0; j + 1 < n; ++j) fn(j, j + 1);
      break;
    case perf::PointToPoint::kPrevious:
      for (int64_t j = 0; j + 1 < n; ++j) fn(j + 1, j);
      break;
    case perf::PointToPoint::kLastToFirst: fn(n - 1, 0); break;
    case perf::PointToPoint::kFirstToLast: fn(0, n - 1); break;
    case perf::PointToPoint::kRing:
      for (int64_t j = 0; j < n; ++j) fn(j, (j + 1) % n);
      break;
  }
}

int TierOf(net::LinkKind kind) {
  switch (kind) {
    case net::LinkKind::kNvlink: return int(TrafficTier::kNvlink);
    case net::LinkKind::kNicToLeaf: return int(TrafficTier::kNicToLeaf);
    case net::LinkKind::kLeafToSpine: return int(TrafficTier::kLeafToSpine);
    case net::LinkKind::kSpineToCore: return int(TrafficTier::kSpineToCore);
    case net::LinkKind::kPcie: return -1;
  }
  return -1;
}

}  // namespace

const char* TrafficClassName(TrafficClass c) { return kClassNames[int(c)]; }
const char* TrafficTierName(TrafficTier t) { return kTierNames[int(t)]; }

TrafficResult AnalyzeTraffic(const perf::PerfContext& c, const spec::Strategy& s, const TrafficOptions& o) {
  // Groups and plans are read on the job's GPUs; pairs, classes and routes
  // on the built graph's (comm::DomainUse).
  const comm::DomainUse& use = c.domain_use;
  const int64_t n = use.BuiltGpus(c.gpus);
  const int64_t k = c.built_hb_domain_size();
  TrafficResult r;
  r.gpus = n;
  r.hb_domain_size = k;
  r.gpus_per_domain = use.whole() ? k : use.used;
  r.design = o.design;
  r.radix = c.shape.radix;
  r.tiers = c.shape.tiers;
  const perf::ParallelGroups layouts = perf::PlaceGroups(c, s);
  std::array<std::optional<perf::GroupMembers>, perf::kGroupKinds> members;
  PairTable table(n, k);

  for (const perf::CommCall& call : perf::IterationComm(c, s)) {
    std::optional<perf::GroupMembers>& slot = members[int(call.group)];
    if (!slot) slot = perf::MembersOf(c, s, call.group);
    const perf::GroupMembers& m = *slot;
    if (m.size <= 1 || m.count == 0) continue;
    auto weight = [&](int64_t group) {
      return call.times.size() == 1 ? call.times[0] : call.times[size_t(m.stage[size_t(group)])];
    };
    if (call.p2p != perf::PointToPoint::kNone) {
      for (int64_t g = 0; g < m.count; ++g) {
        const double bytes = call.bytes * weight(g);
        const int64_t* gpus = m.gpus.data() + g * m.size;
        ForEachEdge(call.p2p, m.size, [&](int64_t a, int64_t b) {
          table.Add(use.GpuId(gpus[a]), use.GpuId(gpus[b]), call.parallelism, bytes);
          ++r.flows;
        });
      }
      continue;
    }
    // A collective: its plan's phases on the placed layout, read in member
    // index space (group g's members are ranks g * size ...) and mapped to
    // the GPUs the placement gives them.
    const comm::GroupLayout& layout = layouts[call.group];
    const comm::Plan plan = perf::CallPlan(call, layout, c.fabrics);
    for (int i = 0; i < plan.count; ++i) {
      comm::Phase phase = plan.phases[i];
      assert(phase.family.stride % layout.stride == 0);
      phase.family.stride /= layout.stride;
      const double scale = double(phase.chunks) * double(phase.repeat);
      comm::ForEachFlow(phase, m.size * m.count, c.fabrics.hb_domain_size, [&](int64_t src, int64_t dst, double b) {
        table.Add(use.GpuId(m.gpus[size_t(src)]), use.GpuId(m.gpus[size_t(dst)]), call.parallelism,
                  b * scale * weight(src / m.size));
        ++r.flows;
      });
    }
  }
  r.pairs = table.Take();

  // Classes and parallelisms.
  for (const PairTraffic& p : r.pairs) {
    if (p.src != p.dst) ++r.pairs_communicating;
    for (int i = 0; i < perf::kParallelisms; ++i) {
      r.bytes_by_parallelism[size_t(i)] += p.bytes[size_t(i)];
      r.bytes_by_parallelism_and_class[size_t(i)][int(p.traffic_class)] += p.bytes[size_t(i)];
      r.bytes_by_class[int(p.traffic_class)] += p.bytes[size_t(i)];
      r.bytes_total += p.bytes[size_t(i)];
    }
  }

  // Tiers: every pair routed on the built network.
  const net::Topology topology = net::BuildTopology(
      perf::GraphParams(c.system, perf::ClusterNetwork{c.fabrics, c.shape, c.domain_use}, o.design, c.gpus));
  r.tiers = topology.tiers();
  const std::vector<net::Link>& links = topology.links();
  net::Hop hops[net::kMaxRouteHops];
  // Tier totals do not depend on which equal-cost path a pair takes.
  const net::RouteOptions route{net::ParseRouting(c.system.nic_routing).value_or(net::Routing::kEcmp), 0};
  for (const PairTraffic& p : r.pairs) {
    const double bytes = p.total();
    if (p.src == p.dst) {
      r.bytes_by_tier[int(TrafficTier::kNvlink)] += 2 * bytes;  // up to the switch and back
      continue;
    }
    const int count = topology.RouteInto(p.src, p.dst, route, hops);
    for (int h = 0; h < count; ++h) {
      const int tier = TierOf(links[size_t(hops[h].link)].kind);
      if (tier >= 0) r.bytes_by_tier[size_t(tier)] += bytes;
    }
  }
  // The check reads the same bytes as the table: a group whose traffic
  // changes rail is marked as crossing rails, whatever its geometry says
  // (a ring that leaves a domain on another rail than it entered).
  r.placement_check = perf::CheckPlacement(c, s);
  for (perf::GroupCheck& g : r.placement_check) {
    std::optional<perf::Parallelism> p = ParallelismOf(g.kind);
    double cross = -1;  // no bytes of its own
    if (p) {
      cross = 0;
      const auto& cls = r.bytes_by_parallelism_and_class[size_t(*p)];
      const double total = cls[0] + cls[1] + cls[2];
      cross = total > 0 ? cls[int(TrafficClass::kCrossRail)] / total : 0;
      if (total > 0) {
        g.spread = cls[int(TrafficClass::kCrossRail)] > 0 ? perf::GroupSpread::kCrossRail
                   : cls[int(TrafficClass::kSameRail)] > 0 ? perf::GroupSpread::kSameRail
                                                            : perf::GroupSpread::kHbDomain;
      }
    }
    r.placement_cross_rail_share.push_back(cross);
  }
  return r;
}

}  // namespace railsim::study
