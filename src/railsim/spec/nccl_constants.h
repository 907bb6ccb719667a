// NcclConstants: the numbers of NCCL's own cost model (NCCL 2.30,
// src/graph/tuning.cc) for one system, as its preset gives them with their
// sources: latency per algorithm, protocol and link type, bandwidth caps per
// channel and scale, the tree correction by size, the channel speeds the
// topology search tries, and the per-pattern NIC efficiencies fitted on
// measurements. comm/nccl_model.h reads them; nothing here knows about time.
//
// A plain, trivially copyable value (comm::ClusterFabrics holds a copy).
// `enabled` is false for a system whose preset has no "nccl" object: comm/
// then keeps its older, NCCL-agnostic model.
#pragma once

#include <array>

namespace railsim::spec {

/// NCCL's algorithm indices as this model uses them (a subset of NCCL's).
/// The first kNcclAlgos index the per-(algorithm, protocol) tables; PAT runs
/// only Simple on one rank per node and has constants of its own (NcclPat),
/// as CollNetDirect has (NcclCollNet).
enum class NcclAlgo : int { kRing = 0, kTree = 1, kNvls = 2, kNvlsTree = 3, kPat = 4, kCollNetDirect = 5 };
/// NCCL's protocol indices (LL = 0, LL128 = 1, Simple = 2).
constexpr int kNcclProtocols = 3;
constexpr int kNcclAlgos = 4;
/// Entries of NCCL's treeCorrectionFactor table per protocol.
constexpr int kNcclTreeCorrections = 24;
/// Channel speeds the topology search tries, at most this many per list.
constexpr int kMaxNcclSpeeds = 24;

/// A value per scale: one node, two nodes, more (NCCL's tables' index).
using PerScale = std::array<double, 3>;
/// A value per (algorithm, protocol).
using PerAlgoProto = std::array<std::array<double, kNcclProtocols>, kNcclAlgos>;

/// NCCL's PAT all-gather and reduce-scatter (ncclTopoTuneModel): latency
/// base + floor(log2 nodes) x the network step / net_step_divisor + ranks x
/// rank_latency, bandwidth the tree graph's busBw x bw_factor, Simple only.
struct NcclPat {
  bool enabled = false;  ///< the system's "nccl" object has a "pat" object
  double base_latency_s = 0;
  double rank_latency_s = 0;
  double net_step_divisor = 1;
  double bw_factor = 1;
};

/// NCCL's CollNetDirect all-reduce (in-network reduction in the NIC
/// fabric's switches: InfiniBand SHARP through NCCL's CollNet plugin,
/// NCCL_COLLNET_ENABLE=1). Present only when the system says its switches
/// reduce. Latency 2 x (NVLink step + (ppn - 1) x arity step) + the network
/// step (ncclTopoTuneModel, base 0); busBw x bw_factor (0.85 on SM90+);
/// Simple only.
struct NcclCollNet {
  bool enabled = false;  ///< the system's "nccl" object has a "collnet" object
  double nvlink_latency_s = 0;
  double net_latency_s = 0;
  double arity_latency_s = 0;
  double bw_factor = 1;
};

struct NcclConstants {
  bool enabled = false;
  bool ll128_enabled = true;          ///< NCCL enables LL128 only on some topologies
  /// Whether LL runs: a net plugin may pin NCCL_PROTO to Simple (aws-ofi-nccl
  /// does on p4d and p4de, whose EFA does not promise LL's ordering).
  bool ll_enabled = true;
  PerAlgoProto base_latency_s{};      ///< baseLat
  PerAlgoProto nvlink_latency_s{};    ///< hwLat[NVLINK]
  PerAlgoProto net_latency_s{};       ///< hwLat[NET]
  double net_overhead_s = 0;          ///< per step between nodes (x3 for Simple)
  double nic_reported_latency_s = 0;  ///< the net plugin's latency, added to each network step
  double ring_plateau_factor = 1;     ///< Ring Simple all-reduce latency factor on several nodes
  PerScale ll_max_Bps{};              ///< llMaxBw
  PerScale ring_ll128_channel_Bps{};  ///< perChMaxRingLL128Bw
  PerScale tree_channel_Bps{};        ///< perChMaxTreeBw
  PerScale tree_ll128_channel_Bps{};  ///< perChMaxTreeLL128Bw
  PerScale nvls_tree_channel_Bps{};   ///< perChMaxNVLSTreeBw
  std::array<std::array<double, kNcclTreeCorrections>, kNcclProtocols> tree_correction{};
  /// NCCL corrects NVLSTree all-reduce's bandwidth by size with the same
  /// table (all of its entries, to 1 GiB) when every GPU is SM100 or later
  /// and the host CPU is x86 (ncclTopoTuneModel): DGX B200 and B300, not the
  /// Grace-hosted racks.
  bool nvls_tree_correction = false;
  /// Per-channel speeds the search tries, high to low (bytes/s); count used.
  std::array<double, kMaxNcclSpeeds> intra_speeds_Bps{};
  int intra_speed_count = 0;
  std::array<double, kMaxNcclSpeeds> inter_speeds_Bps{};
  int inter_speed_count = 0;
  /// NVLink bandwidth per GPU as NCCL's topology counts it (links x its
  /// per-link figure, src/graph/topo.h: 18 x 40.1 GB/s on SM100); the budget
  /// the search's channels share. 0 = the system's HB bandwidth.
  double search_nvlink_Bps = 0;
  /// Most channels the search keeps (MAXCHANNELS / 2 = 32); 0 = no limit.
  int max_search_channels = 0;
  /// Whether NCCL's Simple per-channel busBw caps (tree and NVLS-Tree) bound
  /// the time as well as the choice. False where the algorithm runs faster
  /// than NCCL's estimate: measured on GB200's trees across racks
  /// (NVIDIA/nccl#1801), assumed on the Hopper presets. The caps then steer
  /// the choice only, as they do in NCCL; the LL and LL128 caps always bound.
  bool caps_bound_time = true;
  /// Achieved NIC efficiency of trees and of all-to-all, as fractions of NIC
  /// line rate (the system's nic_efficiency is the ring's).
  double nic_tree_efficiency = 1;
  double nic_alltoall_efficiency = 1;
  /// Fixed cost of NCCL's send/recv schedule per peer of an all-to-all that
  /// leaves the node (rounds of permutations; NCCL has no model of its own).
  double p2p_peer_latency_s = 0;
  NcclPat pat;
  NcclCollNet collnet;
};

}  // namespace railsim::spec
