// The flow-level simulator against the closed forms it must reproduce where
// their assumptions hold, and against what they miss where they do not.
#include "railsim/sim/simulator.h"

#include <algorithm>
#include <barrier>
#include <cstdio>
#include <limits>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "railsim/comm/algorithms.h"
#include "railsim/comm/moe.h"
#include "railsim/net/builder.h"
#include "railsim/net/failures.h"

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
    double paper = hb == 300e9 ? 8.2 : 4.1;
    std::printf("  HB %.0f GB/s: simulated %.4f ms vs %.4f ms, overhead %.2f%% (paper %.1f%%)\n", hb / 1e9,
                r.time_s * 1e3, d.time_s * 1e3, 100 * overhead, paper);
    EXPECT_NEAR(paper, 100 * overhead, 0.05);
    // Closed forms: T_F = (N - K) m / C_S; T_R = (K - 1) M m / C_F + T_F.
    EXPECT_NEAR(64 * 1e6 / 25e9, d.time_s, 1e-9);
    EXPECT_NEAR(7 * 9 * 1e6 / hb + 64 * 1e6 / 25e9, r.time_s, 1e-9);
  }
}

// Where a closed form's assumptions hold (no contention beyond the GPU's own
// links), the simulated time of every algorithm is its analytic time.
TEST(SimulatorTest, EveryAlgorithmMatchesItsClosedForm) {
  struct Case {
    const char* name;
    net::Design design;
    int64_t gpus;
    Op op;
    Algorithm algorithm;
    int64_t size, stride;
  } cases[] = {
      {"ring all-reduce in one HB domain", net::Design::kRailOptimized, 128, Op::kAllReduce, Algorithm::kRing, 8, 1},
      {"ring all-reduce along a rail", net::Design::kRailOptimized, 128, Op::kAllReduce, Algorithm::kRing, 16, 8},
      {"ring all-reduce, one ring per local rank", net::Design::kRailOptimized, 128, Op::kAllReduce,
       Algorithm::kRing, 16, 1},
      {"ring reduce-scatter along a rail", net::Design::kRailOnly, 128, Op::kReduceScatter, Algorithm::kRing, 16, 8},
      {"ring all-gather along a rail", net::Design::kRailOnly, 128, Op::kAllGather, Algorithm::kRing, 16, 8},
      {"double binary tree all-reduce", net::Design::kRailOptimized, 128, Op::kAllReduce, Algorithm::kTree, 16, 8},
      {"hierarchical all-reduce", net::Design::kRailOnly, 128, Op::kAllReduce, Algorithm::kHierarchical, 128, 1},
      {"hierarchical reduce-scatter", net::Design::kRailOnly, 128, Op::kReduceScatter, Algorithm::kHierarchical,
       64, 1},
      {"hierarchical all-gather", net::Design::kRailOptimized, 128, Op::kAllGather, Algorithm::kHierarchical, 32, 2},
      {"in-switch all-reduce", net::Design::kRailOnly, 64, Op::kAllReduce, Algorithm::kInSwitch, 8, 1},
      {"broadcast (pipelined chain)", net::Design::kRailOnly, 128, Op::kBroadcast, Algorithm::kRing, 16, 8},
      {"point-to-point between stages", net::Design::kRailOnly, 128, Op::kSendRecv, Algorithm::kAuto, 4, 32},
      {"direct all-to-all in one domain", net::Design::kRailOnly, 64, Op::kAllToAll, Algorithm::kDirect, 8, 1},
      {"direct all-to-all along a rail", net::Design::kRailOnly, 128, Op::kAllToAll, Algorithm::kDirect, 16, 8},
      {"forwarded all-to-all", net::Design::kRailOnly, 128, Op::kAllToAll, Algorithm::kForwarded, 128, 1},
  };
  for (const Case& x : cases) {
    Cluster c = LineRate(x.design, x.gpus, 8, 450e9, 50e9);
    c.fabrics.hb_in_network_allreduce_efficiency = 1.066;  // DGX H100's NVLink SHARP
    comm::Plan plan = PlanOf(x.op, x.algorithm, 256e6, x.size, x.stride, c);
    SimResult r = SimulateOn(c, plan);
    double analytic = comm::PlanTime(plan, c.fabrics);
    std::printf("  %-42s analytic %9.4f ms  simulated %9.4f ms  (%+.2f%%)\n", x.name, analytic * 1e3,
                r.time_s * 1e3, 100 * (r.time_s / analytic - 1));
    EXPECT_NEAR(1, r.time_s / analytic, 0.02) << x.name;
  }
}

