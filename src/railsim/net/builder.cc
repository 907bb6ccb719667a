#include "railsim/net/builder.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/memory.h"
#include "railsim/core/units.h"

namespace railsim::net {
namespace {

// PCIe Gen5 x16, per direction: the GPU-to-NIC host link. It is faster than
// any NIC the presets use, so it never limits a route; it is in the graph so
// that exports show the whole path.
constexpr double kPcieGen5x16Bps = 64e9;

// Bytes of graph per GPU: five 32-byte links, two and a half 20-byte
// nodes, six per-GPU indexes and the builder's port counters, about 245;
// measured 253 (peak RSS of `railsim network` on 1,048,576 GPUs, 265 MB),
// so 300 leaves room for the vectors' slack.
constexpr double kGraphBytesPerGpu = 300;
// Share of the machine's available memory a graph may take: the rest is
// for the bill of materials, exports and whatever else the machine runs.
constexpr double kGraphMemoryShare = 0.6;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Up-links a leaf with `endpoints` down-links needs for oversubscription R.
int32_t UplinkDemand(int64_t endpoints, double oversubscription) {
  // The epsilon keeps exact quotients (48 / 3.0) from rounding up.
  return static_cast<int32_t>(std::ceil(static_cast<double>(endpoints) / oversubscription - 1e-9));
}

// Sizes one upper layer over lower switches that need demand[i] up-links.
// Every lower switch is cabled to every upper one (so counts[i] is at least
// the upper count), and no upper switch has more than `radix` ports in use.
// Returns the number of upper switches.
int32_t PlanUplinks(const std::vector<int32_t>& demand, int radix, std::vector<int32_t>* counts) {
  int64_t sum = 0;
  for (int32_t d : demand) sum += d;
  int64_t uppers = std::max<int64_t>(1, CeilDiv(sum, radix));
  for (;;) {
    int64_t total = 0;
    for (int32_t d : demand) total += std::max<int64_t>(d, uppers);
    int64_t needed = CeilDiv(total, radix);
    if (needed <= uppers) break;
    uppers = needed;
  }
  counts->clear();
  for (int32_t d : demand) counts->push_back(static_cast<int32_t>(std::max<int64_t>(d, uppers)));
  return static_cast<int32_t>(uppers);
}

// Rails of a rail-optimized fabric that share one leaf: as many whole rails
// as fit under its down-ports when a rail is smaller than a leaf (an
// architect does not buy a 64-port leaf for a one-GPU rail), else one.
int64_t RailsPerLeaf(const TopologyParams& p) {
  const int64_t per_rail = p.gpus / p.hb_domain_size;  // NICs per rail: one per domain
  if (p.nics() <= p.radix) return 1;  // one switch holds every NIC anyway
  const int64_t down = LeafDownPorts(p.radix, p.oversubscription);
  return per_rail < down ? down / per_rail : 1;
}

// Endpoint group sizes of a design's fabrics: one list per fabric; a leaf
// never spans two groups.
std::vector<std::vector<int64_t>> FabricGroups(const TopologyParams& p) {
  int64_t rails = p.rails();
  int64_t per_rail = p.gpus / p.hb_domain_size;
  switch (p.design) {
    case Design::kFatTree: return {{p.nics()}};
    case Design::kRailOptimized: {
      const int64_t shared = RailsPerLeaf(p);
      std::vector<int64_t> groups(rails / shared, shared * per_rail);
      if (rails % shared != 0) groups.push_back(rails % shared * per_rail);
      return {groups};
    }
    case Design::kRailOnly: return std::vector<std::vector<int64_t>>(rails, {per_rail});
  }
  return {};
}

}  // namespace

int LeafDownPorts(int radix, double oversubscription) {
  assert(radix >= 2 && oversubscription >= 1);
  int down = radix - 1;
  while (down > 1 && down + UplinkDemand(down, oversubscription) > radix) --down;
  return down;
}

int ClosTiersNeeded(const std::vector<int64_t>& group_sizes, int radix, double oversubscription) {
  int64_t total = 0;
  for (int64_t g : group_sizes) total += g;
  if (total <= radix) return 1;
  int64_t down = LeafDownPorts(radix, oversubscription);
  int64_t leaves = 0;
  for (int64_t g : group_sizes) leaves += CeilDiv(g, down);
  if (leaves <= radix) return 2;
  int64_t pods = CeilDiv(leaves, radix / 2);
  return pods <= radix ? 3 : 4;
}

int TiersNeeded(const TopologyParams& params) {
  int tiers = 0;
  for (const std::vector<int64_t>& groups : FabricGroups(params)) {
    tiers = std::max(tiers, ClosTiersNeeded(groups, params.radix, params.oversubscription));
  }
  return tiers;
}

void ValidateTopologyParams(const TopologyParams& p, int64_t max_gpus) {
  assert(max_gpus <= kHardMaxBuildGpus);
  if (p.gpus < 1 || p.gpus > max_gpus) {
    std::string why;
    if (p.gpus > max_gpus) {
      why = fmt::format(" (the graph of {} GPUs needs about {} MB; raise --max-gpus, at most {}, to "
                        "build it anyway)",
                        p.gpus, p.gpus * 5 * 48 / 1000000, kHardMaxBuildGpus);
    }
    throw Error("--gpus", fmt::format("expected an integer in [1, {}], got {}{}", max_gpus, p.gpus, why));
  }
  if (p.hb_domain_size < 1 || p.hb_domain_size > p.gpus || p.gpus % p.hb_domain_size != 0) {
    throw Error("--hb-size", fmt::format("expected a positive divisor of --gpus {}, got {}", p.gpus,
                                         p.hb_domain_size));
  }
  if (p.radix < 2 || p.radix % 2 != 0 || p.radix > 65536) {
    throw Error("--radix", fmt::format("expected an even integer in [2, 65536], got {}", p.radix));
  }
  if (!(p.port_speed_Bps > 0) || !std::isfinite(p.port_speed_Bps)) {
    throw Error("--port-speed", "expected a positive bandwidth such as 400Gbps");
  }
  if (!(p.hb_bw_Bps > 0) || !std::isfinite(p.hb_bw_Bps)) {
    throw Error("hb_bandwidth", "expected a positive bandwidth");
  }
  if (p.gpus_per_nic < 1 || p.gpus_per_nic > p.hb_domain_size || p.hb_domain_size % p.gpus_per_nic != 0) {
    throw Error("--gpus-per-nic", fmt::format("expected a positive divisor of the HB domain size {}, got {}",
                                              p.hb_domain_size, p.gpus_per_nic));
  }
  if (!(p.oversubscription >= 1) || !(p.oversubscription <= p.radix - 1)) {
    throw Error("--oversubscription",
                fmt::format("expected a ratio in [1, {}] (leaf down:up), got {}", p.radix - 1,
                            p.oversubscription));
  }
  // About five links and two and a half nodes per GPU, with the per-GPU
  // indexes; refused when the machine cannot hold it (with room to spare
  // for the bill of materials and exports).
  const double graph_bytes = double(p.gpus) * kGraphBytesPerGpu;
  const double available = double(AvailableMemoryBytes());
  if (graph_bytes > kGraphMemoryShare * available) {
    throw Error("--gpus", fmt::format("the graph of {} GPUs needs about {:.1f} GB, more than the {:.1f} GB this "
                                      "machine has free; use fewer GPUs or a larger machine",
                                      p.gpus, graph_bytes / 1e9, available / 1e9));
  }
  if (TiersNeeded(p) > 3) {
    int64_t max_endpoints = int64_t{p.radix} * p.radix / 2 * p.radix / 2;
    throw Error("--radix",
                fmt::format("{} needs more than three switch tiers at radix {} (a three-tier "
                            "full-bisection Clos holds at most k^3/4 = {} endpoints per fabric); "
                            "use a larger radix",
                            DesignName(p.design), p.radix, max_endpoints));
  }
}

void ValidateAllDesigns(const TopologyParams& params, int64_t max_gpus) {
  for (Design d : {Design::kRailOptimized, Design::kRailOnly, Design::kFatTree}) {
    TopologyParams p = params;
    p.design = d;
    ValidateTopologyParams(p, max_gpus);
  }
}

// Builds a Topology in one pass; see builder.h for the shape of each fabric.
class TopologyBuilder {
 public:
  explicit TopologyBuilder(const TopologyParams& params) { t_.params_ = params; }

