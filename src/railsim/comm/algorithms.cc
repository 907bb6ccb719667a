#include "railsim/comm/algorithms.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace railsim::comm {
namespace {

constexpr const char* kOpNames[] = {"all-reduce", "reduce-scatter", "all-gather",
                                    "all-to-all", "broadcast",      "send-recv"};
constexpr const char* kAlgorithmNames[] = {"auto",   "ring",      "tree",      "hierarchical", "in-switch",
                                           "direct", "forwarded", "nvls-tree", "pat",          "collnet"};
constexpr int kAlgorithms = int(std::size(kAlgorithmNames));

// Latency steps of a collective of n members with `factor` passes (2 for
// all-reduce): a ring takes factor (n - 1); a tree about 2 factor log2 n.
double RingSteps(int64_t n, double factor) { return n <= 1 ? 0 : factor * double(n - 1); }
// ceil(log2 n) for n >= 1, without libm (this is on the search's hot path).
double CeilLog2(int64_t n) { return n <= 1 ? 0 : double(64 - __builtin_clzll(uint64_t(n - 1))); }
double TreeSteps(int64_t n, double factor) { return n <= 1 ? 0 : 2.0 * factor * CeilLog2(n); }
// What NCCL's choice between ring and tree costs in latency with scale.
double AutoSteps(int64_t n, double factor) { return std::min(RingSteps(n, factor), TreeSteps(n, factor)); }

double Latency(const GroupLayout& g, const ClusterFabrics& c) {
  return g.domains > 1 ? c.nic.latency_s : c.hb.latency_s;
}

double Factor(Op op) { return op == Op::kAllReduce ? 2 : 1; }

// One ring (or one per local rank) through every member of the group. With
// `most_rings` > 0 (NCCL's search channels), at most that many rings, each
// visiting every member of a domain and crossing between domains on its
// entry member's NIC.
void AddRing(Plan* plan, Op op, double bytes, const GroupLayout& g, const ClusterFabrics& c, bool auto_latency,
             int64_t most_rings = 0) {
  Phase& p = plan->Add();
  p.name = "ring";
  p.pattern = Pattern::kRing;
  p.family = {g.size, g.stride};
  const bool channels = g.domains > 1 && g.local > 1 && g.size % g.local == 0;
  p.channels = channels ? int32_t(g.local) : 1;
  if (channels && most_rings > 0 && most_rings < g.local) {
    p.channels = int32_t(most_rings);
    p.block = int32_t(g.local);
  }
  p.bytes_per_flow = bytes / double(g.size) / p.channels;
  const double factor = Factor(op);
  p.repeat = int64_t(factor) * (g.size - 1);
  p.latency_s = (auto_latency ? AutoSteps(g.size, factor) : RingSteps(g.size, factor)) * Latency(g, c);
}

// Ring phase over a sub-family (used by the hierarchical algorithm).
void AddSubRing(Plan* plan, const char* name, GroupFamily family, double buffer, double factor,
                double latency_s, bool auto_latency) {
  Phase& p = plan->Add();
  p.name = name;
  p.pattern = Pattern::kRing;
  p.family = family;
  p.bytes_per_flow = buffer / double(family.size);
  p.repeat = int64_t(factor) * (family.size - 1);
  p.latency_s = (auto_latency ? AutoSteps(family.size, factor) : RingSteps(family.size, factor)) * latency_s;
}

void AddHierarchical(Plan* plan, Op op, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                     bool auto_latency) {
  const GroupFamily intra{g.local, g.stride};
  const GroupFamily inter{g.domains, g.stride * g.local};
  const double share = bytes / double(g.local);
  const double hb = c.hb.latency_s, nic = c.nic.latency_s;
  switch (op) {
    case Op::kAllReduce:
      AddSubRing(plan, "reduce-scatter in HB domain", intra, bytes, 1, hb, auto_latency);
      AddSubRing(plan, "all-reduce across domains", inter, share, 2, nic, auto_latency);
      AddSubRing(plan, "all-gather in HB domain", intra, bytes, 1, hb, auto_latency);
      break;
    case Op::kReduceScatter:
      AddSubRing(plan, "reduce-scatter in HB domain", intra, bytes, 1, hb, auto_latency);
      AddSubRing(plan, "reduce-scatter across domains", inter, share, 1, nic, auto_latency);
      break;
    default:  // all-gather
      AddSubRing(plan, "all-gather across domains", inter, share, 1, nic, auto_latency);
      AddSubRing(plan, "all-gather in HB domain", intra, bytes, 1, hb, auto_latency);
      break;
  }
}

void AddTree(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  for (bool down : {false, true}) {
    Phase& p = plan->Add();
    p.name = down ? "tree broadcast" : "tree reduce";
    p.pattern = Pattern::kTree;
    p.family = {g.size, g.stride};
    p.downward = down;
    p.bytes_per_flow = bytes / 2;  // each of the two trees carries half
    p.latency_s = CeilLog2(g.size) * Latency(g, c);
  }
}

// NVLink SHARP over `family` (members of one HB domain): every GPU pushes its
// buffer into the switch (S) and takes its reduced shard (S/n), then writes
// the shard back for multicast (S/n up, S down): S (n + 1) / n each way. The
// achieved rate is the system's in-switch busbw, quoted against the ring
// factor 2 (n - 1) / n.
Phase& AddSwitchReduction(Plan* plan, const char* name, double bytes, GroupFamily family, const ClusterFabrics& c) {
  Phase& p = plan->Add();
  const double n = double(family.size);
  p.name = name;
  p.pattern = Pattern::kViaSwitch;
  p.family = family;
  p.bytes_per_flow = bytes * (n + 1) / n;
  p.flow_cap_Bps = c.hb.bw_Bps * c.hb_in_network_allreduce_efficiency * (n + 1) / (2 * (n - 1));
  return p;
}

// In-switch all-reduce of a group inside one HB domain.
void AddInSwitch(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  AddSwitchReduction(plan, "in-switch reduction", bytes, {g.size, g.stride}, c).latency_s = 2 * c.hb.latency_s;
}

// Under NCCL's model an all-to-all is NCCL's send/recv schedule: a fixed
// cost per peer outside the domain (rounds of permutations) and the NIC
// efficiency all-to-all achieves (one NIC's worth per GPU).
void AddP2pSchedule(Phase* p, const GroupLayout& g, const ClusterFabrics& c) {
  if (!c.nccl.enabled || g.domains <= 1) return;
  p->latency_s += double(g.size - g.local) * c.nccl.p2p_peer_latency_s;
  p->nic_efficiency = c.nccl.nic_alltoall_efficiency;
}

void AddDirect(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  Phase& p = plan->Add();
  p.name = "all-to-all";
  p.pattern = Pattern::kAllPairs;
  p.family = {g.size, g.stride};
  p.bytes_per_flow = bytes / double(g.size);
  p.latency_s = (g.domains > 1 ? c.nic.latency_s : 0) + c.hb.latency_s;
  AddP2pSchedule(&p, g, c);
}

// Reference section 4: first to the GPU of the own domain on the destination
// rail (with the data for every remote domain), then along the rail with the
// data of the whole domain.
void AddForwarded(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                  const PlanOptions& o) {
  const double per_peer = bytes / double(g.size);
  Phase& hb = plan->Add();
  hb.name = "forward in HB domain";
  hb.pattern = Pattern::kAllPairs;
  hb.family = {g.local, g.stride};
  hb.bytes_per_flow = per_peer * double(g.domains);
  hb.latency_s = c.hb.latency_s;
  Phase& rail = plan->Add();
  rail.name = "along the rails";
  rail.pattern = Pattern::kAllPairs;
  rail.family = {g.domains, g.stride * g.local};
  rail.bytes_per_flow = per_peer * double(g.local);
  rail.latency_s = c.nic.latency_s;
  AddP2pSchedule(&rail, g, c);
  rail.chunks = o.pipelined ? std::clamp(o.chunks, 2, kMaxForwardChunks) : 1;
}

void AddChain(Plan* plan, const char* name, double bytes, const GroupLayout& g, const ClusterFabrics& c,
              double latency_s) {
  (void)c;
  Phase& p = plan->Add();
  p.name = name;
  p.pattern = Pattern::kChain;
  p.family = {g.size, g.stride};
  p.bytes_per_flow = bytes;
  p.latency_s = latency_s;
}

bool Hierarchical(const GroupLayout& g) { return g.domains > 1 && g.local > 1 && g.size % g.local == 0; }

Plan Named(const char* name) {
  Plan p;
  p.algorithm = name;
  return p;
}



}  // namespace