// NCCL lays a ring out rail by rail: channel c enters and leaves every node
// on GPU c's NIC (the last GPU hands its data back over NVLink). On a
// rail-optimized fabric with ECMP no ring byte then reaches a spine, and the
// simulation runs at the closed form: per step, each GPU sends 8 x 1 MB over
// NVLink (17.8 us at 450 GB/s) and 1 MB on its NIC (20 us at 50 GB/s), so
// the NIC sets the step: 2 x 127 steps x 20 us = 5.08 ms.
TEST(SimulatorTest, RailLocalRingOnEcmpStaysOffTheSpine) {
  for (net::Design design : {net::Design::kRailOptimized, net::Design::kRailOnly}) {
    Cluster c = LineRate(design, 128, 8, 450e9, 50e9);
    comm::Plan plan = PlanOf(Op::kAllReduce, Algorithm::kRing, 128 * 8e6, 128, 1, c);
    SimResult r = SimulateOn(c, plan, net::Routing::kEcmp);
    const double analytic = comm::PlanTime(plan, c.fabrics);
    std::printf("  ring of 128 on %s, ECMP: analytic %.4f ms, simulated %.4f ms, %.0f bytes on spines\n",
                design == net::Design::kRailOnly ? "rail-only" : "rail-optimized", 1e3 * analytic,
                1e3 * r.time_s, r.bytes_by_tier.leaf_spine);
    EXPECT_NEAR(2 * 127 * 1e6 / 50e9, analytic, 1e-9);
    EXPECT_EQ(0, r.bytes_by_tier.leaf_spine);
    EXPECT_NEAR(1, r.time_s / analytic, 0.02);
  }
}

// A ring's 2 (n - 1) identical steps are simulated once and repeated; the
// link bytes still count every step.
TEST(SimulatorTest, RepeatedStepsAreSimulatedOnceAndCountedInFull) {
  Cluster c = LineRate(net::Design::kRailOnly, 128, 8, 450e9, 50e9);
  comm::Plan plan = PlanOf(Op::kAllReduce, Algorithm::kRing, 16e6, 16, 8, c);
  SimResult r = SimulateOn(c, plan);
  ASSERT_EQ(1u, r.phases.size());
  EXPECT_EQ(30, r.phases[0].steps);
  EXPECT_EQ(1, r.phases[0].steps_simulated);
  // 8 rings of 16 members, 30 steps of 1 MB through 16 NICs each way:
  // every ring flow crosses its source's NIC-leaf link and its
  // destination's leaf-NIC link.
  EXPECT_NEAR(8 * 16 * 30 * 1e6 * 2, r.bytes_by_tier.nic_leaf, 1);
}

// ECMP hashes flows onto spines without looking at load, so some cables get
// more than their share: the all-to-all is slower than the closed form
// (which assumes full bisection is usable) and than d-mod-k on the same
// fabric, which gives each destination its own down-links.
TEST(SimulatorTest, EcmpCollisionsSlowAllToAllOnRailOptimizedSpine) {
  Cluster c = LineRate(net::Design::kRailOptimized, 256, 8, 450e9, 50e9, 16);
  ASSERT_EQ(3, c.topology.tiers());
  comm::Plan plan = PlanOf(Op::kAllToAll, Algorithm::kDirect, 256 * 262144.0, 256, 1, c);
  double analytic = comm::PlanTime(plan, c.fabrics);
  SimResult dmodk = SimulateOn(c, plan, net::Routing::kDModK);
  SimResult ecmp = SimulateOn(c, plan, net::Routing::kEcmp);
  std::printf("  analytic %.4f ms, d-mod-k %.4f ms (%+.2f%%), ECMP %.4f ms (%+.2f%%)\n", analytic * 1e3,
              dmodk.time_s * 1e3, 100 * (dmodk.time_s / analytic - 1), ecmp.time_s * 1e3,
              100 * (ecmp.time_s / analytic - 1));
  EXPECT_NEAR(1, dmodk.time_s / analytic, 0.02);
  EXPECT_GT(ecmp.time_s, 1.03 * analytic);
  EXPECT_GT(ecmp.time_s, 1.03 * dmodk.time_s);
  // The ECMP seed changes which cables collide, not that they do.
  SimOptions o;
  o.route = {net::Routing::kEcmp, 12345};
  SimResult other = Simulate(c.topology, plan, o);
  EXPECT_NE(ecmp.time_s, other.time_s);
  EXPECT_GT(other.time_s, 1.03 * analytic);
}