  Topology Build() {
    const TopologyParams& p = t_.params_;
    AddEndpoints();
    // The fabrics connect NICs; a NIC is named by its first GPU.
    int rails = t_.rails();
    int64_t per_rail = p.gpus / p.hb_domain_size;
    switch (p.design) {
      case Design::kFatTree: {
        std::vector<std::vector<int64_t>> groups(1);
        for (int64_t g = 0; g < p.gpus; g += p.gpus_per_nic) groups[0].push_back(g);
        BuildClos(groups, -1, -1);
        break;
      }
      case Design::kRailOptimized: {
        const int64_t shared = RailsPerLeaf(p);
        std::vector<std::vector<int64_t>> groups;
        for (int r = 0; r < rails; ++r) {
          if (r % shared == 0) groups.emplace_back();
          std::vector<int64_t> members = RailMembers(r);
          groups.back().insert(groups.back().end(), members.begin(), members.end());
        }
        BuildClos(groups, -1, -1);
        break;
      }
      case Design::kRailOnly: {
        // A rail that fills at most half a switch shares a partitioned chassis.
        int64_t rails_per_chassis = per_rail <= p.radix / 2 ? p.radix / per_rail : 1;
        int64_t first_chassis = t_.chassis_count_;
        for (int r = 0; r < rails; ++r) {
          int64_t chassis = rails_per_chassis > 1 ? first_chassis + r / rails_per_chassis : -1;
          int32_t port_base =
              rails_per_chassis > 1 ? static_cast<int32_t>((r % rails_per_chassis) * per_rail) : 0;
          BuildClos({RailMembers(r)}, r, chassis, port_base);
        }
        if (rails_per_chassis > 1) t_.chassis_count_ = first_chassis + CeilDiv(rails, rails_per_chassis);
        break;
      }
    }
    return std::move(t_);
  }

