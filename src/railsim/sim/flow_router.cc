#include "railsim/sim/flow_router.h"

namespace railsim::sim {

FlowRouter::FlowRouter(const net::Topology& topology, const net::RouteOptions& route,
                       const net::FailureSet* failures)
    : topology_(topology), route_(route), failures_(failures) {
  const std::vector<net::Link>& links = topology.links();
  pcie_.resize(links.size());
  for (size_t l = 0; l < links.size(); ++l) pcie_[l] = links[l].kind == net::LinkKind::kPcie;
}

}  // namespace railsim::sim