// Pipelined forwarding in chunks hides all but one chunk of the NVLink hop:
// the sequential 8.2% of the A100 case falls to about 8.2% / 16. The
// textbook closed form (max of the two phases) says 0 and misses that fill.
TEST(SimulatorTest, PipelinedForwardingHidesMostOfTheNvlinkHop) {
  Cluster only = LineRate(net::Design::kRailOnly, 72, 8, 300e9, 25e9);
  comm::PlanOptions o;
  o.pipelined = true;
  o.chunks = 16;
  comm::Plan plan = PlanOf(Op::kAllToAll, Algorithm::kForwarded, 72e6, 72, 1, only, o);
  SimResult r = SimulateOn(only, plan);
  const double direct = 64e6 / 25e9, hb = 63e6 / 300e9;
  double overhead = r.time_s / direct - 1;
  std::printf("  pipelined, 16 chunks: simulated overhead %.3f%% (sequential 8.20%%, closed form max() 0%%)\n",
              100 * overhead);
  EXPECT_LT(overhead, 0.01);
  EXPECT_NEAR(hb / 16 / direct, overhead, 1e-6);
}

// DeepEP-style MoE dispatch, NIC and NVLink stages pipelined in 16 chunks,
// read both ways. 32 GPUs in 4 domains of 8 on Rail-only at line rate (450
// GB/s NVLink, 50 GB/s NIC), top-2 of 32 experts (8 per domain), 4096 rows of
// 2 KiB (row = 8 MiB). Each GPU sends each other domain's rail peer the rows
// that reach it, 1 - C(24,2)/C(32,2) = 220/496 of the row: 3 x 3.72 MB over
// its NIC = 223.3 us. Each GPU gives each of its 7 domain peers top-2 / 8 of
// the row: 1.75 row = 14.68 MB over NVLink = 32.6 us. Pipelined: 223.3 +
// 32.6 / 16 = 225.3 us (in sequence 255.9 us).
TEST(SimulatorTest, PipelinedMoeDispatchIsTheSlowerStagePlusFill) {
  Cluster only = LineRate(net::Design::kRailOnly, 32, 8, 450e9, 50e9);
  comm::MoeDispatch d;
  d.tokens = 4096;
  d.bytes_per_token = 2048;
  d.experts = 32;
  d.topk = 2;
  d.chunks = 16;
  const double row = 4096.0 * 2048;
  const double nic = 3 * row * (1 - 276.0 / 496) / 50e9, hb = 1.75 * row / 450e9;
  double analytic = 0;
  const comm::Plan plan = comm::MoeDispatchPlan(d, comm::MoeAllToAll::kForwarded, comm::LayoutOf(32, 1, 8),
                                                only.fabrics, &analytic);
  const SimResult r = SimulateOn(only, plan);
  std::printf("  MoE dispatch, 16 chunks: hand %.1f us, analytic %.1f us, simulated %.1f us (%+.2f%%)\n",
              1e6 * (nic + hb / 16), 1e6 * analytic, 1e6 * r.time_s, 100 * (r.time_s / analytic - 1));
  EXPECT_NEAR(nic + hb / 16, analytic, 1e-9 * analytic);
  EXPECT_NEAR(analytic, r.time_s, 0.02 * analytic);
  EXPECT_LT(r.time_s, 0.95 * (nic + hb));  // clearly below the stages' sum
}

