// Benchmarks of building the largest networks of the paper's Table II and
// writing their cabling plan (the "well under a second" target of issue 2).
#include <benchmark/benchmark.h>

#include "railsim/net/bom.h"
#include "railsim/net/builder.h"
#include "railsim/report/network_report.h"

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

void BM_BuildAndExportCabling65536(benchmark::State& state) {
  TopologyParams p = Params(static_cast<Design>(state.range(0)), 128);
  for (auto _ : state) {
    Topology t = BuildTopology(p);
    std::string csv = report::CablingCsv(t);
    benchmark::DoNotOptimize(csv.size());
  }
  state.SetLabel(DesignName(p.design));
}
BENCHMARK(BM_BuildAndExportCabling65536)
    ->Arg(static_cast<int>(Design::kRailOptimized))
    ->Arg(static_cast<int>(Design::kRailOnly))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railsim::net
