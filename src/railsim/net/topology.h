// Topology: the built graph of a GPU cluster network (GPUs, NICs, HB domains,
// switches by tier, links with capacities) and routing over it.
//
// Three designs are built (net/builder.h): rail-optimized (one full-bisection
// Clos over all GPUs, same-rank GPUs under the same leaves), rail-only (one
// independent Clos per rail, no spine between rails) and fat-tree (one Clos
// with no rail alignment). Every count in the bill of materials comes from this
// graph, not from formulas.
//
// Node ids are dense: GPUs [0, N), NICs [N, N + N/g) (g GPUs share each NIC,
// 1 by default), HB domains [N + N/g, N + N/g + N/K), then switches. Link ids are dense too. A Topology is immutable once built
// and safe to share between threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::net {

using NodeId = int32_t;
using LinkId = int32_t;

enum class Design { kRailOnly, kRailOptimized, kFatTree };

/// "rail-only", "rail-optimized", "fat-tree".
const char* DesignName(Design design);
/// The design named `name`, or nullopt.
std::optional<Design> ParseDesign(std::string_view name);
/// All design names, for help and "did you mean".
std::vector<std::string> DesignNames();

enum class NodeKind : uint8_t { kGpu, kNic, kHbDomain, kSwitch };
/// Switch tiers; in a two-tier Clos only leaf and spine exist.
enum class Tier : uint8_t { kNone = 0, kLeaf = 1, kSpine = 2, kCore = 3 };
const char* TierName(Tier tier);

enum class LinkKind : uint8_t {
  kNvlink,       ///< GPU to its HB domain switch fabric
  kPcie,         ///< GPU to its own NIC (host link)
  kNicToLeaf,    ///< network: NIC to leaf switch
  kLeafToSpine,  ///< network
  kSpineToCore,  ///< network
};
/// True for links that are cables of the scale-out network (two transceivers).
inline bool IsNetworkLink(LinkKind kind) { return kind >= LinkKind::kNicToLeaf; }
const char* LinkKindName(LinkKind kind);

struct Node {
  NodeKind kind;
  Tier tier;         ///< kNone unless a switch
  int32_t index;     ///< gpu/nic/hb number, or switch number within (rail, tier)
  int32_t rail;      ///< rail of a GPU/NIC, or of a rail-only switch; -1 otherwise
  int32_t chassis;   ///< physical switch box of a switch (partitions share one); -1 otherwise
  int32_t ports_used;
};

struct Link {
  NodeId a;  ///< lower end (GPU, NIC, or the lower-tier switch)
  NodeId b;  ///< upper end
  int32_t port_a;
  int32_t port_b;
  LinkKind kind;
  int32_t rail;  ///< rail the link belongs to, -1 if shared by all rails
  double capacity_Bps;  ///< per direction
};

/// One link crossed in a direction: a -> b when `upward`, else b -> a.
struct Hop {
  LinkId link;
  bool upward;
};

/// How equal-cost paths are chosen. ECMP hashes each flow (src, dst, seed),
/// as Ethernet/RoCE switches hash 5-tuples; d-mod-k picks every up-port from
/// the destination's index, as InfiniBand's static fat-tree routing (OpenSM
/// ftree) does, so a uniform all-to-all on a full-bisection Clos has no
/// collisions.
enum class Routing : uint8_t { kEcmp, kDModK };
const char* RoutingName(Routing routing);
std::optional<Routing> ParseRouting(std::string_view name);

struct RouteOptions {
  Routing routing = Routing::kEcmp;
  uint64_t seed = 0;
};

/// Most hops a route has: two NVLink hops of forwarding, then PCIe, NIC-leaf,
/// two hops up and two down a three-tier Clos, leaf-NIC and PCIe.
constexpr int kMaxRouteHops = 12;

struct TopologyParams {
  Design design = Design::kRailOnly;
  int64_t gpus = 0;            ///< N
  int hb_domain_size = 0;      ///< K; divides N
  int radix = 0;               ///< ports per switch chassis; even, >= 2
  double port_speed_Bps = 0;   ///< network link rate
  double oversubscription = 1; ///< leaf down:up ratio, >= 1
  double hb_bw_Bps = 450e9;    ///< NVLink per GPU per direction
  /// GPUs behind one NIC, consecutive in their HB domain (a PCIe switch with
  /// two GPUs and one NIC: 4 NICs per 8 GPUs); divides K. The rails are the
  /// domain's K / g NICs, and the g GPUs of a NIC share its cable.
  int gpus_per_nic = 1;

  int64_t nics() const { return gpus / gpus_per_nic; }
  /// Rails: NICs per HB domain.
  int rails() const { return hb_domain_size / gpus_per_nic; }
};

/// How one lower switch's uplinks reach a group of upper switches: its `count`
/// links are consecutive ids from `first_link`, and link t goes to upper switch
/// (offset + t) % upper_count, whose node id is upper_base + that index.
struct UplinkBundle {
  LinkId first_link = -1;
  int32_t count = 0;
  int32_t offset = 0;
  int32_t upper_count = 0;
  NodeId upper_base = -1;
};

/// One folded Clos network (the whole fabric, or one rail of a rail-only one).
struct ClosFabric {
  int tiers = 0;                        ///< 1, 2 or 3
  std::vector<NodeId> leaves;           ///< leaf node ids
  std::vector<UplinkBundle> leaf_up;    ///< per leaf: to spines (2 tiers) or its pod's aggs (3)
  std::vector<int32_t> leaf_pod;        ///< per leaf (3 tiers)
  std::vector<int32_t> pod_first_agg;   ///< per pod: index into agg_up (3 tiers)
  std::vector<UplinkBundle> agg_up;     ///< per aggregation switch: to its core plane (3 tiers)
  int32_t leaves_per_pod = 0;           ///< k/2 (3 tiers)