// Cross-rail pairs on Rail-only are forwarded over NVLink per flow: a
// rail-only "direct" all-to-all moves the same NVLink bytes as forwarding.
TEST(SimulatorTest, RailOnlyDirectAllToAllIsForwardedPerFlow) {
  Cluster only = LineRate(net::Design::kRailOnly, 72, 8, 300e9, 25e9);
  SimResult d = SimulateOn(only, PlanOf(Op::kAllToAll, Algorithm::kDirect, 72e6, 72, 1, only));
  SimResult f = SimulateOn(only, PlanOf(Op::kAllToAll, Algorithm::kForwarded, 72e6, 72, 1, only));
  EXPECT_NEAR(f.bytes_by_tier.nvlink, d.bytes_by_tier.nvlink, 1);
  EXPECT_NEAR(f.bytes_by_tier.nic_leaf, d.bytes_by_tier.nic_leaf, 1);
  EXPECT_EQ(0, d.bytes_by_tier.leaf_spine);
}

// The determinism tests' clusters: 128 GPUs on a rail-optimized fabric of
// radix-8 switches (ECMP spreads over its spines), 64 GPUs on Rail-only with
// NVLink SHARP; and a pipelined schedule of 4 chunks.
struct Fabrics {
  Fabrics() {
    only.fabrics.hb_in_network_allreduce_efficiency = 1.066;
    pipelined.pipelined = true;
    pipelined.chunks = 4;
  }
  Cluster opt = LineRate(net::Design::kRailOptimized, 128, 8, 450e9, 50e9, 8);
  Cluster only = LineRate(net::Design::kRailOnly, 64, 8, 450e9, 50e9);
  comm::PlanOptions pipelined;
};

// Filling in rounds with every pass split among 1, 2 or 3 threads (even the
// smallest): the same completion time, events and link bytes to the last
// bit, with the many distinct rates of ECMP, a pipelined schedule and
// in-switch flow caps; and the same time as filling link by link with
// per-link lists, up to float rounding.
TEST(SimulatorTest, ThreadCountChangesNothing) {
  const Fabrics fabrics;
  const Cluster& opt = fabrics.opt;
  const Cluster& only = fabrics.only;
  const comm::PlanOptions& pipelined = fabrics.pipelined;
  struct Case {
    const Cluster* cluster;
    comm::Plan plan;
    net::Routing routing;
  } cases[] = {
      {&opt, PlanOf(Op::kAllToAll, Algorithm::kDirect, 128 * 65536.0, 128, 1, opt), net::Routing::kEcmp},
      {&only, PlanOf(Op::kAllToAll, Algorithm::kForwarded, 64 * 65536.0, 64, 1, only, pipelined),
       net::Routing::kEcmp},
      {&only, PlanOf(Op::kAllReduce, Algorithm::kInSwitch, 64e6, 8, 1, only), net::Routing::kDModK},
  };
  for (const Case& c : cases) {
    SimOptions lists;
    lists.route.routing = c.routing;
    const SimResult by_lists = Simulate(c.cluster->topology, c.plan, lists);
    SimResult base;
    for (int threads : {1, 2, 3}) {
      SimOptions o = lists;
      o.threads = threads;
      o.parallel_min_flows = 1;
      o.max_list_entries = 0;
      SimResult r = Simulate(c.cluster->topology, c.plan, o);
      EXPECT_NEAR(by_lists.time_s, r.time_s, 1e-9 * by_lists.time_s) << c.plan.algorithm;
      if (threads == 1) {
        base = r;
        continue;
      }
      EXPECT_EQ(base.time_s, r.time_s) << c.plan.algorithm << ", " << threads << " threads";
      EXPECT_EQ(base.events, r.events);
      ASSERT_EQ(base.links.size(), r.links.size());
      for (size_t i = 0; i < r.links.size(); ++i) EXPECT_EQ(base.links[i].bytes, r.links[i].bytes);
    }
  }
}