const char* OpName(Op op) { return kOpNames[int(op)]; }
const char* AlgorithmName(Algorithm a) { return kAlgorithmNames[int(a)]; }

std::optional<Op> ParseOp(std::string_view name) {
  for (int i = 0; i < 6; ++i) {
    if (name == kOpNames[i]) return Op(i);
  }
  return std::nullopt;
}

std::optional<Algorithm> ParseAlgorithm(std::string_view name) {
  for (int i = 0; i < kAlgorithms; ++i) {
    if (name == kAlgorithmNames[i]) return Algorithm(i);
  }
  return std::nullopt;
}

std::vector<std::string> OpNames() { return {std::begin(kOpNames), std::end(kOpNames)}; }
std::vector<std::string> AlgorithmNames() { return {std::begin(kAlgorithmNames), std::end(kAlgorithmNames)}; }

std::string AlgorithmInapplicable(Op op, Algorithm a, const GroupLayout& g, const ClusterFabrics& c) {
  const bool reduction = op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kAllGather;
  switch (a) {
    case Algorithm::kAuto: return "";
    case Algorithm::kRing:
      return reduction || op == Op::kBroadcast ? "" : "ring runs all-reduce, reduce-scatter, all-gather, broadcast";
    case Algorithm::kTree:
      return op == Op::kAllReduce || op == Op::kBroadcast ? "" : "tree runs all-reduce and broadcast";
    case Algorithm::kHierarchical:
      if (!reduction) return "hierarchical runs all-reduce, reduce-scatter and all-gather";
      if (!Hierarchical(g)) return "hierarchical needs a group with several members in each of several HB domains";
      return "";
    case Algorithm::kInSwitch:
      if (op != Op::kAllReduce) return "in-switch runs all-reduce";
      if (c.hb_in_network_allreduce_efficiency <= 0) return "the system's HB fabric has no in-switch reduction";
      if (g.domains > 1 && !c.nccl.collnet.enabled) {
        return "in-switch reduction needs the group inside one HB domain (across domains, NIC switches that reduce)";
      }
      if (g.domains > 1 && (!Hierarchical(g) || !g.rail_aligned)) {
        return "in-switch reduction across HB domains needs whole domains, one member per rail";
      }
      return "";
    case Algorithm::kDirect: return op == Op::kAllToAll ? "" : "direct runs all-to-all";
    case Algorithm::kForwarded:
      if (op != Op::kAllToAll) return "forwarded runs all-to-all";
      if (!Hierarchical(g)) return "forwarded needs a group with several members in each of several HB domains";
      return "";
    case Algorithm::kNvlsTree:
      if (op != Op::kAllReduce) return "nvls-tree runs all-reduce";
      if (!c.nccl.enabled) return "nvls-tree needs the system's NCCL model (its preset's \"nccl\" object)";
      if (!Hierarchical(g) || !g.rail_aligned) {
        return "nvls-tree needs whole HB domains: several members in each of several domains, one per rail";
      }
      if (c.hb_in_network_allreduce_efficiency <= 0) return "the system's HB fabric has no in-switch reduction";
      return "";
    case Algorithm::kPat:
      if (op != Op::kAllGather && op != Op::kReduceScatter) return "pat runs all-gather and reduce-scatter";
      if (!c.nccl.pat.enabled) return "pat needs the system's NCCL model with its \"pat\" constants";
      if (g.domains <= 1 || g.local > 1) return "pat needs one member in each of several HB domains";
      return "";
    case Algorithm::kCollNet:
      if (op != Op::kAllReduce) return "collnet runs all-reduce";
      if (!c.nccl.collnet.enabled) {
        return "collnet needs NIC switches that reduce (the system's \"nccl\" object with \"collnet\")";
      }
      if (!Hierarchical(g) || !g.rail_aligned || g.local > 8) {
        return "collnet needs whole HB domains of at most 8 members: several in each of several domains, one per rail";
      }
      return "";
  }
  return "";
}

