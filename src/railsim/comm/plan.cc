#include "railsim/comm/plan.h"

#include <algorithm>

namespace railsim::comm {
namespace {

// Leaf switch of a GPU's NIC, as net/builder.h lays leaves out.
int64_t LeafOf(int64_t gpu, const ClusterFabrics& c) {
  const int64_t k = c.hb_domain_size;
  if (!c.rail_leaves) return gpu / c.leaf_gpus;
  return (gpu % k) * (int64_t{1} << 40) + (gpu / k) / c.leaf_gpus;
}

// Above this many members an all-pairs group is taken to leave its leaves
// with every NIC byte: at most leaf_gpus / size of them stay (a few percent),
// and counting n^2 pairs on the search's path would cost milliseconds.
constexpr int64_t kMaxCountedAllPairs = 1024;

// Fraction of the NIC bytes of group 0 whose flows leave their leaf switch.
double LeafEscapeFraction(const Phase& p, const ClusterFabrics& c) {
  const int64_t k = c.hb_domain_size;
  if (p.pattern == Pattern::kAllPairs && p.family.size > kMaxCountedAllPairs) return 1;
  int64_t nic = 0, escaping = 0;
  // Group 0 only (ForEachFlow over `size` ranks visits one group, ranks 0,
  // stride, ...; it does not tile them): every group of a family is a
  // translate of it, so its share is every group's on average.
  auto count = [&](int64_t src, int64_t dst, double) {
    if (src / k == dst / k) return;
    ++nic;
    if (LeafOf(src, c) != LeafOf(dst, c)) ++escaping;
  };
  ForEachFlow(p, p.family.size, k, count);
  return nic == 0 ? 0 : double(escaping) / double(nic);
}

// The bytes per step NCCL's busBw caps bound: a ring step's share of the
// buffer over all channels; for a tree twice the buffer, as NCCL's tree
// algBw is half its busBw.
double BusBytes(const Phase& p) {
  const double channels = double(std::max<int32_t>(1, p.channels));
  switch (p.pattern) {
    case Pattern::kRing: return channels * p.bytes_per_flow;
    case Pattern::kNodeTree: return 4 * channels * p.bytes_per_flow;
    case Pattern::kTree: return 4 * p.bytes_per_flow;
    default: return p.bytes_per_flow;
  }
}

}  // namespace

int64_t NcclTreeEdges(int64_t n) {
  // NCCL's binary tree of 2 ranks is one edge, so each node has 1 per tree;
  // on 3 both trees are chains (the middle ranks differ: at most 2 + 1);
  // from 4 on some rank is inner (parent and two children) in one tree and a
  // leaf in the other. PlanTest.NcclTreeEdgesMatchTheTrees checks this
  // against NcclTreeParent for every n up to 4,096.
  return n <= 1 ? 0 : (n < 4 ? n : 4);
}

StepLoad PhaseStepLoad(const Phase& p, const ClusterFabrics& c) {
  StepLoad load;
  const int64_t k = c.hb_domain_size;
  const GroupLayout g = LayoutOf(p.family.size, p.family.stride, k);
  const double b = p.bytes_per_flow;
  const double n = double(g.size), l = double(g.local);
  const bool spans = g.domains > 1;
  const bool same_rail = p.family.stride % k == 0;
  // Share of the cross-domain bytes that go to another rail (on Rail-only
  // they cross NVLink first, to the GPU on the destination rail).
  double cross_rail = same_rail ? 0 : 1;
  switch (p.pattern) {
    case Pattern::kRing:
    case Pattern::kChain:
      if (p.channels > 1 || p.block > 0) {
        // Every member sends one hop per channel over NVLink (the last one
        // of a domain hands its data to the entry member); the entry member
        // also sends on its NIC, on its own rail when the group is aligned.
        load.hb_bytes = p.channels * b;
        load.nic_bytes = spans ? b : 0;
        cross_rail = g.rail_aligned ? 0 : 1;
      } else {
        load.hb_bytes = g.local > 1 ? b : 0;
        load.nic_bytes = spans ? b : 0;
      }
      break;
    case Pattern::kAllPairs:
      load.hb_bytes = (l - 1) * b;
      load.nic_bytes = (n - l) * b;
      if (!same_rail && g.rail_aligned) cross_rail = (l - 1) / l;
      break;
    case Pattern::kTree:
      load.hb_bytes = g.local > 1 ? 2 * b : 0;
      load.nic_bytes = spans ? 2 * b : 0;
      break;
    case Pattern::kNodeTree: {
      // Per channel, both trees (b each way per edge): a chain link sends 2b
      // up and 2b down; a head sends and receives, per tree, b to its parent
      // and b to each child (NcclTreeEdges). Channel c's chain runs from
      // local c through the block and ends at local c - 1: an interior
      // member sends 4b, an end 2b; with fewer channels than members some
      // member is an end of none. Channel c's head is local c, on its rail.
      const int64_t heads = std::max<int32_t>(1, p.channels);
      const int64_t l = p.block > 0 ? p.block : heads;
      const int64_t blocks = g.size / l;
      const int64_t ends = heads == l ? 2 : (heads + 1 == l ? 1 : 0);
      load.hb_bytes = p.chains && l > 1 ? double(4 * heads - 2 * ends) * b : 0;
      load.nic_bytes = double(NcclTreeEdges(blocks)) * b;
      if (l > 1) cross_rail = g.rail_aligned ? 0 : 1;
      break;
    }
    case Pattern::kViaSwitch:
      load.hb_bytes = b;
      break;
  }
  if (c.network == NetworkKind::kRailOnly && spans) load.hb_bytes += cross_rail * load.nic_bytes;
  if (c.leaf_gpus > 0 && c.leaf_uplink_ratio > 1 && load.nic_bytes > 0) {
    load.leaf_factor = std::max(1.0, LeafEscapeFraction(p, c) * c.leaf_uplink_ratio);
  }
  return load;
}

double PhaseRawStep(const Phase& p, const ClusterFabrics& c) {
  if (p.bytes_per_flow <= 0 || (p.family.size <= 1 && p.pattern != Pattern::kViaSwitch)) return -1;
  StepLoad load = PhaseStepLoad(p, c);
  const double nic_Bps = p.nic_efficiency > 0 ? c.nic.bw_Bps * p.nic_efficiency : c.nic.effective_Bps();
  double step = std::max(load.hb_bytes / c.hb.effective_Bps(), load.nic_bytes * load.leaf_factor / nic_Bps);
  if (p.flow_cap_Bps > 0) step = std::max(step, p.bytes_per_flow / p.flow_cap_Bps);
  return step;
}

double PhaseTimeFromStep(const Phase& p, double raw_step) {
  if (raw_step < 0) return 0;
  double step = raw_step / p.bw_factor;
  if (p.bus_cap_Bps > 0) step = std::max(step, BusBytes(p) / p.bus_cap_Bps);
  return p.latency_s + double(p.repeat) * step;
}

double PhaseTime(const Phase& p, const ClusterFabrics& c) { return PhaseTimeFromStep(p, PhaseRawStep(p, c)); }

double PlanTimeFromSteps(const Plan& plan, const double* raw_steps) {
  double total = 0;
  for (int i = 0; i < plan.count; ++i) {
    const Phase& p = plan.phases[i];
    const double t = PhaseTimeFromStep(p, raw_steps[i]);
    if (p.chunks > 1 && i > 0) {
      // Pipelined with the previous phase: the chunk of the slower phase sets
      // the pace, the faster one adds one chunk of fill. Undo the previous
      // phase's full time that was already counted.
      const Phase& q = plan.phases[i - 1];
      const double a = (PhaseTimeFromStep(q, raw_steps[i - 1]) - q.latency_s) / p.chunks;
      const double bt = (t - p.latency_s) / p.chunks;
      total += -(a * p.chunks) + a + bt + (p.chunks - 1) * std::max(a, bt) + p.latency_s;
      continue;
    }
    total += t;
  }
  return total;
}

double PlanTime(const Plan& plan, const ClusterFabrics& c) {
  double raw[kMaxPhases];
  for (int i = 0; i < plan.count; ++i) raw[i] = PhaseRawStep(plan.phases[i], c);
  return PlanTimeFromSteps(plan, raw);
}

int64_t PhaseFlowCount(const Phase& p, int64_t gpus) {
  const int64_t n = p.family.size;
  const int64_t groups = p.family.Groups(gpus);
  switch (p.pattern) {
    case Pattern::kRing: {
      if (n <= 1) return 0;
      if (p.channels <= 1 && p.block <= 0) return groups * n;
      const int64_t domains = n / (p.block > 0 ? p.block : p.channels);  // one relay hop per domain and channel
      return groups * p.channels * (n + (domains > 1 ? domains : 0));
    }
    case Pattern::kNodeTree: {
      if (n <= 1) return 0;
      const int64_t heads = std::max<int32_t>(1, p.channels);
      const int64_t l = p.block > 0 ? p.block : heads;
      const int64_t blocks = n / l;
      return groups * heads * ((p.chains ? 2 * blocks * (l - 1) : 0) + 4 * (blocks - 1));
    }
    case Pattern::kChain: return groups * (n - 1);
    case Pattern::kAllPairs: return groups * n * (n - 1);
    case Pattern::kTree: return n <= 1 ? 0 : groups * 2 * (n - 1);
    case Pattern::kViaSwitch: return groups * n;
  }
  return 0;
}

}  // namespace railsim::comm
