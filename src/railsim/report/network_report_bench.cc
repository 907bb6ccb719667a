// Benchmark of building the largest network of the paper's Table II and
// writing its cabling plan (one CSV row per cable), the export a buyer
// hands to the installer.
#include <benchmark/benchmark.h>

#include "railsim/net/builder.h"
#include "railsim/report/network_report.h"

namespace railsim::report {
namespace {

void BM_BuildAndExportCabling65536(benchmark::State& state) {
  net::TopologyParams p;
  p.design = static_cast<net::Design>(state.range(0));
  p.gpus = 65536;
  p.hb_domain_size = 256;
  p.radix = 128;
  p.port_speed_Bps = 50e9;
  for (auto _ : state) {
    net::Topology t = net::BuildTopology(p);
    std::string csv = CablingCsv(t);
    benchmark::DoNotOptimize(csv.size());
  }
  state.SetLabel(net::DesignName(p.design));
}
BENCHMARK(BM_BuildAndExportCabling65536)
    ->Arg(static_cast<int>(net::Design::kRailOptimized))
    ->Arg(static_cast<int>(net::Design::kRailOnly))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railsim::report
