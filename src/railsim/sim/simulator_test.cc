// The flow-level simulator against the closed forms it must reproduce where
// their assumptions hold, and against what they miss where they do not.
#include "railsim/sim/simulator.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/comm/algorithms.h"
#include "railsim/net/builder.h"

namespace railsim::sim {
namespace {

using comm::Algorithm;
using comm::ClusterFabrics;
using comm::NetworkKind;
using comm::Op;

struct Cluster {
  net::Topology topology;
  ClusterFabrics fabrics;
};

// A cluster at line rate (efficiency 1, no latency), so that the closed
// forms are the formulas of the reference.
Cluster LineRate(net::Design design, int64_t gpus, int k, double hb_Bps, double nic_Bps, int radix = 64,
                 double oversubscription = 1) {
  net::TopologyParams p;
  p.design = design;
  p.gpus = gpus;
  p.hb_domain_size = k;
  p.radix = radix;
  p.port_speed_Bps = nic_Bps;
  p.hb_bw_Bps = hb_Bps;
  p.oversubscription = oversubscription;
  net::ValidateTopologyParams(p);
  Cluster c{net::BuildTopology(p), {}};
  c.fabrics.network = design == net::Design::kRailOnly ? NetworkKind::kRailOnly : NetworkKind::kRailOptimized;
  c.fabrics.hb_domain_size = k;
  c.fabrics.hb = {hb_Bps, 1, 0};
  c.fabrics.nic = {nic_Bps, 1, 0};
  return c;
}

SimResult SimulateOn(const Cluster& c, const comm::Plan& plan, net::Routing routing = net::Routing::kDModK) {
  SimOptions o;
  o.route.routing = routing;
  return Simulate(c.topology, plan, o);
}

comm::Plan PlanOf(Op op, Algorithm a, double bytes, int64_t size, int64_t stride, const Cluster& c,
                  comm::PlanOptions o = {}) {
  auto plan = comm::MakePlan(op, a, bytes, comm::LayoutOf(size, stride, c.fabrics.hb_domain_size), c.fabrics, o);
  EXPECT_TRUE(plan.has_value());
  return *plan;
}

// Reference section 4, A100 at line rate: 72 GPUs, K = 8 (M = 9), 300 GB/s
// NVLink, 25 GB/s NIC: forwarded all-to-all is 8.2% slower than direct on the
// rail-optimized network; 4.1% with the bidirectional 600 GB/s figure.
TEST(SimulatorTest, ForwardedAllToAllReproducesPaperOverhead) {
  for (double hb : {300e9, 600e9}) {
    Cluster only = LineRate(net::Design::kRailOnly, 72, 8, hb, 25e9);
    // Radix 128: one full-bisection switch, the paper's any-to-any network.
    Cluster opt = LineRate(net::Design::kRailOptimized, 72, 8, hb, 25e9, 128);
    const double bytes = 72 * 1e6;  // 1 MB to every peer
    SimResult r = SimulateOn(only, PlanOf(Op::kAllToAll, Algorithm::kForwarded, bytes, 72, 1, only));
    SimResult d = SimulateOn(opt, PlanOf(Op::kAllToAll, Algorithm::kDirect, bytes, 72, 1, opt));
    double overhead = r.time_s / d.time_s - 1;
    for (const LinkLoad& l : d.links) {
      if (l.utilisation > 0.7) std::printf("    %s %s-%s %s %.3f\n", net::LinkKindName(opt.topology.links()[l.link].kind), opt.topology.NodeName(opt.topology.links()[l.link].a).c_str(), opt.topology.NodeName(opt.topology.links()[l.link].b).c_str(), l.upward ? "up" : "down", l.utilisation);
    }
    double paper = hb == 300e9 ? 8.2 : 4.1;
    std::printf("  HB %.0f GB/s: simulated %.4f ms vs %.4f ms, overhead %.2f%% (paper %.1f%%)\n", hb / 1e9,
                r.time_s * 1e3, d.time_s * 1e3, 100 * overhead, paper);
    EXPECT_NEAR(paper, 100 * overhead, 0.05);
    // Closed forms: T_F = (N - K) m / C_S; T_R = (K - 1) M m / C_F + T_F.
    EXPECT_NEAR(64 * 1e6 / 25e9, d.time_s, 1e-9);
    EXPECT_NEAR(7 * 9 * 1e6 / hb + 64 * 1e6 / 25e9, r.time_s, 1e-9);
  }
}

}  // namespace
}  // namespace railsim::sim
