#include "railsim/study/design_setup.h"

#include "railsim/net/builder.h"

namespace railsim::study {

comm::NetworkKind NetworkKindOf(net::Design design) {
  return design == net::Design::kRailOnly ? comm::NetworkKind::kRailOnly : comm::NetworkKind::kRailOptimized;
}

DesignSetup SetUpDesign(const ClusterSetup& setup, net::Design design) {
  DesignSetup d;
  d.design = design;
  const comm::NetworkKind kind = NetworkKindOf(design);
  if (setup.model) {
    d.context = perf::MakePerfContext(*setup.model, setup.system, setup.gpus, kind, setup.hb_domain_size,
                                      setup.network);
  } else {
    perf::ClusterNetwork cluster =
        perf::MakeClusterNetwork(setup.system, setup.gpus, kind, setup.hb_domain_size, setup.network);
    d.context.system = setup.system;
    d.context.gpus = setup.gpus;
    d.context.fabrics = cluster.fabrics;
    d.context.shape = cluster.shape;
    d.context.domain_use = cluster.domain_use;
  }
  if (design == net::Design::kFatTree) d.context.fabrics.rail_leaves = false;
  const net::TopologyParams p = perf::GraphParams(
      setup.system, perf::ClusterNetwork{d.context.fabrics, d.context.shape, d.context.domain_use}, design,
      setup.gpus);
  net::ValidateTopologyParams(p);
  d.topology = net::BuildTopology(p);
  return d;
}

}  // namespace railsim::study
