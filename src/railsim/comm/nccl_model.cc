#include "railsim/comm/nccl_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

namespace railsim::comm {
namespace {

constexpr const char* kProtocolNames[] = {"auto", "ll", "ll128", "simple"};
constexpr int kSimple = 2;

// NCCL's table index by node count: one node, two nodes, more.
int Scale(const GroupLayout& g) { return g.domains <= 1 ? 0 : (g.domains == 2 ? 1 : 2); }

// floor(log2 n) for n >= 1, without libm (the search's hot path).
double Log2Floor(int64_t n) { return n <= 1 ? 0 : double(63 - __builtin_clzll(uint64_t(n))); }

// NCCL's inter-node step latency: the NET value (the Tree's when every node
// holds one rank) plus the NIC's reported latency, twice for Simple (the
// GDR flush).
double InterLatency(int a, int p, const GroupLayout& g, const spec::NcclConstants& n) {
  const int algo = g.local <= 1 ? int(spec::NcclAlgo::kTree) : a;
  return n.net_latency_s[algo][p] + n.nic_reported_latency_s * (p == kSimple ? 2 : 1);
}

// NCCL's treeCorrectionFactor for a buffer of `bytes`: index floor(log2(bytes
// / 64)), applied below `entries` (23 for Tree, all 24 for NVLSTree).
double TreeCorrection(int p, double bytes, const spec::NcclConstants& n, int entries) {
  if (bytes < 64) return n.tree_correction[p][0];
  const int i = std::ilogb(bytes / 64);  // floor(log2), exactly, without log2's cost
  return i < entries ? n.tree_correction[p][i] : 1.0;
}

}  // namespace

const char* ProtocolName(Protocol p) { return kProtocolNames[int(p)]; }

std::optional<Protocol> ParseProtocol(std::string_view name) {
  for (int i = 0; i < 4; ++i) {
    if (name == kProtocolNames[i]) return Protocol(i);
  }
  return std::nullopt;
}

std::vector<std::string> ProtocolNames() { return {std::begin(kProtocolNames), std::end(kProtocolNames)}; }

NcclChannels SearchChannels(const GroupLayout& g, const ClusterFabrics& c) {
  const spec::NcclConstants& n = c.nccl;
  NcclChannels out;
  const double nvlink = n.search_nvlink_Bps > 0 ? n.search_nvlink_Bps : c.hb.bw_Bps;
  const int64_t most = n.max_search_channels > 0 ? n.max_search_channels : INT64_MAX;
  if (g.domains > 1) {
    const double nic = c.nic.bw_Bps;
    int first = 0;
    while (first + 1 < n.inter_speed_count && n.inter_speeds_Bps[first] > std::min(nic, nvlink)) ++first;
    // NCCL's search goes on to lower speeds while they stay above 0.49 of
    // the first one found and keeps the most channels x speed, ties to the
    // faster: on NVLink 5 (18 x 40.1 GB/s) 16 channels of 45.1 GB/s beat 15
    // of 48, one per NIC each.
    double best = 0;
    for (int i = first; i < n.inter_speed_count; ++i) {
      const double speed = n.inter_speeds_Bps[i];
      if (i > first && !(speed > 0.49 * n.inter_speeds_Bps[first])) break;
      const int64_t per_nic = std::max<int64_t>(1, int64_t(nic / speed));
      const int64_t fit = std::max<int64_t>(1, int64_t(nvlink / speed));
      const int64_t channels = std::min({std::max<int64_t>(1, g.local) * per_nic, fit, most});
      if (double(channels) * speed > best) {
        best = double(channels) * speed;
        out = {channels, speed};
      }
    }
    return out;
  }
  int i = 0;
  while (i + 1 < n.intra_speed_count && n.intra_speeds_Bps[i] > nvlink) ++i;
  out.channel_Bps = n.intra_speeds_Bps[i];
  out.channels = std::min(most, std::max<int64_t>(1, int64_t(nvlink / out.channel_Bps)));
  return out;
}

double NcclLatency(spec::NcclAlgo algo, Protocol proto, int passes, double bytes, const GroupLayout& g,
                   const ClusterFabrics& c, const NcclChannels& ch) {
  assert(c.nccl.enabled && g.size >= 2 && proto != Protocol::kAuto);
  const spec::NcclConstants& n = c.nccl;
  const int64_t nodes = g.domains, ppn = g.local;
  if (algo == spec::NcclAlgo::kPat) {
    // One rank per node: the network step is the Tree's (InterLatency).
    const double inter = InterLatency(int(spec::NcclAlgo::kTree), kSimple, g, n);
    return n.pat.base_latency_s + Log2Floor(nodes) * inter / n.pat.net_step_divisor +
           double(g.size) * n.pat.rank_latency_s;
  }
  if (algo == spec::NcclAlgo::kCollNetDirect) {
    const spec::NcclCollNet& cn = n.collnet;
    const double inter = cn.net_latency_s + n.nic_reported_latency_s * 2;  // Simple only
    return 2 * (double(std::min<int64_t>(1, ppn - 1)) * cn.nvlink_latency_s + double(ppn - 1) * cn.arity_latency_s) +
           inter;
  }
  const int a = int(algo), p = ProtocolIndex(proto);
  const double base = n.base_latency_s[a][p];
  const double intra = n.nvlink_latency_s[a][p];
  const double inter = InterLatency(a, p, g, n);
  switch (algo) {
    case spec::NcclAlgo::kRing: {
      const double steps = double(passes) * double(g.size - 1);
      const double inter_steps = nodes > 1 ? double(passes) * double(nodes - 1) : 0;
      const double overhead = nodes > 1 ? n.net_overhead_s * (p == kSimple ? 3 : 1) : 0;
      double lat = base + (steps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
      // NCCL's "plateau": Ring Simple all-reduce across nodes, once each
      // channel's share of each rank reaches 64 bytes (comm channels = 2 x
      // search channels).
      if (passes == 2 && p == kSimple && nodes > 1 && bytes / double(2 * ch.channels * g.size) >= 64) {
        lat *= n.ring_plateau_factor;
      }
      return lat;
    }
    case spec::NcclAlgo::kTree:
      return base + 2 * (double(ppn - 1) * intra + Log2Floor(nodes) * inter);
    case spec::NcclAlgo::kNvls:
      return intra + (nodes > 1 ? inter : 0);
    case spec::NcclAlgo::kNvlsTree:
      return base + intra + 2 * Log2Floor(nodes) * inter;
    case spec::NcclAlgo::kPat:
    case spec::NcclAlgo::kCollNetDirect:
      break;  // above
  }
  return base;
}

ProtocolRate NcclRate(spec::NcclAlgo algo, Protocol proto, double bytes, const GroupLayout& g,
                      const ClusterFabrics& c, const NcclChannels& ch) {
  assert(c.nccl.enabled && proto != Protocol::kAuto);
  const spec::NcclConstants& n = c.nccl;
  const int p = ProtocolIndex(proto), s = Scale(g);
  const double channels = double(ch.channels);
  ProtocolRate r;
  switch (algo) {
    case spec::NcclAlgo::kRing:
      if (proto == Protocol::kLL) r = {0.5, n.ll_max_Bps[s]};
      if (proto == Protocol::kLL128) r = {0.92, channels * n.ring_ll128_channel_Bps[s]};
      return r;
    case spec::NcclAlgo::kTree: {
      // The tree's NIC efficiency is measured for Simple; LL and LL128 keep
      // NCCL's ratios to it, all capped per channel, then corrected by size.
      const double k = TreeCorrection(p, bytes, n, 23);
      if (proto == Protocol::kSimple) r = {1, channels * n.tree_channel_Bps[s]};
      if (proto == Protocol::kLL) r = {1 / 3.8, std::min(n.ll_max_Bps[s], channels * n.tree_channel_Bps[s] / 3.8)};
      if (proto == Protocol::kLL128) {
        r = {g.domains <= 1 ? 7.0 / 9.0 : 120.0 / 128.0, channels * n.tree_ll128_channel_Bps[s]};
      }
      r.factor *= k;
      r.cap_Bps *= k;
      return r;
    }
    case spec::NcclAlgo::kNvls:
      return r;
    case spec::NcclAlgo::kNvlsTree:
      r.cap_Bps = channels * n.nvls_tree_channel_Bps[s];
      if (n.nvls_tree_correction) {
        const double k = TreeCorrection(p, bytes, n, spec::kNcclTreeCorrections);
        r.factor *= k;
        r.cap_Bps *= k;
      }
      return r;
    case spec::NcclAlgo::kPat:
      r.factor = n.pat.bw_factor;
      return r;
    case spec::NcclAlgo::kCollNetDirect:
      r.factor = n.collnet.bw_factor;
      return r;
  }
  return r;
}

}  // namespace railsim::comm