namespace {

bool IsReduction(Op op) { return op == Op::kAllReduce || op == Op::kReduceScatter || op == Op::kAllGather; }

// NCCL's tree for all-reduce, reduction and broadcast pipelined together:
// a chain inside each domain and a double binary tree across domains, one
// channel per member of a domain up to NCCL's search channels (`most`), each
// chain through the whole domain (a tree over all members when the group has
// one member per domain or uneven domains).
void AddNcclTree(Plan* plan, double bytes, const GroupLayout& g, int64_t most) {
  Phase& p = plan->Add();
  p.name = "tree reduce and broadcast";
  p.pattern = Pattern::kNodeTree;
  p.family = {g.size, g.stride};
  const bool chains = g.local > 1 && g.size % g.local == 0;
  p.channels = chains ? int32_t(g.local) : 1;
  if (chains && most < g.local) {
    p.channels = int32_t(std::max<int64_t>(1, most));
    p.block = int32_t(g.local);
  }
  p.bytes_per_flow = bytes / (2.0 * double(p.channels));
}

// NCCL's NVLSTree all-reduce (reference 1, 4.4): NVLS inside each domain
// (the switch reduces, then multicasts the result: as AddInSwitch over the
// domain's members) and, on each rail, a double binary tree of the domains'
// head GPUs carrying that rail's 1/local of the buffer (each of the two trees
// half of it). NCCL pipelines the stages; the plan runs the tree in chunks
// behind the in-switch phase. NCCL's busBw cap (channels x
// perChMaxNVLSTreeBw) bounds the whole buffer's rate, so each rail's tree
// takes 1/local of it. NCCL's heads are its search channels (`most`): with
// fewer of them than members (an NVL72 rack), only locals 0 .. heads - 1
// send across domains, each 1/heads of the buffer.
void AddNvlsTree(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c, int64_t most) {
  AddSwitchReduction(plan, "NVLS in HB domain", bytes, {g.local, g.stride}, c);
  Phase& tree = plan->Add();
  tree.name = "tree of heads across domains";
  tree.pattern = Pattern::kNodeTree;
  tree.chunks = kDefaultForwardChunks;
  if (most >= g.local) {
    tree.family = {g.domains, g.stride * g.local};
    tree.bytes_per_flow = bytes / double(g.local) / 2;
    return;
  }
  const int64_t heads = std::max<int64_t>(1, most);
  tree.family = {g.size, g.stride};
  tree.channels = int32_t(heads);
  tree.block = int32_t(g.local);
  tree.chains = false;
  tree.bytes_per_flow = bytes / double(heads) / 2;
}

// NCCL's PAT (Parallel Aggregated Trees) all-gather or reduce-scatter, one
// member per domain: each member's shard reaches every other member (PAT
// forwards through a logarithmic tree, but every member still sends and
// receives (n - 1) / n of the buffer, as in the ring), so as flows it is all
// pairs on the members' rail.
void AddPat(Plan* plan, double bytes, const GroupLayout& g) {
  Phase& p = plan->Add();
  p.name = "pat";
  p.pattern = Pattern::kAllPairs;
  p.family = {g.size, g.stride};
  p.bytes_per_flow = bytes / double(g.size);
}

// The in-network reduction of each member's shard S / l in its rail's
// switches (InfiniBand SHARP): S / l up each NIC and the result back. As
// flows it is one ring step along the rail: each NIC sends and receives
// S / l, as with SHARP, and the ring's hops stay inside the rail's leaves but
// where consecutive domains sit under different leaves. Pipelined with the
// phase before it, as NCCL pipelines its stages.
void AddSharpStage(Plan* plan, double bytes, const GroupLayout& g) {
  Phase& sharp = plan->Add();
  sharp.name = "reduction in the rail's switches";
  sharp.pattern = Pattern::kRing;
  sharp.family = {g.domains, g.stride * g.local};
  sharp.bytes_per_flow = bytes / double(g.local);
  sharp.chunks = kDefaultForwardChunks;
}

// NCCL's CollNetDirect all-reduce: each member scatter-reduces the domain's
// buffer to the member owning each shard over NVLink and later gathers the
// reduced shards back, 2 S / l to each other member of its domain in all
// (one NVLink phase: both halves load the same links), around the shard's
// reduction in the rail's switches.
void AddCollNet(Plan* plan, double bytes, const GroupLayout& g) {
  Phase& nvlink = plan->Add();
  nvlink.name = "scatter-reduce and gather in HB domain";
  nvlink.pattern = Pattern::kAllPairs;
  nvlink.family = {g.local, g.stride};
  nvlink.bytes_per_flow = 2 * bytes / double(g.local);
  AddSharpStage(plan, bytes, g);
}

// NCCL's NVLS across nodes, which it runs only with CollNet (NVLink SHARP
// inside each domain, InfiniBand SHARP across them): the domain's reduction
// in its NVSwitch (as in-switch) around the shards' reduction in the rails'
// switches.
void AddNvlsCollNet(Plan* plan, double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  AddSwitchReduction(plan, "NVLS in HB domain", bytes, {g.local, g.stride}, c);
  AddSharpStage(plan, bytes, g);
}

// Whether NCCL runs `a` for `op` on `g` (reference section 3; NVLS only inside
// one domain: across nodes it needs CollNet; NVLSTree only across domains,
// with an NVSwitch that reduces, whole domains and heads on each rail).
bool NcclRuns(spec::NcclAlgo a, Op op, const GroupLayout& g, const ClusterFabrics& c) {
  switch (a) {
    case spec::NcclAlgo::kRing: return IsReduction(op);
    case spec::NcclAlgo::kTree: return op == Op::kAllReduce;
    case spec::NcclAlgo::kNvls:
      // Across domains only with CollNet (NVLS + IB SHARP), on whole domains.
      return op == Op::kAllReduce && c.hb_in_network_allreduce_efficiency > 0 &&
             (g.domains <= 1 || (c.nccl.collnet.enabled && g.local > 1 && g.size % g.local == 0 && g.rail_aligned));
    case spec::NcclAlgo::kNvlsTree:
      return op == Op::kAllReduce && g.domains > 1 && g.local > 1 && g.size % g.local == 0 && g.rail_aligned &&
             c.hb_in_network_allreduce_efficiency > 0;
    case spec::NcclAlgo::kPat:
      // NCCL_PAT_ENABLE's default: only with one rank per node.
      return (op == Op::kAllGather || op == Op::kReduceScatter) && c.nccl.pat.enabled && g.domains > 1 &&
             g.local <= 1;
    case spec::NcclAlgo::kCollNetDirect:
      // NCCL: not with more than 8 local ranks.
      return op == Op::kAllReduce && c.nccl.collnet.enabled && g.domains > 1 && g.local > 1 && g.local <= 8 &&
             g.size % g.local == 0 && g.rail_aligned;
  }
  return false;
}

bool ProtocolRuns(spec::NcclAlgo a, Protocol p, const ClusterFabrics& c) {
  if (p == Protocol::kLL128 && !c.nccl.ll128_enabled) return false;
  if (p == Protocol::kLL && !c.nccl.ll_enabled) return false;
  return a == spec::NcclAlgo::kRing || a == spec::NcclAlgo::kTree || p == Protocol::kSimple;
}

Algorithm AlgorithmOf(spec::NcclAlgo a) {
  switch (a) {
    case spec::NcclAlgo::kRing: return Algorithm::kRing;
    case spec::NcclAlgo::kTree: return Algorithm::kTree;
    case spec::NcclAlgo::kNvls: return Algorithm::kInSwitch;
    case spec::NcclAlgo::kNvlsTree: return Algorithm::kNvlsTree;
    case spec::NcclAlgo::kPat: return Algorithm::kPat;
    case spec::NcclAlgo::kCollNetDirect: return Algorithm::kCollNet;
  }
  return Algorithm::kAuto;
}

// NCCL's algorithm `a` as a plan: its phases, without what the protocol
// sets (NcclProtocolOnPlan).
void BuildNcclPlan(Plan* plan, spec::NcclAlgo a, Op op, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                   const NcclChannels& ch) {
  plan->count = 0;
  plan->algorithm = AlgorithmName(AlgorithmOf(a));
  if (a == spec::NcclAlgo::kRing) AddRing(plan, op, bytes, g, c, false, ch.channels);
  if (a == spec::NcclAlgo::kTree) AddNcclTree(plan, bytes, g, ch.channels);
  if (a == spec::NcclAlgo::kNvls) {
    if (g.domains > 1) {
      AddNvlsCollNet(plan, bytes, g, c);
    } else {
      AddInSwitch(plan, bytes, g, c);
    }
  }
  if (a == spec::NcclAlgo::kNvlsTree) AddNvlsTree(plan, bytes, g, c, ch.channels);
  if (a == spec::NcclAlgo::kPat) AddPat(plan, bytes, g);
  if (a == spec::NcclAlgo::kCollNetDirect) AddCollNet(plan, bytes, g);
  for (int i = 0; i < plan->count; ++i) {
    Phase& ph = plan->phases[i];
    if (a == spec::NcclAlgo::kTree || a == spec::NcclAlgo::kNvlsTree) ph.nic_efficiency = c.nccl.nic_tree_efficiency;
  }
}

// Protocol `p` on NCCL's plan of `a`: NCCL's latency (`latency`, from
// NcclLatency), protocol factor and caps, on every phase.
void NcclProtocolOnPlan(Plan* plan, spec::NcclAlgo a, Protocol p, double latency, double bytes, const GroupLayout& g,
                        const ClusterFabrics& c, const NcclChannels& ch) {
  plan->protocol = ProtocolName(p);
  const ProtocolRate rate = NcclRate(a, p, bytes, g, c, ch);
  // PAT's time is the buffer over its busBw, where the all-pairs phase moves
  // (n - 1) / n of it through each NIC.
  const double factor = a == spec::NcclAlgo::kPat ? rate.factor * double(g.size - 1) / double(g.size) : rate.factor;
  // NVLSTree's cap bounds the whole buffer, converted as NCCL converts its
  // busBw (reference 2.5): algBw = busBw x nRanks / nsteps, so the buffer S
  // takes 2 (n - 1) / n x S / busBw. The tree phase counts 2 S as its bus
  // bytes (the Tree's conversion, busBw x 0.5), so its cap is busBw x
  // n / (n - 1): 16/15 of it on two 8-GPU nodes.
  const double nvls_tree_cap = rate.cap_Bps * double(g.size) / double(g.size - 1);
  for (int i = 0; i < plan->count; ++i) {
    Phase& ph = plan->phases[i];
    ph.latency_s = latency / plan->count;
    // The heads' tree on each rail moves 1/local of the buffer (a phase of
    // one rail's tree, without a block), so it takes 1/local of the cap.
    ph.bus_cap_Bps = a != spec::NcclAlgo::kNvlsTree      ? rate.cap_Bps
                     : ph.pattern != Pattern::kNodeTree ? 0
                     : ph.block > 0                     ? nvls_tree_cap
                                                        : nvls_tree_cap / double(g.local);
    ph.bw_factor = factor;
  }
}

// NCCL's choice: the least estimated time over the (algorithm, protocol)
// pairs allowed, scanned in NCCL's index order (Tree, Ring, CollNetDirect,
// NVLS, NVLSTree, PAT; LL, LL128, Simple) so that ties go to the lower index. `only`
// restricts the algorithm (kAuto: any), `protocol` the protocol. Returns the
// chosen pair's time (its estimate, or without the per-channel caps where
// they bound the choice only), negative when no pair runs. Writes the plan
// when `out` is given. Each
// algorithm's plan and loads are built once and its protocols tried on them:
// this runs several times per strategy on the search's hot path.
double NcclChoice(Op op, Algorithm only, Protocol protocol, double bytes, const GroupLayout& g,
                  const ClusterFabrics& c, Plan* out) {
  constexpr spec::NcclAlgo kOrder[] = {spec::NcclAlgo::kTree,     spec::NcclAlgo::kRing,
                                       spec::NcclAlgo::kCollNetDirect, spec::NcclAlgo::kNvls,
                                       spec::NcclAlgo::kNvlsTree, spec::NcclAlgo::kPat};
  constexpr Protocol kProtocols[] = {Protocol::kLL, Protocol::kLL128, Protocol::kSimple};
  const NcclChannels ch = SearchChannels(g, c);
  double best = -1, chosen = -1;
  Plan candidate;
  double raw[kMaxPhases];
  for (spec::NcclAlgo a : kOrder) {
    if (!NcclRuns(a, op, g, c) || (only != Algorithm::kAuto && AlgorithmOf(a) != only)) continue;
    BuildNcclPlan(&candidate, a, op, bytes, g, c, ch);
    for (int i = 0; i < candidate.count; ++i) raw[i] = PhaseRawStep(candidate.phases[i], c);
    for (Protocol p : kProtocols) {
      if (!ProtocolRuns(a, p, c) || (protocol != Protocol::kAuto && p != protocol)) continue;
      // The latency alone bounds the time from below.
      const double latency = NcclLatency(a, p, Factor(op) > 1 ? 2 : 1, bytes, g, c, ch);
      if (best >= 0 && latency >= best) continue;
      NcclProtocolOnPlan(&candidate, a, p, latency, bytes, g, c, ch);
      const double t = PlanTimeFromSteps(candidate, raw);
      if (best < 0 || t < best) {
        best = t;
        chosen = t;
        // Where NCCL's Simple per-channel caps steer its choice but not the
        // time (NcclConstants::caps_bound_time), the chosen plan runs at what
        // its fabrics allow.
        const bool uncapped = !c.nccl.caps_bound_time && p == Protocol::kSimple;
        if (uncapped) {
          Plan free_plan = candidate;
          for (int i = 0; i < free_plan.count; ++i) free_plan.phases[i].bus_cap_Bps = 0;
          chosen = PlanTimeFromSteps(free_plan, raw);
          if (out) *out = free_plan;
        } else if (out) {
          *out = candidate;
        }
      }
    }
  }
  return chosen;
}

// The algorithms NCCL's choice covers (the others keep their own plans).
bool NcclChooses(Op op, Algorithm a, const ClusterFabrics& c) {
  if (!c.nccl.enabled || !IsReduction(op)) return false;
  return a == Algorithm::kAuto || a == Algorithm::kRing || (a == Algorithm::kTree && op == Op::kAllReduce) ||
         a == Algorithm::kInSwitch || a == Algorithm::kNvlsTree || a == Algorithm::kPat || a == Algorithm::kCollNet;
}

}  // namespace

