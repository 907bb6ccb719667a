// Plan: the one description of how a collective runs, read two ways.
//
// A collective algorithm (comm/algorithms.h) becomes a short list of phases.
// Each phase applies a traffic pattern (a ring step, all pairs, a tree, a
// chain, to-and-from the HB switch) to every group of a group family at once,
// for `repeat` identical steps. From that description:
//  (a) PlanTime() gives the analytic time: per step, the busiest GPU's bytes
//      on NVLink and on its NIC over their achieved bandwidths, the bytes that
//      leave an oversubscribed leaf over its uplinks, plus the phase latency;
//  (b) ForEachFlow() lists the flows the same phase puts on the network
//      (source GPU, destination GPU, bytes), which sim/ simulates.
// Both read the same fields, so the closed form and the flows cannot drift.
//
// Groups are Megatron-style strided rank sets: group family (size, stride)
// over N ranks holds N / size groups; member j of group g is rank
// (g % stride) + j * stride + (g / stride) * stride * size. Rank = GPU id,
// of the job's GPUs when it uses part of each HB domain (DomainUse).
//
// Plans are small fixed-size values (no allocation): the performance model
// builds several per strategy on the search's hot path.
#pragma once

#include <array>
#include <cstdint>

#include "railsim/comm/collective.h"

