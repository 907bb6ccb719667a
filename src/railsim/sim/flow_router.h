// FlowRouter: the directed links a flow crosses. Links are dense directed
// ids (2 x link + direction: even up, odd down). A path is recomputed from
// (source, destination, routing) whenever it is needed rather than stored:
// it is a pure function of them, and storing it would cost more memory per
// flow than the flow itself (sim/flow_store.h).
//
// PCIe links are left out of paths: each carries exactly the flows of its
// NIC's leaf link in the same direction and is never slower, so it never
// limits a rate.
//
// Immutable after construction; threads may share it. Holds references to
// the topology and the failure set, which must outlive it.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "railsim/net/failures.h"
#include "railsim/net/topology.h"
#include "railsim/sim/flow_store.h"

namespace railsim::sim {

class FlowRouter {
 public:
  /// `failures` may be null (the healthy network).
  FlowRouter(const net::Topology& topology, const net::RouteOptions& route, const net::FailureSet* failures);

  const net::Topology& topology() const { return topology_; }
  /// Number of directed link ids: 2 x the topology's links.
  size_t directed_links() const { return 2 * topology_.links().size(); }
  bool has_failures() const { return failures_ != nullptr; }

  /// Writes the flow's directed links (PCIe left out) to `out`, which has
  /// room for net::kMaxRouteHops, around the failures if there are any, and
  /// returns how many; -1 when no live path exists.
  int PathOf(int64_t src, int64_t dst, int32_t* out) const {
    if (src == dst) {  // up to the HB switch and back (in-switch reduction)
      const int32_t nvlink = topology_.hb_link(src);
      out[0] = 2 * nvlink;
      out[1] = 2 * nvlink + 1;
      return 2;
    }
    net::Hop hops[net::kMaxRouteHops];
    const int count = Route(src, dst, hops);
    int n = 0;
    for (int i = 0; i < count; ++i) {
      if (!pcie_[hops[i].link]) out[n++] = 2 * hops[i].link + (hops[i].upward ? 0 : 1);
    }
    return count < 0 ? -1 : n;
  }

  /// PathOf() of a stored flow, which has a live path (Simulate() stores no
  /// other).
  int PathOf(const Flow& flow, int32_t* out) const {
    const int n = PathOf(flow.src(), flow.dst(), out);
    assert(n > 0 && "stored flows have a live path");
    return n;
  }

 private:
  // The flow's hops on the graph, around the failures if there are any; -1
  // when no live path exists.
  int Route(int64_t src, int64_t dst, net::Hop* hops) const {
    if (failures_) return net::RouteAroundFailures(topology_, *failures_, src, dst, route_, hops);
    return topology_.RouteInto(src, dst, route_, hops);
  }

  const net::Topology& topology_;
  const net::RouteOptions route_;
  const net::FailureSet* failures_;  // null: the healthy network
  std::vector<uint8_t> pcie_;        // per (undirected) link: PCIe, left out of paths
};

}  // namespace railsim::sim
