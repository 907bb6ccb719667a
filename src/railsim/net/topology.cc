#include "railsim/net/topology.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

namespace railsim::net {
namespace {

// SplitMix64 finaliser: a fixed, well-mixed hash so that equal-cost path
// choices spread evenly and never depend on run or platform.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Link of `bundle` that reaches upper switch `upper` (0-based in its group).
LinkId LinkToUpper(const UplinkBundle& bundle, int32_t upper) {
  int32_t t = ((upper - bundle.offset) % bundle.upper_count + bundle.upper_count) %
              bundle.upper_count;
  assert(t < bundle.count && "lower switch is not cabled to this upper switch");
  return bundle.first_link + t;
}

}  // namespace

const char* DesignName(Design design) {
  switch (design) {
    case Design::kRailOnly: return "rail-only";
    case Design::kRailOptimized: return "rail-optimized";
    case Design::kFatTree: return "fat-tree";
  }
  return "?";
}

std::optional<Design> ParseDesign(std::string_view name) {
  for (Design d : {Design::kRailOnly, Design::kRailOptimized, Design::kFatTree}) {
    if (name == DesignName(d)) return d;
  }
  return std::nullopt;
}

std::vector<std::string> DesignNames() { return {"rail-only", "rail-optimized", "fat-tree"}; }

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kNone: return "none";
    case Tier::kLeaf: return "leaf";
    case Tier::kSpine: return "spine";
    case Tier::kCore: return "core";
  }
  return "?";
}

const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kNvlink: return "nvlink";
    case LinkKind::kPcie: return "pcie";
    case LinkKind::kNicToLeaf: return "nic-leaf";
    case LinkKind::kLeafToSpine: return "leaf-spine";
    case LinkKind::kSpineToCore: return "spine-core";
  }
  return "?";
}

int Topology::tiers() const {
  int tiers = 0;
  for (const ClosFabric& f : fabrics_) tiers = std::max(tiers, f.tiers);
  return tiers;
}

std::string Topology::NodeName(NodeId id) const {
  const Node& n = nodes_[id];
  switch (n.kind) {
    case NodeKind::kGpu: return fmt::format("gpu{}", n.index);
    case NodeKind::kNic: return fmt::format("nic{}", n.index);
    case NodeKind::kHbDomain: return fmt::format("hb{}", n.index);
    case NodeKind::kSwitch:
      if (n.rail >= 0) return fmt::format("rail{}/{}{}", n.rail, TierName(n.tier), n.index);
      return fmt::format("{}{}", TierName(n.tier), n.index);
  }
  return "?";
}

std::vector<Hop> Topology::Route(int64_t src, int64_t dst) const {
  assert(src >= 0 && src < gpus() && dst >= 0 && dst < gpus());
  std::vector<Hop> path;
  if (src == dst) return path;
  if (domain_of(src) == domain_of(dst)) {
    path.push_back({gpu_hb_link_[src], true});
    path.push_back({gpu_hb_link_[dst], false});
    return path;
  }
  if (params_.design == Design::kRailOnly && rail_of(src) != rail_of(dst)) {
    // Forward over NVLink to the GPU of src's domain on dst's rail.
    int64_t via = domain_of(src) * params_.hb_domain_size + rail_of(dst);
    path.push_back({gpu_hb_link_[src], true});
    path.push_back({gpu_hb_link_[via], false});
    AppendFabricPath(via, dst, &path);
    return path;
  }
  AppendFabricPath(src, dst, &path);
  return path;
}

void Topology::AppendFabricPath(int64_t src, int64_t dst, std::vector<Hop>* path) const {
  assert(gpu_fabric_[src] == gpu_fabric_[dst] && "endpoints on different fabrics");
  const ClosFabric& f = fabrics_[gpu_fabric_[src]];
  const int32_t ls = gpu_leaf_[src];
  const int32_t ld = gpu_leaf_[dst];
  const uint64_t h = Mix(static_cast<uint64_t>(src) * 0x100000001b3ULL ^ static_cast<uint64_t>(dst));
  path->push_back({gpu_pcie_link_[src], true});
  path->push_back({gpu_nic_leaf_link_[src], true});
  if (ls != ld) {
    const UplinkBundle& us = f.leaf_up[ls];
    const UplinkBundle& ud = f.leaf_up[ld];
    if (f.tiers == 2) {
      int32_t spine = static_cast<int32_t>(h % static_cast<uint64_t>(us.upper_count));
      path->push_back({LinkToUpper(us, spine), true});
      path->push_back({LinkToUpper(ud, spine), false});
    } else {
      // Aggregation index j must exist under both leaves.
      int32_t j = static_cast<int32_t>(h % static_cast<uint64_t>(std::min(us.count, ud.count)));
      path->push_back({us.first_link + j, true});
      if (f.leaf_pod[ls] != f.leaf_pod[ld]) {
        const UplinkBundle& as = f.agg_up[f.pod_first_agg[f.leaf_pod[ls]] + j];
        const UplinkBundle& ad = f.agg_up[f.pod_first_agg[f.leaf_pod[ld]] + j];
        int32_t core = static_cast<int32_t>((h >> 32) % static_cast<uint64_t>(as.upper_count));
        path->push_back({LinkToUpper(as, core), true});
        path->push_back({LinkToUpper(ad, core), false});
      }
      path->push_back({ud.first_link + j, false});
    }
  }
  path->push_back({gpu_nic_leaf_link_[dst], false});
  path->push_back({gpu_pcie_link_[dst], false});
}

std::vector<NodeId> Topology::RouteNodes(int64_t src, int64_t dst) const {
  std::vector<NodeId> nodes = {gpu_node(src)};
  for (const Hop& hop : Route(src, dst)) {
    const Link& l = links_[hop.link];
    nodes.push_back(hop.upward ? l.b : l.a);
  }
  return nodes;
}

}  // namespace railsim::net