// Ranks on threads, for the partition hook without MPI: each collective
// posts this rank's buffer, meets the others at a barrier, reads them all,
// and meets them again before anyone reuses a buffer.
class ThreadRanks {
 public:
  explicit ThreadRanks(int n) : sync_(n), posted_(size_t(n)) {}

  class Rank final : public Partition {
   public:
    Rank(ThreadRanks* all, int rank) : all_(all), rank_(rank) {}
    int rank() const override { return rank_; }
    int size() const override { return int(all_->posted_.size()); }
    void SumInt64(std::span<int64_t> values) override {
      Combine(values, [](int64_t a, int64_t b) { return a + b; });
    }
    void MinDouble(std::span<double> values) override {
      Combine(values, [](double a, double b) { return std::min(a, b); });
    }
    void GatherFlows(std::span<const Flow> mine, std::vector<Flow>* all) override { Gather(mine, all); }
    void GatherInt64(std::span<const int64_t> mine, std::vector<int64_t>* all) override { Gather(mine, all); }

   private:
    template <typename T>
    void Gather(std::span<const T> mine, std::vector<T>* all) {
      all->clear();
      Exchange(mine.data(), mine.size(), [&](const void* data, size_t n) {
        const T* v = static_cast<const T*>(data);
        all->insert(all->end(), v, v + n);
      });
    }
    template <typename T, typename Op>
    void Combine(std::span<T> values, Op op) {
      std::vector<T> out(values.size());
      bool first = true;
      Exchange(values.data(), values.size(), [&](const void* data, size_t n) {
        EXPECT_EQ(values.size(), n) << "every rank reduces the same size";
        const T* v = static_cast<const T*>(data);
        for (size_t i = 0; i < out.size() && i < n; ++i) out[i] = first ? v[i] : op(out[i], v[i]);
        first = false;
      });
      std::copy(out.begin(), out.end(), values.begin());
    }
    template <typename Read>
    void Exchange(const void* data, size_t n, Read read) {
      all_->posted_[size_t(rank_)] = {data, n};
      all_->sync_.arrive_and_wait();
      for (const auto& [d, k] : all_->posted_) read(d, k);
      all_->sync_.arrive_and_wait();
    }
    ThreadRanks* all_;
    int rank_;
  };

  /// Runs Simulate() on every rank, each on its thread; the results by rank.
  std::vector<SimResult> Simulate(const net::Topology& t, const comm::Plan& plan, const SimOptions& o) {
    std::vector<SimResult> out(posted_.size());
    std::vector<std::thread> threads;
    for (size_t r = 0; r < posted_.size(); ++r) {
      threads.emplace_back([&, r] {
        Rank rank(this, int(r));
        SimOptions mine = o;
        mine.partition = &rank;
        out[r] = sim::Simulate(t, plan, mine);
      });
    }
    for (std::thread& th : threads) th.join();
    return out;
  }

 private:
  std::barrier<> sync_;
  std::vector<std::pair<const void*, size_t>> posted_;
};

void ExpectSameResult(const SimResult& want, const SimResult& got, const std::string& what) {
  EXPECT_EQ(want.time_s, got.time_s) << what;
  EXPECT_EQ(want.events, got.events) << what;
  EXPECT_EQ(want.flows_simulated, got.flows_simulated) << what;
  EXPECT_EQ(want.flows_unroutable, got.flows_unroutable) << what;
  ASSERT_EQ(want.phases.size(), got.phases.size()) << what;
  for (size_t i = 0; i < want.phases.size(); ++i) {
    EXPECT_EQ(want.phases[i].end_s, got.phases[i].end_s) << what << ", phase " << i;
    EXPECT_EQ(want.phases[i].steps_simulated, got.phases[i].steps_simulated) << what << ", phase " << i;
  }
  ASSERT_EQ(want.links.size(), got.links.size()) << what;
  for (size_t i = 0; i < want.links.size(); ++i) {
    EXPECT_EQ(want.links[i].link, got.links[i].link) << what;
    EXPECT_EQ(want.links[i].bytes, got.links[i].bytes) << what << ", link " << want.links[i].link;
  }
  EXPECT_EQ(want.bytes_by_tier.spine_core, got.bytes_by_tier.spine_core) << what;
}

