#include "railsim/comm/collective.h"

#include <algorithm>
#include <cassert>

#include "railsim/comm/algorithms.h"

namespace railsim::comm {
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

}  // namespace railsim::comm
