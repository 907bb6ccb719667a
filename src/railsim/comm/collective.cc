#include "railsim/comm/collective.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <unordered_map>

#include "railsim/comm/algorithms.h"

namespace railsim::comm {

const char* NetworkKindName(NetworkKind n) {
  switch (n) {
    case NetworkKind::kRailOnly: return "rail-only";
    case NetworkKind::kRailOptimized: return "rail-optimized";
    case NetworkKind::kIdeal: return "ideal";
  }
  return "?";
}
GroupLayout LayoutOf(int64_t size, int64_t stride, int64_t k) {
  assert(size >= 1 && stride >= 1 && k >= 1);
  GroupLayout g;
  g.size = size;
  g.stride = stride;
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

GroupLayout LayoutOfMembers(const int64_t* members, int64_t n, int64_t k) {
  assert(n >= 1 && k >= 1);
  if (n == 1) return LayoutOf(1, 1, k);
  const int64_t step = members[1] - members[0];
  bool even = step != 0;
  for (int64_t i = 2; even && i < n; ++i) even = members[i] - members[i - 1] == step;
  // Members per domain, and the rails each domain's members sit on: the group
  // is rail-aligned when every domain holds the same set of rails.
  std::unordered_map<int64_t, uint64_t> rails_hash;  // domain -> hash of its rails
  std::unordered_map<int64_t, int64_t> count;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = members[i] / k;
    ++count[d];
    rails_hash[d] += uint64_t(members[i] % k) * 0x9E3779B97F4A7C15ull + 1;
  }
  int64_t local = 0;
  for (const auto& [d, c] : count) local = std::max(local, c);
  const int64_t domains = int64_t(count.size());
  bool aligned = true;
  const uint64_t first = rails_hash.begin()->second;
  for (const auto& [d, h] : rails_hash) aligned = aligned && h == first;
  auto same = [&](const GroupLayout& g) {
    return g.domains == domains && g.local == local && g.rail_aligned == aligned;
  };
  if (even && same(LayoutOf(n, std::llabs(step), k))) return LayoutOf(n, std::llabs(step), k);
  // The strided layout with these properties (see LayoutOf).
  int64_t stride = 1;
  if (domains == 1) {
    stride = 1;
  } else if (local == 1) {
    stride = aligned ? k : k + 1;
  } else if (aligned && k % local == 0) {
    stride = k / local;
  } else {
    // Not aligned: the stride that puts `local` members in a domain without
    // lining them up on rails, if there is one; else the nearest.
    stride = std::max<int64_t>(1, k / local);
    for (int64_t s = 1; s < k; ++s) {
      if ((k + s - 1) / s == local && (local * s) % k != 0) {
        stride = s;
        break;
      }
    }
  }
  GroupLayout g = LayoutOf(n, stride, k);
  g.domains = domains;
  g.local = local;
  g.rail_aligned = aligned;
  return g;
}

double AllReduceTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return AutoTime(Op::kAllReduce, bytes, g, c);
}

double ReduceScatterTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return AutoTime(Op::kReduceScatter, bytes, g, c);
}

double AllGatherTime(double bytes, const GroupLayout& g, const ClusterFabrics& c) {
  return AutoTime(Op::kAllGather, bytes, g, c);
}

double AllToAllTime(double bytes, const GroupLayout& g, const ClusterFabrics& c, bool pipelined) {
  PlanOptions o;
  o.pipelined = pipelined;
  return AutoTime(Op::kAllToAll, bytes, g, c, o);
}

double SendRecvTime(double bytes, int64_t distance, int64_t members, const ClusterFabrics& c) {
  if (bytes <= 0 || distance == 0 || members <= 1) return 0;
  return AutoTime(Op::kSendRecv, bytes, LayoutOf(members, distance, c.hb_domain_size), c);
}

double SendRecvTime(double bytes, const GroupLayout& chain, const ClusterFabrics& c) {
  if (bytes <= 0 || chain.size <= 1) return 0;
  return AutoTime(Op::kSendRecv, bytes, chain, c);
}

double CollectiveTimeMemo::Time(Call call, double bytes, const GroupLayout& g) {
  for (const Entry& e : entries_) {
    if (e.bytes == bytes && e.call == call && e.group == g) return e.time_s;
  }
  double t = 0;
  switch (call) {
    case Call::kAllReduce: t = AllReduceTime(bytes, g, fabrics_); break;
    case Call::kReduceScatter: t = ReduceScatterTime(bytes, g, fabrics_); break;
    case Call::kAllGather: t = AllGatherTime(bytes, g, fabrics_); break;
    case Call::kSendRecv: t = SendRecvTime(bytes, g, fabrics_); break;
  }
  entries_[next_] = {call, bytes, g, t};
  next_ = (next_ + 1) % entries_.size();
  return t;
}

}  // namespace railsim::comm