// NCCL's tree moves twice the bytes on its chains (reduction up and
// broadcast down at once) as on its tree edges: every link's bytes are each
// flow's own bytes on its hops, summed here from the plan's flows and routes.
TEST(SimulatorTest, LinkBytesCountEachFlowsOwnBytes) {
  const Fabrics fabrics;
  const Cluster& opt = fabrics.opt;
  comm::Plan plan;  // NCCL's tree over 32 GPUs: chains in 4 domains, one tree per channel across them
  comm::Phase& tree = plan.Add();
  tree.pattern = comm::Pattern::kNodeTree;
  tree.family = {32, 1};
  tree.channels = 8;
  tree.bytes_per_flow = 4e6;
  const auto& links = opt.topology.links();
  double nvlink = 0, network = 0;
  std::vector<double> sizes;
  comm::ForEachFlow(plan.phases[0], opt.topology.gpus(), 8, [&](int64_t src, int64_t dst, double bytes) {
    if (std::find(sizes.begin(), sizes.end(), bytes) == sizes.end()) sizes.push_back(bytes);
    net::Hop hops[net::kMaxRouteHops];
    const int n = opt.topology.RouteInto(src, dst, {net::Routing::kDModK, 0}, hops);
    for (int h = 0; h < n; ++h) {
      const net::LinkKind kind = links[size_t(hops[h].link)].kind;
      if (kind == net::LinkKind::kNvlink) nvlink += bytes * double(plan.phases[0].repeat);
      if (net::IsNetworkLink(kind)) network += bytes * double(plan.phases[0].repeat);
    }
  });
  ASSERT_EQ(2u, sizes.size()) << "chains and tree edges";
  const SimResult r = SimulateOn(opt, plan);
  const TierBytes& t = r.bytes_by_tier;
  EXPECT_NEAR(nvlink, t.nvlink, 1e-9 * nvlink);
  EXPECT_NEAR(network, t.nic_leaf + t.leaf_spine + t.spine_core, 1e-9 * network);
}

// Max-min fair rates by textbook progressive filling, from scratch: raise
// every unfrozen flow's rate together until a link fills, freeze its flows,
// repeat. `paths` are directed link ids (2 x link + direction).
std::vector<double> MaxMinRates(const std::vector<std::vector<int32_t>>& paths, const std::vector<double>& capacity) {
  std::vector<double> rate(paths.size(), 0), used(capacity.size(), 0);
  std::vector<bool> frozen(paths.size(), false);
  size_t left = paths.size();
  while (left > 0) {
    std::vector<int64_t> unfrozen(capacity.size(), 0);
    for (size_t f = 0; f < paths.size(); ++f) {
      if (frozen[f]) continue;
      for (int32_t l : paths[f]) ++unfrozen[size_t(l)];
    }
    double least = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < capacity.size(); ++l) {
      if (unfrozen[l] > 0) least = std::min(least, (capacity[l] - used[l]) / double(unfrozen[l]));
    }
    std::vector<bool> full(capacity.size(), false);
    for (size_t l = 0; l < capacity.size(); ++l) {
      full[l] = unfrozen[l] > 0 && (capacity[l] - used[l]) / double(unfrozen[l]) <= least * (1 + 1e-12);
    }
    for (size_t f = 0; f < paths.size(); ++f) {
      if (frozen[f]) continue;
      bool on_full = false;
      for (int32_t l : paths[f]) on_full = on_full || full[size_t(l)];
      if (!on_full) continue;
      frozen[f] = true;
      rate[f] = least;
      --left;
      for (int32_t l : paths[f]) used[size_t(l)] += least;
    }
  }
  return rate;
}

