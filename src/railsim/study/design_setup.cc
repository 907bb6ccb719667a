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
  net::TopologyParams p;
  p.design = design;
  p.gpus = d.context.domain_use.BuiltGpus(setup.gpus);
  p.hb_domain_size = static_cast<int>(d.context.domain_use.size);
  p.radix = d.context.shape.radix;
  p.oversubscription = d.context.shape.oversubscription;
  p.port_speed_Bps = setup.system.nic_bw_Bps;
  p.gpus_per_nic = setup.system.gpus_per_nic;
  p.hb_bw_Bps = setup.system.hb_bw_Bps;
  net::ValidateTopologyParams(p);
  d.topology = net::BuildTopology(p);
  return d;
}

}  // namespace railsim::study
