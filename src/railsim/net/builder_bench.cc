// Benchmarks of building the largest networks of the paper's Table II (the
// "well under a second" target); writing their cabling plan is timed in
// report/network_report_bench.cc, the layer that writes it.
#include <benchmark/benchmark.h>

#include "railsim/net/bom.h"
#include "railsim/net/builder.h"

namespace railsim::net {
namespace {

TopologyParams Params(Design design, int radix) {
  TopologyParams p;
  p.design = design;
  p.gpus = 65536;
  p.hb_domain_size = 256;
  p.radix = radix;
  p.port_speed_Bps = 50e9;
  return p;
}

void BM_Build65536(benchmark::State& state) {
  TopologyParams p = Params(static_cast<Design>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    Topology t = BuildTopology(p);
    benchmark::DoNotOptimize(t.links().size());
  }
  state.SetLabel(DesignName(p.design));
}
BENCHMARK(BM_Build65536)
    ->Args({static_cast<int>(Design::kRailOptimized), 128})
    ->Args({static_cast<int>(Design::kRailOnly), 128})
    ->Args({static_cast<int>(Design::kFatTree), 128})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railsim::net