namespace {

// The auto choice among ring, in-switch and hierarchical for the reductions:
// returns its time and, when `out` is given, writes its plan. Each candidate
// is timed once and nothing is copied unless asked: this runs several times
// per strategy on the search's hot path.
double AutoReduction(Op op, double bytes, const GroupLayout& g, const ClusterFabrics& c, Plan* out) {
  // One domain: ring or in-switch; one member per domain: ring; otherwise
  // the faster of hierarchical and one ring per local rank through every NIC
  // (NCCL's channels). On Rail-only a channel's hop between domains changes
  // rail, so it crosses NVLink to the GPU on the destination rail first (as
  // NCCL's PXN does on any network); PhaseStepLoad charges that hop.
  Plan ring = Named("ring");
  AddRing(&ring, op, bytes, g, c, true);
  const double t_ring = PlanTime(ring, c);
  Plan other;
  double t_other = t_ring;
  if (g.domains <= 1) {
    if (op == Op::kAllReduce && c.hb_in_network_allreduce_efficiency > 0) {
      other = Named("in-switch");
      AddInSwitch(&other, bytes, g, c);
      t_other = PlanTime(other, c);
    }
  } else if (Hierarchical(g)) {
    other = Named("hierarchical");
    AddHierarchical(&other, op, bytes, g, c, true);
    t_other = PlanTime(other, c);
  }
  const bool take_other = other.count > 0 && t_other < t_ring;
  if (out) *out = take_other ? other : ring;
  return take_other ? t_other : t_ring;
}

}  // namespace

