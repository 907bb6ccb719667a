#include "railsim/comm/collective.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace railsim::comm {
namespace {

// Steps of latency a collective of n members pays: a ring takes n - 1, a tree
// about log2 n up and down; NCCL picks the cheaper with scale.
double Steps(int64_t n, double ring_factor) {
  if (n <= 1) return 0;
  double ring = ring_factor * static_cast<double>(n - 1);
  double tree = 2.0 * ring_factor * std::ceil(std::log2(static_cast<double>(n)));
  return std::min(ring, tree);
}

double RingTime(double bytes, int64_t n, double factor_per_member, const Fabric& f) {
  if (n <= 1 || bytes <= 0) return 0;
  double nn = static_cast<double>(n);
  return factor_per_member * (nn - 1) / nn * bytes / f.effective_Bps() + Steps(n, factor_per_member) * f.latency_s;
}

// A collective inside one HB domain.
double HbTime(double bytes, int64_t n, double factor, const ClusterFabrics& c, bool reduce) {
  if (reduce && factor == 2 && c.hb_in_network_allreduce_efficiency > 0 && n > 1 && bytes > 0) {
    // NVLink SHARP: switches reduce, one send and one receive per GPU; busbw
    // is quoted against the ring factor, so keep it in the formula.
    double nn = static_cast<double>(n);
    double ring_equiv = 2 * (nn - 1) / nn * bytes / (c.hb.bw_Bps * c.hb_in_network_allreduce_efficiency);
    return std::min(ring_equiv + 2 * c.hb.latency_s, RingTime(bytes, n, factor, c.hb));
  }
  return RingTime(bytes, n, factor, c.hb);
}

// factor 2 = all-reduce, 1 = reduce-scatter or all-gather.
double CollectiveTime(double bytes, const GroupLayout& g, const ClusterFabrics& c, double factor) {
  if (g.size <= 1 || bytes <= 0) return 0;
  if (g.domains <= 1) return HbTime(bytes, g.size, factor, c, true);
  if (g.local <= 1) return RingTime(bytes, g.size, factor, c.nic);
  // Hierarchical: inside the domain on HB, then across domains with each of
  // the `local` rails carrying 1/local of the data, then back inside.
  double local_share = bytes / static_cast<double>(g.local);
  double hierarchical;
  if (factor == 2) {
    hierarchical = HbTime(bytes, g.local, 1, c, false) + RingTime(local_share, g.domains, 2, c.nic) +
                   HbTime(bytes, g.local, 1, c, false);
  } else {
    hierarchical = HbTime(bytes, g.local, 1, c, false) + RingTime(local_share, g.domains, 1, c.nic);
  }
  if (c.network == NetworkKind::kRailOnly) return hierarchical;
  // Rail-optimized: also a flat ring through all members, each domain boundary
  // crossed on `local` NICs at once; NVLink hops inside are pipelined.
  double n = static_cast<double>(g.size);
  double per_gpu = factor * (n - 1) / n * bytes;
  double flat = std::max(per_gpu / (static_cast<double>(g.local) * c.nic.effective_Bps()),
                         per_gpu / c.hb.effective_Bps()) +
                Steps(g.size, factor) * c.nic.latency_s;
  return std::min(hierarchical, flat);
}

}  // namespace

GroupLayout LayoutOf(int64_t size, int64_t stride, int64_t k) {
  assert(size >= 1 && stride >= 1 && k >= 1);
  GroupLayout g;
  g.size = size;
  if (stride >= k) {
    g.local = 1;
    g.domains = size;
    g.rail_aligned = stride % k == 0;
    return g;
  }
  // Members 0, stride, 2*stride, ... that fall in the first domain.
  g.local = std::min(size, (k + stride - 1) / stride);
  g.domains = (size + g.local - 1) / g.local;
  // Member i and i + local are local * stride apart: the same rail iff that is
  // a whole number of domains.
  g.rail_aligned = g.domains == 1 || (g.local * stride) % k == 0;
  return g;
}

double AllReduceTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return CollectiveTime(bytes, g, c, 2);
}

double ReduceScatterTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return CollectiveTime(bytes, g, c, 1);
}

double AllGatherTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return CollectiveTime(bytes, g, c, 1);
}

double AllToAllTime(double bytes, const GroupLayout& g, const ClusterFabrics& c, bool pipelined) {
  if (g.size <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(g.size);
  const double local = static_cast<double>(g.local);
  const double domains = static_cast<double>(g.domains);
  const double per_peer = bytes / n;
  const double latency = (g.domains > 1 ? c.nic.latency_s : 0) + c.hb.latency_s;
  // Bytes each GPU moves inside its domain and across the NIC network.
  double hb_bytes = (local - 1) * per_peer;
  const double nic_bytes = (n - local) * per_peer;
  if (c.network == NetworkKind::kRailOnly && g.domains > 1 && g.local > 1) {
    // Forwarding: data for the (local - 1) other rails of every remote domain
    // first crosses NVLink to the GPU on the destination rail.
    hb_bytes = (local - 1) * domains * per_peer;
    double t_hb = hb_bytes / c.hb.effective_Bps();
    double t_nic = nic_bytes / c.nic.effective_Bps();
    return (pipelined ? std::max(t_hb, t_nic) : t_hb + t_nic) + latency;
  }
  return std::max(hb_bytes / c.hb.effective_Bps(), nic_bytes / c.nic.effective_Bps()) + latency;
}

double SendRecvTime(double bytes, int64_t distance, int64_t members, const ClusterFabrics& c) {
  if (bytes <= 0 || distance == 0 || members <= 1) return 0;
  const int64_t k = c.hb_domain_size;
  const double span = static_cast<double>(distance) * static_cast<double>(members);
  if (span <= static_cast<double>(k) && k % (distance * members) == 0) {
    return bytes / c.hb.effective_Bps() + c.hb.latency_s;
  }
  double nic = bytes / c.nic.effective_Bps() + c.nic.latency_s;
  if (distance % k == 0 || c.network != NetworkKind::kRailOnly) return nic;
  return std::max(bytes / c.hb.effective_Bps(), bytes / c.nic.effective_Bps()) + c.nic.latency_s +
         c.hb.latency_s;
}

}  // namespace railsim::comm