 private:
  // The first GPU of each of the rail's NICs, one per HB domain.
  std::vector<int64_t> RailMembers(int rail) const {
    const TopologyParams& p = t_.params_;
    std::vector<int64_t> members;
    members.reserve(p.gpus / p.hb_domain_size);
    for (int64_t g = int64_t{rail} * p.gpus_per_nic; g < p.gpus; g += p.hb_domain_size) members.push_back(g);
    return members;
  }

  NodeId AddNode(Node node, int32_t first_port = 0) {
    t_.nodes_.push_back(node);
    next_port_.push_back(first_port);
    return static_cast<NodeId>(t_.nodes_.size() - 1);
  }

  // `chassis` < 0 means a chassis of its own.
  NodeId AddSwitch(Tier tier, int rail, int64_t chassis, int32_t first_port = 0) {
    int32_t& counter = switch_counter_[{rail, tier}];
    int32_t c = chassis >= 0 ? static_cast<int32_t>(chassis) : static_cast<int32_t>(t_.chassis_count_++);
    return AddNode({NodeKind::kSwitch, tier, counter++, rail, c, 0}, first_port);
  }

  LinkId AddLink(NodeId a, NodeId b, LinkKind kind, int rail, double capacity_Bps) {
    int32_t port_a = 0, port_b = 0;
    if (kind != LinkKind::kPcie) {  // the host link uses no fabric port
      port_a = next_port_[a]++;
      port_b = next_port_[b]++;
      ++t_.nodes_[a].ports_used;
      ++t_.nodes_[b].ports_used;
    }
    t_.links_.push_back({a, b, port_a, port_b, kind, rail, capacity_Bps});
    return static_cast<LinkId>(t_.links_.size() - 1);
  }

