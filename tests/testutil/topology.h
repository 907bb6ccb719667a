// Test helper: the parameters of a small network at 400 Gb/s (50 GB/s) ports.
#pragma once

#include <cstdint>

#include "railsim/net/topology.h"

namespace railsim::testutil {

inline net::TopologyParams TopologyOf(net::Design design, int64_t gpus, int k, int radix, double oversub = 1) {
  net::TopologyParams p;
  p.design = design;
  p.gpus = gpus;
  p.hb_domain_size = k;
  p.radix = radix;
  p.port_speed_Bps = 50e9;
  p.oversubscription = oversub;
  return p;
}

}  // namespace railsim::testutil
