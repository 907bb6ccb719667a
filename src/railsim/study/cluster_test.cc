// The shared-cluster study against hand-checked cases: contention on a spine
// (rail-optimized) against none on Rail-only, Rail-only's forwarding through
// other jobs' NICs, placements per policy, occupancy and queueing against a
// hand simulation, and determinism across threads.
#include "railsim/study/cluster.h"

#include <cmath>

#include <gtest/gtest.h>

#include "railsim/net/builder.h"
#include "railsim/study/cluster_placement.h"

namespace railsim::study {
namespace {

std::shared_ptr<const ClusterFabric> Fabric(net::Design d, int64_t gpus, int k, int radix, double over = 1) {
  net::TopologyParams p;
  p.design = d;
  p.gpus = gpus;
  p.hb_domain_size = k;
  p.radix = radix;
  p.port_speed_Bps = 50e9;
  p.oversubscription = over;
  p.hb_bw_Bps = 450e9;
  net::ValidateTopologyParams(p);
  return ClusterFabric::Built(p);
}

spec::JobTrace Trace(std::vector<spec::TraceJob> jobs) {
  spec::JobTrace t;
  t.source = "test";
  t.jobs = std::move(jobs);
  return t;
}

// 16 GPUs in 4 domains of 4. Jobs A = {2,3,4,5} and B = {10,11,12,13} each
// hold locals 2,3 of one domain and 0,1 of the next: their ring hops change
// rail (2 -> 0, 3 -> 1). Rail-optimized (radix 8, 4:1 oversubscribed: each
// rail's leaf has one uplink) sends both jobs' cross-rail hops up the same
// leaf uplink to the spine: each gets half. Rail-only (each 4-GPU rail on one
// switch) forwards them over NVLink to the domain's GPU on the destination
// rail and stays on that rail's switch: the two jobs share no link.
TEST(ClusterTest, TwoJobsShareASpineOnRailOptimizedButNotOnRailOnly) {
  const std::vector<std::vector<int64_t>> jobs = {{2, 3, 4, 5}, {10, 11, 12, 13}};
  auto ro = Fabric(net::Design::kRailOptimized, 16, 4, 8, 4);
  RingSummary a = SummarizeRing(*ro, jobs[0]);
  EXPECT_EQ(a.domains, 2);
  EXPECT_EQ(a.channels, 2);
  EXPECT_TRUE(a.rail_misaligned);
  EXPECT_TRUE(a.above_leaf);
  EXPECT_EQ(a.flows, 4);  // 2 channels x 2 domains
  std::vector<double> s = CommSlowdowns(*ro, jobs);
  EXPECT_DOUBLE_EQ(s[0], 2);
  EXPECT_DOUBLE_EQ(s[1], 2);

  auto rail_only = Fabric(net::Design::kRailOnly, 16, 4, 8);
  EXPECT_FALSE(SummarizeRing(*rail_only, jobs[0]).above_leaf);
  s = CommSlowdowns(*rail_only, jobs);
  EXPECT_DOUBLE_EQ(s[0], 1);
  EXPECT_DOUBLE_EQ(s[1], 1);
}

// The reverse: job X = {2,3,4,5} is larger than a domain and placed across
// rails. On Rail-only its hop 2 -> 4 is forwarded to GPU 0 (domain 0's rail
// 0) and leaves on GPU 0's NIC, which job Y = {0,1,8,9} (rail-aligned) uses
// for its own ring: both slow down. On rail-optimized (full bisection) X
// crosses rails through the spine and never touches Y's NICs.
TEST(ClusterTest, AJobAcrossRailsForwardsThroughOtherJobsNicsOnRailOnly) {
  const std::vector<std::vector<int64_t>> jobs = {{2, 3, 4, 5}, {0, 1, 8, 9}};
  auto rail_only = Fabric(net::Design::kRailOnly, 16, 4, 8);
  EXPECT_TRUE(SummarizeRing(*rail_only, jobs[0]).rail_misaligned);
  EXPECT_FALSE(SummarizeRing(*rail_only, jobs[1]).rail_misaligned);
  std::vector<double> s = CommSlowdowns(*rail_only, jobs);
  EXPECT_DOUBLE_EQ(s[0], 2);
  EXPECT_DOUBLE_EQ(s[1], 2);
  auto ro = Fabric(net::Design::kRailOptimized, 16, 4, 8);
  s = CommSlowdowns(*ro, jobs);
  EXPECT_DOUBLE_EQ(s[0], 1);
  EXPECT_DOUBLE_EQ(s[1], 1);
}

TEST(ClusterTest, PoliciesPlaceAsNamed) {
  auto f = Fabric(net::Design::kRailOptimized, 16, 4, 8);
  ClusterState state(*f);
  state.Take({0, 1, 2, 4});  // domain 0 has 1 free GPU, domain 1 has 3
  // first-fit: lowest free ids, across domains.
  EXPECT_EQ(state.Place(SchedulerPolicy::kFirstFit, 3, 0, false), (std::vector<int64_t>{3, 5, 6}));
  // domain-packing: a 3-GPU job inside the domain with the fewest free that holds it.
  EXPECT_EQ(state.Place(SchedulerPolicy::kDomainPacking, 3, 0, false), (std::vector<int64_t>{5, 6, 7}));
  // domain-packing: 6 GPUs = one whole free domain (2) + 2 in the best fit (1).
  EXPECT_EQ(state.Place(SchedulerPolicy::kDomainPacking, 6, 0, false), (std::vector<int64_t>{5, 6, 8, 9, 10, 11}));
  // block with segments of 2: each pair inside one domain, best fit first.
  EXPECT_EQ(state.Place(SchedulerPolicy::kBlock, 4, 2, false), (std::vector<int64_t>{5, 6, 8, 9}));
  // wait-for-fit: packed when it can; else nothing until the bound, then first-fit.
  state.Take({8, 12});
  EXPECT_TRUE(state.Place(SchedulerPolicy::kWaitForFit, 12, 0, false).empty());
  EXPECT_EQ(state.Place(SchedulerPolicy::kWaitForFit, 10, 0, true).size(), 10u);
  EXPECT_TRUE(state.Place(SchedulerPolicy::kFirstFit, 11, 0, false).empty());  // 10 free
}

// Hand simulation, 8 GPUs in 2 domains of 4 on one switch, first-fit, FIFO:
//   J0 t=0 8 GPUs 100 s: starts 0, ends 100.
//   J1 t=10 4 GPUs 50 s: waits for J0; starts 100, ends 150 (domain 0).
//   J2 t=20 4 GPUs 30 s: starts 100 too (domain 1), ends 130.
//   J3 t=150 1 GPU 10 s: starts at once, ends 160.
// Waits 0, 90, 80, 0: mean 42.5, p50 0 (nearest rank: the 2nd of 0, 0,
// 80, 90), p99 90. Span: submissions 0..150 s; busy GPU-time there 800 +
// 200 + 120 = 1,120 of 8 x 150 = 1,200: occupancy 0.9333. Every job sits on
// its ideal placement (slowdown 1), and no two rings share a link.
TEST(ClusterTest, OccupancyAndQueueingMatchAHandSimulation) {
  auto f = Fabric(net::Design::kRailOptimized, 8, 4, 16);
  spec::JobTrace t = Trace({{0, 100, 8, "", ""}, {10, 50, 4, "", ""}, {20, 30, 4, "", ""}, {150, 10, 1, "", ""}});
  ClusterOptions o;
  ClusterRun run;
  ASSERT_TRUE(ReplayCluster(t, *f, SchedulerPolicy::kFirstFit, o, &run));
  EXPECT_DOUBLE_EQ(run.jobs[1].start_s, 100);
  EXPECT_DOUBLE_EQ(run.jobs[2].start_s, 100);
  EXPECT_DOUBLE_EQ(run.jobs[2].end_s, 130);
  EXPECT_NEAR(run.queue_wait_s.mean, 42.5, 1e-9);
  EXPECT_DOUBLE_EQ(run.queue_wait_s.p50, 0);
  EXPECT_DOUBLE_EQ(run.queue_wait_s.p99, 90);
  EXPECT_NEAR(run.occupancy_mean, 1120.0 / 1200, 1e-12);
  EXPECT_DOUBLE_EQ(run.span_s, 150);
  EXPECT_DOUBLE_EQ(run.makespan_s, 160);
  EXPECT_DOUBLE_EQ(run.placement_slowdown_mean, 1);
  EXPECT_DOUBLE_EQ(run.jobs_contended_share, 0);
  // J1 waited 90 s for a 50 s run: (90 + 50) / 60.
  EXPECT_NEAR(run.jobs[1].jct_slowdown(), 140.0 / 60, 1e-12);
  EXPECT_EQ(run.jobs_placed, 4);
  // The occupancy series averages to the mean.
  double sum = 0;
  for (double x : run.occupancy) sum += x;
  EXPECT_NEAR(sum / double(run.occupancy.size()), run.occupancy_mean, 1e-9);
}

// What was not measured is not 0: jobs inside one domain share no link, so
// the contention slowdown is 1 (no moment sampled a ring between domains);
// with no job placed at all (every job larger than the cluster) waits and
// slowdowns are undefined (NaN: null in the JSON), not 0.
TEST(ClusterTest, NothingMeasuredIsNotZero) {
  auto f = Fabric(net::Design::kRailOnly, 8, 4, 16);
  ClusterOptions o;
  ClusterRun inside;
  ASSERT_TRUE(ReplayCluster(Trace({{0, 100, 4, "", ""}, {0, 100, 2, "", ""}}), *f, SchedulerPolicy::kDomainPacking,
                            o, &inside));
  EXPECT_EQ(2, inside.jobs_placed);
  EXPECT_DOUBLE_EQ(1, inside.contention_slowdown.mean);
  EXPECT_DOUBLE_EQ(1, inside.contention_slowdown.p99);
  EXPECT_DOUBLE_EQ(1, inside.jct_slowdown.mean);
  ClusterRun none;
  ASSERT_TRUE(ReplayCluster(Trace({{0, 100, 16, "", ""}}), *f, SchedulerPolicy::kFirstFit, o, &none));
  EXPECT_EQ(0, none.jobs_placed);
  EXPECT_EQ(1, none.jobs_unplaceable);
  EXPECT_TRUE(std::isnan(none.jct_slowdown.mean));
  EXPECT_TRUE(std::isnan(none.queue_wait_s.mean));
  EXPECT_TRUE(std::isnan(none.jobs_contended_share));
  EXPECT_EQ(0, none.occupancy_mean);
}

// Backfill: J0 holds 6 of 8 GPUs; J1 (4 GPUs) waits; J2 (2 GPUs) starts at
// once with backfill, and only after J1 in strict FIFO. J0 sits on 4 + 2
// GPUs: 2 ring channels where the ideal 3 + 3 has 3, so its communication
// (10% of it) takes 3/2 as long: it ends at 100 x (1 + 0.1 x 0.5) = 105.
TEST(ClusterTest, BackfillLetsSmallJobsPassTheHead) {
  auto f = Fabric(net::Design::kRailOptimized, 8, 4, 16);
  spec::JobTrace t = Trace({{0, 100, 6, "", ""}, {1, 10, 4, "", ""}, {2, 10, 2, "", ""}, {3, 1, 16, "", ""}});
  ClusterOptions o;
  ClusterRun run;
  ASSERT_TRUE(ReplayCluster(t, *f, SchedulerPolicy::kFirstFit, o, &run));
  EXPECT_DOUBLE_EQ(run.jobs[2].start_s, 2);
  EXPECT_EQ(run.jobs_unplaceable, 1);  // 16 GPUs on an 8-GPU cluster
  o.backfill = false;
  ClusterRun fifo;
  ASSERT_TRUE(ReplayCluster(t, *f, SchedulerPolicy::kFirstFit, o, &fifo));
  EXPECT_DOUBLE_EQ(fifo.jobs[0].placement_slowdown, 1.05);
  EXPECT_DOUBLE_EQ(fifo.jobs[1].start_s, 105);
  EXPECT_DOUBLE_EQ(fifo.jobs[2].start_s, 105);
}

TEST(ClusterTest, SameResultWhateverTheThreadCount) {
  spec::SyntheticTraceOptions s;
  s.jobs = 400;
  s.arrivals_per_hour = 60;
  s.size_buckets = {1, 4, 8, 24, 64};
  s.size_shares = {0.2, 0.3, 0.3, 0.15, 0.05};
  spec::JobTrace t = spec::MakeSyntheticTrace(s);
  std::vector<std::shared_ptr<const ClusterFabric>> fabrics = {Fabric(net::Design::kRailOnly, 128, 8, 16),
                                                               Fabric(net::Design::kRailOptimized, 128, 8, 16),
                                                               Fabric(net::Design::kFatTree, 128, 8, 16)};
  ClusterOptions o;
  o.policies = {SchedulerPolicy::kFirstFit, SchedulerPolicy::kDomainPacking, SchedulerPolicy::kFewestLeaves,
                SchedulerPolicy::kBlock, SchedulerPolicy::kWaitForFit};
  o.threads = 1;
  ClusterResult one = RunCluster(t, fabrics, o);
  o.threads = 5;
  ClusterResult five = RunCluster(t, fabrics, o);
  ASSERT_EQ(one.runs.size(), 15u);
  for (size_t i = 0; i < one.runs.size(); ++i) {
    EXPECT_EQ(one.runs[i].design, five.runs[i].design);
    EXPECT_EQ(one.runs[i].occupancy_mean, five.runs[i].occupancy_mean);
    EXPECT_EQ(one.runs[i].jct_slowdown.mean, five.runs[i].jct_slowdown.mean);
    EXPECT_EQ(one.runs[i].jobs_contended_share, five.runs[i].jobs_contended_share);
    EXPECT_GT(one.runs[i].jobs_placed, 390);
  }
  // Topology-naive placement spreads jobs over more domains than packing.
  EXPECT_GT(one.runs[0].jobs_across[0], one.runs[1].jobs_across[0]);
}

TEST(ClusterTest, SwitchMapRoutesThroughTorAndAggregation) {
  spec::SwitchMap map = spec::ParseSwitchMap("host,asw,psw\nh0,S0,P0\nh1,S0,P0\nh2,S1,P0\nh3,S2,P1\n", "--topology");
  auto f = ClusterFabric::FromSwitchMap(map, 8, 50e9, 450e9);
  EXPECT_EQ(f->gpus(), 32);
  EXPECT_EQ(f->leaf_count(), 3);
  int32_t path[kMaxPathLinks];
  EXPECT_EQ(f->Path(0, 1, path), 2);    // NVLink inside a host
  EXPECT_EQ(f->Path(0, 8, path), 2);    // NIC up, NIC down under one ToR
  EXPECT_EQ(f->Path(0, 16, path), 4);   // via the common aggregation switch
  EXPECT_TRUE(f->above_leaf(path[1]));
  EXPECT_EQ(f->Path(0, 24, path), 6);   // no common aggregation: via the core
}

}  // namespace
}  // namespace railsim::study
