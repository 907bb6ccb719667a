// Benchmarks of the flow-level simulator at the scales it must handle: an
// all-to-all among 4,096 GPUs (K = 8, rail-optimized, radix 64:
// 16.7 M GPU pairs of 256 KiB) under d-mod-k and ECMP routing, the pipelined
// forwarded one on Rail-only with ECMP (1 and 2 threads), and a hierarchical
// data-parallel all-reduce across 32,768 GPUs on Rail-only. Counters: flows
// simulated per second, rate recomputations, peak resident memory.
#include <sys/resource.h>

#include <benchmark/benchmark.h>

#include "railsim/comm/algorithms.h"
#include "railsim/net/builder.h"
#include "railsim/sim/simulator.h"

namespace railsim::sim {
namespace {

double PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024;
}

struct Setup {
  net::Topology topology;
  comm::ClusterFabrics fabrics;
};

Setup Make(net::Design design, int64_t gpus) {
  net::TopologyParams p;
  p.design = design;
  p.gpus = gpus;
  p.hb_domain_size = 8;
  p.radix = 64;
  p.port_speed_Bps = 50e9;
  p.hb_bw_Bps = 450e9;
  Setup s{net::BuildTopology(p), {}};
  s.fabrics.network = design == net::Design::kRailOnly ? comm::NetworkKind::kRailOnly
                                                       : comm::NetworkKind::kRailOptimized;
  s.fabrics.hb_domain_size = 8;
  s.fabrics.hb = {450e9, 0.82, 8e-6};
  s.fabrics.nic = {50e9, 0.94, 6e-6};
  return s;
}

void Report(benchmark::State& state, const SimResult& r) {
  state.counters["flows"] = double(r.flows_simulated);
  state.counters["flows_per_s"] = benchmark::Counter(double(r.flows_simulated), benchmark::Counter::kIsRate);
  state.counters["events"] = double(r.events);
  state.counters["sim_time_ms"] = r.time_s * 1e3;
  state.counters["peak_rss_MB"] = PeakRssBytes() / 1e6;
}

void BM_AllToAll4096(benchmark::State& state) {
  Setup s = Make(net::Design::kRailOptimized, 4096);
  const double bytes = 4096.0 * 256 * 1024;  // 256 KiB to every peer
  comm::Plan plan = *comm::MakePlan(comm::Op::kAllToAll, comm::Algorithm::kDirect, bytes,
                                    comm::LayoutOf(4096, 1, 8), s.fabrics);
  SimOptions o;
  o.route.routing = state.range(0) ? net::Routing::kEcmp : net::Routing::kDModK;
  o.hb_efficiency = 0.82;
  o.nic_efficiency = 0.94;
  SimResult r;
  for (auto _ : state) r = Simulate(s.topology, plan, o);
  Report(state, r);
  state.SetLabel(net::RoutingName(o.route.routing));
}
BENCHMARK(BM_AllToAll4096)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

// The pipelined forwarded all-to-all on Rail-only with ECMP (16 chunks): many
// small refills, each reopening the fastest groups. Arg: threads.
void BM_PipelinedForwardedEcmp4096(benchmark::State& state) {
  Setup s = Make(net::Design::kRailOnly, 4096);
  comm::PlanOptions po;
  po.pipelined = true;
  po.chunks = 16;
  comm::Plan plan = *comm::MakePlan(comm::Op::kAllToAll, comm::Algorithm::kForwarded, 4096.0 * 256 * 1024,
                                    comm::LayoutOf(4096, 1, 8), s.fabrics, po);
  SimOptions o;
  o.route.routing = net::Routing::kEcmp;
  o.hb_efficiency = 0.82;
  o.nic_efficiency = 0.94;
  o.threads = int(state.range(0));
  SimResult r;
  for (auto _ : state) r = Simulate(s.topology, plan, o);
  Report(state, r);
}
BENCHMARK(BM_PipelinedForwardedEcmp4096)->Arg(1)->Arg(2)->Unit(benchmark::kSecond)->Iterations(1);

void BM_HierarchicalAllReduce32768(benchmark::State& state) {
  Setup s = Make(net::Design::kRailOnly, 32768);
  comm::Plan plan = *comm::MakePlan(comm::Op::kAllReduce, comm::Algorithm::kHierarchical, 4e9,
                                    comm::LayoutOf(32768, 1, 8), s.fabrics);
  SimOptions o;
  o.route.routing = net::Routing::kDModK;
  o.hb_efficiency = 0.82;
  o.nic_efficiency = 0.94;
  SimResult r;
  for (auto _ : state) r = Simulate(s.topology, plan, o);
  Report(state, r);
  state.counters["flows_represented"] = double(r.flows_represented);
}
BENCHMARK(BM_HierarchicalAllReduce32768)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace railsim::sim