// Time for a plan's phases run one after another (no latency, no repeats,
// no chunks, no caps), each drained by recomputing max-min rates from
// scratch at every finish; flows with no path around `failures` dropped.
double ReferenceTime(const Cluster& c, const comm::Plan& plan, net::Routing routing,
                     const net::FailureSet* failures = nullptr) {
  const auto& links = c.topology.links();
  std::vector<double> capacity(2 * links.size());
  for (size_t l = 0; l < links.size(); ++l) capacity[2 * l] = capacity[2 * l + 1] = links[l].capacity_Bps;
  double time = 0;
  for (int i = 0; i < plan.count; ++i) {
    const comm::Phase& p = plan.phases[i];
    EXPECT_TRUE(p.repeat == 1 && p.chunks == 1 && p.latency_s == 0 && p.flow_cap_Bps == 0) << p.name;
    std::vector<std::vector<int32_t>> paths;
    std::vector<double> left;
    comm::ForEachFlow(plan.phases[i], c.topology.gpus(), c.fabrics.hb_domain_size,
                      [&](int64_t src, int64_t dst, double bytes) {
                        net::Hop hops[net::kMaxRouteHops];
                        const int n = failures ? net::RouteAroundFailures(c.topology, *failures, src, dst,
                                                                          {routing, 0}, hops)
                                               : c.topology.RouteInto(src, dst, {routing, 0}, hops);
                        if (n < 0) return;
                        std::vector<int32_t> path;
                        for (int h = 0; h < n; ++h) path.push_back(2 * hops[h].link + (hops[h].upward ? 0 : 1));
                        paths.push_back(path);
                        left.push_back(bytes);
                      });
    while (!paths.empty()) {
      const std::vector<double> rate = MaxMinRates(paths, capacity);
      double step = std::numeric_limits<double>::infinity();
      for (size_t f = 0; f < paths.size(); ++f) step = std::min(step, left[f] / rate[f]);
      time += step;
      size_t kept = 0;
      for (size_t f = 0; f < paths.size(); ++f) {
        if (left[f] / rate[f] <= step * (1 + 1e-9)) continue;  // finishes now
        paths[kept] = paths[f];
        left[kept++] = left[f] - rate[f] * step;
      }
      paths.resize(kept);
      left.resize(kept);
    }
  }
  return time;
}

// ECMP's collisions give many distinct rates, so flows finish at many times
// and the simulator refills only what each finish can change (the rates at
// or above the slowest finished flow, in its island only: a Rail-only
// network's rails and each HB domain fill apart, unless flows forwarded
// between rails join them). Against max-min recomputed from scratch at
// every finish: the same completion time, filling by lists, in rounds, or
// in rounds first.
TEST(SimulatorTest, PartialRefillsGiveMaxMinFromScratch) {
  const Cluster opt = LineRate(net::Design::kRailOptimized, 64, 8, 450e9, 50e9, 8);
  const Cluster only = LineRate(net::Design::kRailOnly, 64, 8, 450e9, 50e9, 4);
  ASSERT_EQ(2, only.topology.tiers());
  const net::FailureSet spine = net::ResolveFailures(only.topology, {"switch:rail1/spine0"}, "--fail");
  struct Case {
    const char* name;
    const Cluster* cluster;
    comm::Plan plan;
    const net::FailureSet* failures = nullptr;
  } cases[] = {
      {"rail-optimized, direct", &opt, PlanOf(Op::kAllToAll, Algorithm::kDirect, 64 * 65536.0, 64, 1, opt)},
      {"Rail-only, forwarded", &only, PlanOf(Op::kAllToAll, Algorithm::kForwarded, 64 * 65536.0, 64, 1, only)},
      {"Rail-only, forwarded, a spine of rail 1 down", &only,
       PlanOf(Op::kAllToAll, Algorithm::kForwarded, 64 * 65536.0, 64, 1, only), &spine},
      {"Rail-only, direct (forwarded per flow)", &only,
       PlanOf(Op::kAllToAll, Algorithm::kDirect, 64 * 65536.0, 64, 1, only)},
  };
  for (const Case& c : cases) {
    const double reference = ReferenceTime(*c.cluster, c.plan, net::Routing::kEcmp, c.failures);
    SimOptions o;
    o.failures = c.failures;
    o.route.routing = net::Routing::kDModK;
    const SimResult dmodk = Simulate(c.cluster->topology, c.plan, o);
    o.route.routing = net::Routing::kEcmp;
    struct Fill {
      const char* name;
      int64_t max_list_entries, rounds_first_entries;
    } fills[] = {{"lists", SimOptions().max_list_entries, SimOptions().rounds_first_entries},
                 {"rounds", 0, 0},
                 {"rounds first", SimOptions().max_list_entries, 0}};
    for (const Fill& f : fills) {
      o.max_list_entries = f.max_list_entries;
      o.rounds_first_entries = f.rounds_first_entries;
      const SimResult r = Simulate(c.cluster->topology, c.plan, o);
      std::printf("  %s, %s: from scratch %.9g us, simulated %.9g us, %lld rate recomputations\n", c.name, f.name,
                  reference * 1e6, r.time_s * 1e6, (long long)r.events);
      EXPECT_NEAR(reference, r.time_s, 1e-9 * reference) << c.name << ", " << f.name;
      EXPECT_GT(r.events, dmodk.events) << "ECMP's many rates take more refills than d-mod-k's";
    }
  }
}

