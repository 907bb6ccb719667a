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

// Cables of `bundle` that reach upper switch `upper` (0-based in its group):
// link t goes to upper (offset + t) % upper_count, so the cables to one upper
// switch are t0, t0 + upper_count, ... below count.
int32_t FirstCableTo(const UplinkBundle& bundle, int32_t upper) {
  return ((upper - bundle.offset) % bundle.upper_count + bundle.upper_count) % bundle.upper_count;
}
int32_t CablesTo(const UplinkBundle& bundle, int32_t upper) {
  int32_t t0 = FirstCableTo(bundle, upper);
  assert(t0 < bundle.count && "lower switch is not cabled to this upper switch");
  return (bundle.count - t0 + bundle.upper_count - 1) / bundle.upper_count;
}
// The `choice`-th (mod the number) cable between the bundle's switch and `upper`.
LinkId CableTo(const UplinkBundle& bundle, int32_t upper, uint64_t choice) {
  int32_t t0 = FirstCableTo(bundle, upper);
  int32_t q = static_cast<int32_t>(choice % static_cast<uint64_t>(CablesTo(bundle, upper)));
  return bundle.first_link + t0 + q * bundle.upper_count;
}
// The upper switch that cable t of `bundle` reaches.
int32_t UpperOf(const UplinkBundle& bundle, int32_t t) {
  return (bundle.offset + t) % bundle.upper_count;
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

const char* RoutingName(Routing routing) {
  return routing == Routing::kDModK ? "d-mod-k" : "ecmp";
}

std::optional<Routing> ParseRouting(std::string_view name) {
  if (name == "ecmp") return Routing::kEcmp;
  if (name == "d-mod-k") return Routing::kDModK;
  return std::nullopt;
}

std::vector<Hop> Topology::Route(int64_t src, int64_t dst, const RouteOptions& options) const {
  Hop hops[kMaxRouteHops];
  int n = RouteInto(src, dst, options, hops);
  return std::vector<Hop>(hops, hops + n);
}

int Topology::RouteInto(int64_t src, int64_t dst, const RouteOptions& options, Hop* out) const {
  assert(src >= 0 && src < gpus() && dst >= 0 && dst < gpus());
  if (src == dst) return 0;
  if (domain_of(src) == domain_of(dst)) {
    out[0] = {gpu_hb_link_[src], true};
    out[1] = {gpu_hb_link_[dst], false};
    return 2;
  }
  if (params_.design == Design::kRailOnly && rail_of(src) != rail_of(dst)) {
    // Forward over NVLink to the GPU of src's domain in dst's place (on
    // dst's rail).
    int64_t via = domain_of(src) * params_.hb_domain_size + dst % params_.hb_domain_size;
    out[0] = {gpu_hb_link_[src], true};
    out[1] = {gpu_hb_link_[via], false};
    return 2 + AppendFabricPath(via, dst, options, out + 2);
  }
  return AppendFabricPath(src, dst, options, out);
}

// Up the Clos from src's leaf and down to dst's. ECMP draws every choice from
// one hash of (seed, src, dst); d-mod-k derives them from dst's position so
// that each destination is reached through its own down-links.
int Topology::AppendFabricPath(int64_t src, int64_t dst, const RouteOptions& options, Hop* out) const {
  assert(gpu_fabric_[src] == gpu_fabric_[dst] && "endpoints on different fabrics");
  const ClosFabric& f = fabrics_[gpu_fabric_[src]];
  const int32_t ls = gpu_leaf_[src];
  const int32_t ld = gpu_leaf_[dst];
  const bool dmodk = options.routing == Routing::kDModK;
  const uint64_t h = Mix(options.seed ^ Mix(static_cast<uint64_t>(src) * 0x100000001b3ULL ^
                                            static_cast<uint64_t>(dst)));
  const uint64_t h2 = Mix(h);
  const uint64_t pos = static_cast<uint64_t>(gpu_leaf_position_[dst]);
  int n = 0;
  out[n++] = {gpu_pcie_link_[src], true};
  out[n++] = {gpu_nic_leaf_link_[src], true};
  if (ls != ld) {
    const UplinkBundle& us = f.leaf_up[ls];
    const UplinkBundle& ud = f.leaf_up[ld];
    if (f.tiers == 2) {
      // d-mod-k: the destination's position picks the spine's cable into its
      // leaf (one per position), and the source leaf's cable to that spine.
      int32_t t_down = static_cast<int32_t>((dmodk ? pos : h2) % static_cast<uint64_t>(ud.count));
      int32_t spine = dmodk ? UpperOf(ud, t_down)
                            : UpperOf(us, static_cast<int32_t>(h % static_cast<uint64_t>(us.count)));
      // With several cables to that spine, rotate by the destination leaf so
      // that the destinations sharing a spine spread over them.
      const uint64_t up_key = pos / static_cast<uint64_t>(us.upper_count) + static_cast<uint64_t>(ld);
      out[n++] = {CableTo(us, spine, dmodk ? up_key : h >> 20), true};
      out[n++] = {dmodk ? ud.first_link + t_down : CableTo(ud, spine, h2), false};
    } else {
      // Aggregation index j must exist under both leaves.
      const uint64_t aggs = static_cast<uint64_t>(std::min(us.count, ud.count));
      int32_t j = static_cast<int32_t>((dmodk ? pos : h) % aggs);
      out[n++] = {us.first_link + j, true};
      if (f.leaf_pod[ls] != f.leaf_pod[ld]) {
        const UplinkBundle& as = f.agg_up[f.pod_first_agg[f.leaf_pod[ls]] + j];
        const UplinkBundle& ad = f.agg_up[f.pod_first_agg[f.leaf_pod[ld]] + j];
        // d-mod-k: the destination leaf (within its pod) and the position
        // above j pick the core's cable into the destination's aggregation
        // switch, so each serves one destination in the full-bisection case.
        const uint64_t key = static_cast<uint64_t>(ld - f.pod_first_leaf(f.leaf_pod[ld])) +
                             (pos / aggs) * static_cast<uint64_t>(f.leaves_in_pod(f.leaf_pod[ld]));
        int32_t t_down = static_cast<int32_t>((dmodk ? key : h2) % static_cast<uint64_t>(ad.count));
        int32_t core = dmodk ? UpperOf(ad, t_down)
                             : UpperOf(as, static_cast<int32_t>((h >> 24) % static_cast<uint64_t>(as.count)));
        out[n++] = {CableTo(as, core, dmodk ? key / static_cast<uint64_t>(as.upper_count) : h2 >> 8), true};
        out[n++] = {dmodk ? ad.first_link + t_down : CableTo(ad, core, h2 >> 24), false};
      }
      out[n++] = {ud.first_link + j, false};
    }
  }
  out[n++] = {gpu_nic_leaf_link_[dst], false};
  out[n++] = {gpu_pcie_link_[dst], false};
  return n;
}

std::vector<NodeId> Topology::RouteNodes(int64_t src, int64_t dst, const RouteOptions& options) const {
  std::vector<NodeId> nodes = {gpu_node(src)};
  for (const Hop& hop : Route(src, dst, options)) {
    const Link& l = links_[hop.link];
    nodes.push_back(hop.upward ? l.b : l.a);
  }
  return nodes;
}

}  // namespace railsim::net