  void AddEndpoints() {
    const TopologyParams& p = t_.params_;
    int64_t n = p.gpus;
    int64_t domains = n / p.hb_domain_size;
    t_.nodes_.reserve(static_cast<size_t>(2 * n + domains + n / 4 + 16));
    next_port_.reserve(t_.nodes_.capacity());
    t_.links_.reserve(static_cast<size_t>(5 * n + 16));
    for (int64_t g = 0; g < n; ++g) {
      AddNode({NodeKind::kGpu, Tier::kNone, static_cast<int32_t>(g), t_.rail_of(g), -1, 0});
    }
    for (int64_t g = 0; g < n; g += p.gpus_per_nic) {
      AddNode({NodeKind::kNic, Tier::kNone, static_cast<int32_t>(t_.nic_of(g)), t_.rail_of(g), -1, 0});
    }
    for (int64_t d = 0; d < domains; ++d) {
      AddNode({NodeKind::kHbDomain, Tier::kNone, static_cast<int32_t>(d), -1, -1, 0});
    }
    t_.gpu_hb_link_.resize(n);
    t_.gpu_pcie_link_.resize(n);
    t_.gpu_nic_leaf_link_.assign(n, -1);
    t_.gpu_fabric_.assign(n, -1);
    t_.gpu_leaf_.assign(n, -1);
    t_.gpu_leaf_position_.assign(n, -1);
    for (int64_t g = 0; g < n; ++g) {
      t_.gpu_hb_link_[g] = AddLink(t_.gpu_node(g), t_.hb_node(t_.domain_of(g)), LinkKind::kNvlink,
                                   t_.rail_of(g), p.hb_bw_Bps);
      t_.gpu_pcie_link_[g] = AddLink(t_.gpu_node(g), t_.nic_node(g), LinkKind::kPcie, t_.rail_of(g),
                                     std::max(kPcieGen5x16Bps, p.port_speed_Bps));
    }
  }

  // One Clos over `groups` of GPUs; a leaf never spans two groups. `rail` is
  // the rail of a rail-only fabric (-1 otherwise). A one-switch fabric may be
  // a partition of a shared chassis starting at `port_base`.
  void BuildClos(const std::vector<std::vector<int64_t>>& groups, int rail, int64_t chassis,
                 int32_t port_base = 0) {
    const TopologyParams& p = t_.params_;
    const double speed = p.port_speed_Bps;
    const int32_t fabric_index = static_cast<int32_t>(t_.fabrics_.size());
    ClosFabric f;
    int64_t total = 0;
    for (const auto& g : groups) total += static_cast<int64_t>(g.size());

    // Leaves, each with its NICs on the first ports.
    std::vector<std::vector<int64_t>> leaf_members;
    if (total <= p.radix) {
      leaf_members.emplace_back();
      for (const auto& g : groups) leaf_members[0].insert(leaf_members[0].end(), g.begin(), g.end());
    } else {
      size_t down = static_cast<size_t>(LeafDownPorts(p.radix, p.oversubscription));
      for (const auto& g : groups) {
        for (size_t i = 0; i < g.size(); i += down) {
          leaf_members.emplace_back(g.begin() + i, g.begin() + std::min(g.size(), i + down));
        }
      }
    }
    for (size_t i = 0; i < leaf_members.size(); ++i) {
      NodeId leaf = AddSwitch(Tier::kLeaf, rail, total <= p.radix ? chassis : -1,
                              total <= p.radix ? port_base : 0);
      f.leaves.push_back(leaf);
      int32_t position = 0;
      for (int64_t first : leaf_members[i]) {
        const LinkId cable = AddLink(t_.nic_node(first), leaf, LinkKind::kNicToLeaf, rail, speed);
        for (int64_t g = first; g < first + p.gpus_per_nic; ++g) {  // the NIC's GPUs
          t_.gpu_nic_leaf_link_[g] = cable;
          t_.gpu_fabric_[g] = fabric_index;
          t_.gpu_leaf_[g] = static_cast<int32_t>(i);
          t_.gpu_leaf_position_[g] = position;
        }
        ++position;
      }
    }
    const int64_t leaves = static_cast<int64_t>(leaf_members.size());
    if (total <= p.radix) {
      f.tiers = 1;
      f.leaf_up.assign(1, UplinkBundle{});
    } else {
      std::vector<int32_t> demand;
      for (const auto& m : leaf_members) {
        demand.push_back(UplinkDemand(static_cast<int64_t>(m.size()), p.oversubscription));
      }
      if (leaves <= p.radix) {
        f.tiers = 2;
        f.leaf_up = WireLayer(f.leaves, demand, Tier::kSpine, LinkKind::kLeafToSpine, rail);
      } else {
        f.tiers = 3;
        BuildPods(&f, demand, rail);
      }
    }
    t_.fabrics_.push_back(std::move(f));
  }