namespace {

Plan MakeNamedPlan(Op op, Algorithm a, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                   const PlanOptions& o) {
  Plan plan = Named(AlgorithmName(a));
  switch (op) {
    case Op::kAllReduce:
    case Op::kReduceScatter:
    case Op::kAllGather: {
      if (a == Algorithm::kRing) { AddRing(&plan, op, bytes, g, c, false); return plan; }
      if (a == Algorithm::kTree) { AddTree(&plan, bytes, g, c); return plan; }
      if (a == Algorithm::kHierarchical) { AddHierarchical(&plan, op, bytes, g, c, false); return plan; }
      AddInSwitch(&plan, bytes, g, c);  // the only one left: auto is chosen in MakePlan
      return plan;
    }
    case Op::kAllToAll:
      if (a == Algorithm::kForwarded ||
          (a == Algorithm::kAuto && c.network == NetworkKind::kRailOnly && Hierarchical(g))) {
        plan.algorithm = "forwarded";
        AddForwarded(&plan, bytes, g, c, o);
      } else {
        plan.algorithm = "direct";
        AddDirect(&plan, bytes, g, c);
      }
      return plan;
    case Op::kBroadcast:
      if (a == Algorithm::kTree) {
        Phase& p = plan.Add();
        p.name = "tree broadcast";
        p.pattern = Pattern::kTree;
        p.family = {g.size, g.stride};
        p.downward = true;
        p.bytes_per_flow = bytes / 2;
        p.latency_s = CeilLog2(g.size) * Latency(g, c);
        return plan;
      }
      plan.algorithm = a == Algorithm::kAuto ? "auto" : "ring";
      AddChain(&plan, "pipelined chain", bytes, g, c,
               (a == Algorithm::kAuto ? AutoSteps(g.size, 1) : RingSteps(g.size, 1)) * Latency(g, c));
      return plan;
    case Op::kSendRecv: {
      // Neighbours `distance` apart: NVLink when the whole chain is in one
      // domain; across domains the NIC, plus an NVLink hop on Rail-only when
      // the neighbours sit on different rails.
      const bool forwarded = c.network == NetworkKind::kRailOnly && g.domains > 1 && g.stride % c.hb_domain_size != 0;
      double latency = g.domains > 1 ? c.nic.latency_s + (forwarded ? c.hb.latency_s : 0) : c.hb.latency_s;
      plan.algorithm = "point-to-point";
      AddChain(&plan, "send to next stage", bytes, g, c, latency);
      return plan;
    }
  }
  return plan;
}

}  // namespace