namespace railsim::comm {

enum class Pattern : uint8_t {
  kRing,       ///< member j sends to j + 1 (mod size); `channels` rings, see below
  kChain,      ///< member j sends to j + 1 for j < size - 1 (pipelined broadcast, p2p)
  kAllPairs,   ///< every member sends to every other member
  kTree,       ///< double binary tree edges, child to parent (`downward`: parent to child)
  /// NCCL's tree all-reduce, reduction up and broadcast down at once: per
  /// channel c a chain through each block of members (an HB domain, see
  /// Phase::block) from local c (the head), and NCCL's double binary tree of
  /// the heads across blocks on rail c. channels = 1 without a block: a tree
  /// over all members.
  kNodeTree,
  kViaSwitch,  ///< each member to its HB switch and back (in-switch reduction)
};

/// A family of identical groups: N / size groups of `size` ranks `stride` apart.
struct GroupFamily {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t Member(int64_t group, int64_t j) const {
    return group % stride + j * stride + (group / stride) * stride * size;
  }
  int64_t Groups(int64_t gpus) const { return gpus / size; }
  /// Whether the groups cover `gpus` ranks exactly: only then does every
  /// Member() of every group stay below `gpus`. A family that does not tile
  /// (the tied embedding's pair of first and last stage is one) must not be
  /// run over the cluster's graph; callers check this, ForEachGraphFlow
  /// asserts it. (ForEachFlow over `size` ranks, as PhaseStepLoad uses it,
  /// visits group 0 alone, whatever the stride.)
  /// Groups of one member tile any count (group g is rank g).
  bool Tiles(int64_t gpus) const {
    return size >= 1 && stride >= 1 && (size == 1 || gpus % (size * stride) == 0);
  }
};

struct Phase {
  const char* name = "";
  Pattern pattern = Pattern::kRing;
  GroupFamily family;
  double bytes_per_flow = 0;
  int64_t repeat = 1;       ///< identical steps run back to back
  /// kRing, kNodeTree: channels run side by side (NCCL channels), each
  /// carrying bytes_per_flow. A ring channel c enters each HB domain at local
  /// index c, visits the others, and the last one hands the data back to
  /// local c over NVLink (NCCL's PXN), which sends it to local c of the next
  /// domain: every hop between domains stays on one rail, as NCCL lays rings
  /// out. Only locals 0 .. channels - 1 use their NIC.
  int32_t channels = 1;
  /// kRing, kNodeTree with channels > 1 (or a block): the members of one HB
  /// domain each channel visits, consecutive in the group; 0 = `channels`
  /// (one channel per member). Requires channels <= block.
  int32_t block = 0;
  /// kNodeTree: the chains inside each block (NCCL's Tree); false for the
  /// heads' trees of NVLS-Tree, whose in-domain part is another phase.
  bool chains = true;
  bool downward = false;    ///< kTree: parent to child (broadcast half)
  /// The phase runs in `chunks` pieces pipelined with the previous phase's
  /// pieces (chunk c starts when the previous phase's chunk c and this
  /// phase's chunk c - 1 are done); 1 = starts when the previous phase ends.
  int32_t chunks = 1;
  double latency_s = 0;     ///< total latency of the phase (all steps)
  /// Per-flow rate cap (0 = none): in-switch reduction's achieved rate.
  double flow_cap_Bps = 0;
  /// NCCL's protocol and algorithm factors on the analytic time only (the
  /// simulator moves Simple-protocol bytes): the achieved fraction of the
  /// fabrics' rates, and a cap on the busiest GPU's bytes per second (NCCL's
  /// busBw caps: llMaxBw, channels x per-channel maximum); 0 = none.
  double bw_factor = 1;
  double bus_cap_Bps = 0;
  /// The NIC efficiency this pattern achieves (0 = the fabric's, the ring's).
  double nic_efficiency = 0;
};

constexpr int kMaxPhases = 4;

struct Plan {
  std::array<Phase, kMaxPhases> phases;
  int count = 0;
  const char* algorithm = "";
  const char* protocol = "";  ///< NCCL protocol of the plan ("" outside NCCL's model)
  /// A fresh phase at the end (reset: plans are reused on the hot path).
  Phase& Add() {
    phases[count] = Phase();
    return phases[count++];
  }
};

/// Per-step load of a phase on the busiest GPU.
struct StepLoad {
  double hb_bytes = 0;   ///< over NVLink (send or receive, whichever is larger)
  double nic_bytes = 0;  ///< over the NIC
  double leaf_factor = 1;  ///< >= 1: how much an oversubscribed leaf slows the NIC part
};

/// The most edges a rank has in NCCL's double binary tree over n ranks (both
/// trees together): 0, 2, 3 and then 4 for every n >= 4.
int64_t NcclTreeEdges(int64_t n);

/// The load one step of `phase` puts on the busiest GPU, on cluster `c`
/// (HB domains of c.hb_domain_size, Rail-only forwarding, leaf structure).
StepLoad PhaseStepLoad(const Phase& phase, const ClusterFabrics& c);

/// Analytic time of one phase alone: latency + repeat x step time.
double PhaseTime(const Phase& phase, const ClusterFabrics& c);

/// The part of a phase's step time that NCCL's protocols leave alone: the
/// busiest GPU's bytes over the fabrics' rates (and the per-flow cap), before
/// bw_factor and bus_cap_Bps; negative when the phase takes no time at all.
double PhaseRawStep(const Phase& phase, const ClusterFabrics& c);

/// PhaseTime from PhaseRawStep: trying NCCL's protocols on one plan changes
/// only latency, bw_factor and bus_cap_Bps, so the loads are computed once.
double PhaseTimeFromStep(const Phase& phase, double raw_step);

/// Analytic time of the plan: phases in sequence, pipelined pairs overlapped
/// chunk by chunk (a + b + (chunks - 1) max(a, b) per chunk times a, b).
double PlanTime(const Plan& plan, const ClusterFabrics& c);

/// PlanTime with each phase's PhaseRawStep given (`raw_steps[i]` for phase i).
double PlanTimeFromSteps(const Plan& plan, const double* raw_steps);

/// Number of flows one step of `phase` has over a cluster of `gpus` ranks.
int64_t PhaseFlowCount(const Phase& phase, int64_t gpus);

/// Calls fn(src, dst, bytes) for every flow of one step of one chunk of
/// `phase` over `gpus` ranks, groups in order. src == dst means the flow goes
/// up to the member's HB switch and back down (kViaSwitch).
template <typename Fn>
void ForEachFlow(const Phase& phase, int64_t gpus, int64_t hb_domain_size, Fn&& fn);

/// ForEachFlow for a plan whose ranks are the job's GPUs of `use` on a built
/// graph of `graph_gpus` GPUs in HB domains of `hb_domain_size`: fn gets the
/// graph's GPU ids (DomainUse::GpuId).
template <typename Fn>
void ForEachGraphFlow(const Phase& phase, int64_t graph_gpus, int64_t hb_domain_size, const DomainUse& use,
                      Fn&& fn);

}  // namespace railsim::comm

#include "railsim/comm/plan_flows.h"