  // Adds an upper layer over `lower` switches, every lower switch cabled to
  // every upper one, and returns each lower switch's bundle.
  std::vector<UplinkBundle> WireLayer(const std::vector<NodeId>& lower,
                                      const std::vector<int32_t>& demand, Tier tier, LinkKind kind,
                                      int rail) {
    const TopologyParams& p = t_.params_;
    std::vector<int32_t> counts;
    int32_t uppers = PlanUplinks(demand, p.radix, &counts);
    NodeId upper_base = -1;
    for (int32_t u = 0; u < uppers; ++u) {
      NodeId id = AddSwitch(tier, rail, -1);
      if (u == 0) upper_base = id;
    }
    std::vector<UplinkBundle> bundles;
    int64_t offset = 0;
    for (size_t i = 0; i < lower.size(); ++i) {
      UplinkBundle b;
      b.first_link = static_cast<LinkId>(t_.links_.size());
      b.count = counts[i];
      b.offset = static_cast<int32_t>(offset % uppers);
      b.upper_count = uppers;
      b.upper_base = upper_base;
      for (int32_t t = 0; t < counts[i]; ++t) {
        AddLink(lower[i], upper_base + static_cast<NodeId>((b.offset + t) % uppers), kind, rail,
                p.port_speed_Bps);
      }
      offset += counts[i];
      bundles.push_back(b);
    }
    return bundles;
  }

  // Three tiers: pods of k/2 leaves, each leaf's t-th up-link to its pod's
  // t-th aggregation ("spine") switch; aggregation switch j of every pod joins
  // core plane j, a two-level layer wired like WireLayer.
  void BuildPods(ClosFabric* f, const std::vector<int32_t>& demand, int rail) {
    const TopologyParams& p = t_.params_;
    const int64_t half = p.radix / 2;
    const int64_t leaves = static_cast<int64_t>(f->leaves.size());
    const int64_t pods = CeilDiv(leaves, half);
    f->leaves_per_pod = static_cast<int32_t>(half);
    std::vector<std::vector<NodeId>> plane_aggs;
    std::vector<std::vector<int32_t>> plane_demand;
    std::vector<std::vector<int32_t>> plane_agg_index;
    f->leaf_pod.resize(leaves);
    for (int64_t pod = 0; pod < pods; ++pod) {
      int64_t first = pod * half;
      int64_t last = std::min(leaves, first + half);
      int32_t aggs = *std::max_element(demand.begin() + first, demand.begin() + last);
      f->pod_first_agg.push_back(static_cast<int32_t>(f->agg_up.size()));
      NodeId agg_base = -1;
      for (int32_t j = 0; j < aggs; ++j) {
        NodeId id = AddSwitch(Tier::kSpine, rail, -1);
        if (j == 0) agg_base = id;
        if (static_cast<size_t>(j) >= plane_aggs.size()) {
          plane_aggs.emplace_back();
          plane_demand.emplace_back();
          plane_agg_index.emplace_back();
        }
        int32_t down = 0;
        for (int64_t l = first; l < last; ++l) down += demand[l] > j ? 1 : 0;
        plane_aggs[j].push_back(id);
        plane_demand[j].push_back(down);
        plane_agg_index[j].push_back(static_cast<int32_t>(f->agg_up.size()));
        f->agg_up.emplace_back();
      }
      for (int64_t l = first; l < last; ++l) {
        f->leaf_pod[l] = static_cast<int32_t>(pod);
        UplinkBundle b;
        b.first_link = static_cast<LinkId>(t_.links_.size());
        b.count = demand[l];
        b.offset = 0;
        b.upper_count = aggs;
        b.upper_base = agg_base;
        for (int32_t t = 0; t < demand[l]; ++t) {
          AddLink(f->leaves[l], agg_base + t, LinkKind::kLeafToSpine, rail, p.port_speed_Bps);
        }
        f->leaf_up.push_back(b);
      }
    }
    for (size_t j = 0; j < plane_aggs.size(); ++j) {
      std::vector<UplinkBundle> bundles =
          WireLayer(plane_aggs[j], plane_demand[j], Tier::kCore, LinkKind::kSpineToCore, rail);
      for (size_t i = 0; i < bundles.size(); ++i) f->agg_up[plane_agg_index[j][i]] = bundles[i];
    }
  }

  Topology t_;
  std::vector<int32_t> next_port_;
  std::map<std::pair<int, Tier>, int32_t> switch_counter_;
};

Topology BuildTopology(const TopologyParams& params) {
  assert(TiersNeeded(params) <= 3 && "BuildTopology requires ValidateTopologyParams to pass");
  return TopologyBuilder(params).Build();
}

}  // namespace railsim::net