std::string ProtocolInapplicable(Op op, Algorithm a, Protocol p, const GroupLayout& g, const ClusterFabrics& c) {
  if (p == Protocol::kAuto) return "";
  if (!c.nccl.enabled) return "the system has no NCCL model (its preset has no \"nccl\" object)";
  if (!NcclChooses(op, a, c)) return "NCCL's protocols apply to all-reduce, reduce-scatter and all-gather by ring, tree, collnet, in-switch, nvls-tree or pat";
  if (p == Protocol::kLL128 && !c.nccl.ll128_enabled) return "the system's NCCL does not enable LL128";
  if (p == Protocol::kLL && !c.nccl.ll_enabled) return "the system's NCCL does not enable LL";
  if (g.size > 1 && NcclChoice(op, a, p, 1, g, c, nullptr) < 0) {
    return fmt::format("{} runs only the simple protocol", AlgorithmName(a));
  }
  return "";
}

std::optional<Plan> MakePlan(Op op, Algorithm a, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                             const PlanOptions& o, double* analytic_s) {
  if (a != Algorithm::kAuto && !AlgorithmInapplicable(op, a, g, c).empty()) return std::nullopt;
  if (analytic_s) *analytic_s = 0;
  Plan plan = Named(AlgorithmName(a));
  if (bytes <= 0 || g.size <= 1) return plan;
  if (NcclChooses(op, a, c)) {
    const double t = NcclChoice(op, a, o.protocol, bytes, g, c, &plan);
    if (t < 0) return std::nullopt;
    if (analytic_s) *analytic_s = t;
    return plan;
  }
  if (IsReduction(op) && a == Algorithm::kAuto) {
    double t = AutoReduction(op, bytes, g, c, &plan);
    if (analytic_s) *analytic_s = t;
    return plan;
  }
  plan = MakeNamedPlan(op, a, bytes, g, c, o);
  if (analytic_s) *analytic_s = PlanTime(plan, c);
  return plan;
}

double AutoTime(Op op, double bytes, const GroupLayout& g, const ClusterFabrics& c, const PlanOptions& o) {
  if (bytes <= 0 || g.size <= 1) return 0;
  if (NcclChooses(op, Algorithm::kAuto, c)) return NcclChoice(op, Algorithm::kAuto, o.protocol, bytes, g, c, nullptr);
  if (IsReduction(op)) return AutoReduction(op, bytes, g, c, nullptr);
  return PlanTime(MakeNamedPlan(op, Algorithm::kAuto, bytes, g, c, o), c);
}

}  // namespace railsim::comm