// The flows split over 2 and 3 ranks (on threads here, MPI ranks under
// mpirun): every rank gets the single process's result to the last bit,
// filling by lists (gathered) or in rounds, on one or two threads per rank,
// with ECMP's many rates, pipelined chunks, in-switch caps, ring steps that
// repeat, and flows dropped around a failed switch.
TEST(SimulatorTest, PartitionedRanksGiveTheSingleProcessResult) {
  const Fabrics fabrics;
  const Cluster& opt = fabrics.opt;
  const Cluster& only = fabrics.only;
  const comm::PlanOptions& pipelined = fabrics.pipelined;
  const net::FailureSet failed = net::ResolveFailures(opt.topology, {"gpu5", "switch:leaf3"}, "--fail");
  struct Case {
    const char* name;
    const Cluster* cluster;
    comm::Plan plan;
    net::Routing routing;
    const net::FailureSet* failures = nullptr;
  } cases[] = {
      {"direct, ECMP", &opt, PlanOf(Op::kAllToAll, Algorithm::kDirect, 128 * 65536.0, 128, 1, opt),
       net::Routing::kEcmp},
      {"direct, d-mod-k, failed GPU and leaf", &opt, PlanOf(Op::kAllToAll, Algorithm::kDirect, 128 * 65536.0, 128, 1, opt),
       net::Routing::kDModK, &failed},
      {"forwarded pipelined, ECMP", &only,
       PlanOf(Op::kAllToAll, Algorithm::kForwarded, 64 * 65536.0, 64, 1, only, pipelined), net::Routing::kEcmp},
      {"in-switch", &only, PlanOf(Op::kAllReduce, Algorithm::kInSwitch, 64e6, 8, 1, only), net::Routing::kDModK},
      {"ring along rails", &opt, PlanOf(Op::kAllReduce, Algorithm::kRing, 64e6, 16, 8, opt), net::Routing::kEcmp},
  };
  for (const Case& c : cases) {
    for (int64_t max_list_entries : {SimOptions().max_list_entries, int64_t{0}}) {
      SimOptions o;
      o.route.routing = c.routing;
      o.failures = c.failures;
      o.max_list_entries = max_list_entries;
      const SimResult one = Simulate(c.cluster->topology, c.plan, o);
      if (c.failures) {
        EXPECT_LT(0, one.flows_unroutable) << "the failed GPU's flows are dropped";
      }
      for (int ranks : {2, 3}) {
        o.threads = ranks - 1;
        o.parallel_min_flows = 1;
        ThreadRanks all(ranks);
        const std::vector<SimResult> results = all.Simulate(c.cluster->topology, c.plan, o);
        for (int r = 0; r < ranks; ++r) {
          ASSERT_NO_FATAL_FAILURE(ExpectSameResult(
              one, results[size_t(r)],
              fmt::format("{}, lists {}, rank {} of {}", c.name, max_list_entries, r, ranks)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace railsim::sim
