// libFuzzer target: failure specs (comma lists and JSON files of device
// names) resolved on small Rail-only and rail-optimized graphs. Every route
// around the failures between live GPUs must avoid every link that is down
// and be a connected walk from source to destination.
#include "railsim/net/builder.h"
#include "railsim/net/failures.h"
#include "spec_fuzzer_common.h"

namespace {

railsim::net::Topology Build(railsim::net::Design design, int radix) {
  railsim::net::TopologyParams p;
  p.design = design;
  p.gpus = 64;
  p.hb_domain_size = 8;
  p.radix = radix;
  p.port_speed_Bps = 50e9;
  return railsim::net::BuildTopology(p);
}

void CheckRoutes(const railsim::net::Topology& t, const railsim::net::FailureSet& f) {
  railsim::net::Hop hops[railsim::net::kMaxRouteHops];
  for (int64_t src = 0; src < t.gpus(); ++src) {
    for (int64_t dst = 0; dst < t.gpus(); ++dst) {
      if (f.gpu_removed[src] || f.gpu_removed[dst]) continue;
      int n = railsim::net::RouteAroundFailures(t, f, src, dst, {}, hops);
      if (n > railsim::net::kMaxRouteHops) __builtin_trap();
      railsim::net::NodeId at = t.gpu_node(src);
      for (int i = 0; i < n; ++i) {
        const railsim::net::Link& l = t.links()[hops[i].link];
        if (f.link_down[hops[i].link]) __builtin_trap();
        if ((hops[i].upward ? l.a : l.b) != at) __builtin_trap();
        at = hops[i].upward ? l.b : l.a;
      }
      if (n >= 0 && at != t.gpu_node(dst)) __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const railsim::net::Topology rail_only = Build(railsim::net::Design::kRailOnly, 4);
  static const railsim::net::Topology rail_optimized = Build(railsim::net::Design::kRailOptimized, 16);
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    std::vector<std::string> names = !text.empty() && text[0] == '['
                                         ? railsim::net::ParseFailureFile(text, "--fail-file")
                                         : railsim::net::SplitFailureList(text, "--fail");
    for (const railsim::net::Topology* t : {&rail_only, &rail_optimized}) {
      try {
        CheckRoutes(*t, railsim::net::ResolveFailures(*t, names, "--fail"));
      } catch (const railsim::Error&) {
        // A name of the other design.
      }
    }
  });
}