  int32_t pod_first_leaf(int32_t pod) const { return pod * leaves_per_pod; }
  int32_t leaves_in_pod(int32_t pod) const {
    return std::min<int32_t>(leaves_per_pod, static_cast<int32_t>(leaves.size()) - pod_first_leaf(pod));
  }
};

class Topology {
 public:
  /// Use BuildTopology() (net/builder.h).
  Topology() = default;

  const TopologyParams& params() const { return params_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const std::vector<ClosFabric>& fabrics() const { return fabrics_; }

  int64_t gpus() const { return params_.gpus; }
  int64_t nics() const { return params_.nics(); }
  int64_t hb_domains() const { return params_.gpus / params_.hb_domain_size; }
  int rails() const { return params_.rails(); }
  NodeId gpu_node(int64_t gpu) const { return static_cast<NodeId>(gpu); }
  /// The NIC a GPU's traffic leaves by (shared by gpus_per_nic GPUs).
  int64_t nic_of(int64_t gpu) const { return gpu / params_.gpus_per_nic; }
  NodeId nic_node(int64_t gpu) const { return static_cast<NodeId>(params_.gpus + nic_of(gpu)); }
  NodeId hb_node(int64_t domain) const { return static_cast<NodeId>(params_.gpus + nics() + domain); }
  /// The first node id after the endpoints (GPUs, NICs, HB domains): the switches.
  NodeId first_switch_node() const { return static_cast<NodeId>(params_.gpus + nics() + hb_domains()); }
  int rail_of(int64_t gpu) const {
    return static_cast<int>(gpu % params_.hb_domain_size / params_.gpus_per_nic);
  }
  int64_t domain_of(int64_t gpu) const { return gpu / params_.hb_domain_size; }

  /// Largest number of switch tiers over the fabrics.
  int tiers() const;
  /// Physical switch chassis in the whole network.
  int64_t chassis_count() const { return chassis_count_; }

  /// "gpu12", "nic12", "hb1", "rail3/leaf0", "spine7", ...
  std::string NodeName(NodeId id) const;

  /// The hops a message from GPU `src` to GPU `dst` crosses, in order. Same
  /// HB domain: the two NVLink hops. Otherwise NIC network; on rail-only, a
  /// pair on different rails first moves over NVLink to the GPU of src's
  /// domain that sits on dst's rail ("forwarding", as NCCL's PXN), then goes
  /// on that rail. Among equal-cost paths the choice is a fixed hash of the
  /// pair (`options`), so routes are deterministic; every parallel cable
  /// between two switches is a separate equal-cost choice.
  /// Requires 0 <= src, dst < N.
  std::vector<Hop> Route(int64_t src, int64_t dst, const RouteOptions& options = {}) const;

  /// The same without allocating, for the simulator's hot path: writes the
  /// hops to `out` (room for kMaxRouteHops) and returns how many.
  int RouteInto(int64_t src, int64_t dst, const RouteOptions& options, Hop* out) const;

  /// The nodes of Route(src, dst), starting with gpu src and ending with gpu dst.
  std::vector<NodeId> RouteNodes(int64_t src, int64_t dst, const RouteOptions& options = {}) const;

  /// The NIC-network part of a route only: from src's PCIe link up to dst's,
  /// for two GPUs whose NICs are on the same fabric (no NVLink forwarding).
  /// Writes at most kMaxRouteHops hops to `out` and returns how many.
  int FabricRouteInto(int64_t src, int64_t dst, const RouteOptions& options, Hop* out) const {
    return AppendFabricPath(src, dst, options, out);
  }

  /// Fabric, leaf (within its fabric) and position under that leaf of a GPU's
  /// NIC: which GPUs share a leaf switch.
  int32_t fabric_of(int64_t gpu) const { return gpu_fabric_[gpu]; }
  /// A GPU's NVLink link to its HB domain's switch fabric.
  LinkId hb_link(int64_t gpu) const { return gpu_hb_link_[gpu]; }
  int32_t leaf_of(int64_t gpu) const { return gpu_leaf_[gpu]; }
  /// A GPU's host link to its NIC, and its NIC's cable to the leaf (shared
  /// by the GPUs of one NIC).
  LinkId pcie_link(int64_t gpu) const { return gpu_pcie_link_[gpu]; }
  LinkId nic_leaf_link(int64_t gpu) const { return gpu_nic_leaf_link_[gpu]; }

 private:
  friend class TopologyBuilder;

  int AppendFabricPath(int64_t src, int64_t dst, const RouteOptions& options, Hop* out) const;

  TopologyParams params_;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<ClosFabric> fabrics_;
  // Per GPU: fabric index, leaf index within the fabric, NIC-to-leaf link,
  // GPU-to-HB link and GPU-to-NIC link.
  std::vector<int32_t> gpu_fabric_;
  std::vector<int32_t> gpu_leaf_;
  std::vector<int32_t> gpu_leaf_position_;  ///< index among its leaf's NICs
  std::vector<LinkId> gpu_nic_leaf_link_;
  std::vector<LinkId> gpu_hb_link_;
  std::vector<LinkId> gpu_pcie_link_;
  int64_t chassis_count_ = 0;
};

}  // namespace railsim::net
