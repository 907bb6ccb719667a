// What a simulation of a plan needs before it runs: the flows alive at once
// and the bytes it holds at its peak, so that callers (the CLI's
// --max-memory) can refuse a simulation the machine cannot hold before
// building anything large.
#pragma once

#include <cstdint>

#include "railsim/comm/plan.h"
#include "railsim/net/topology.h"

namespace railsim::sim {

/// Flows alive at once when `plan` runs on `gpus` GPUs: the largest phase
/// step (pipelined chunk pairs count together).
int64_t PeakFlows(const comm::Plan& plan, int64_t gpus);

/// Bytes a simulation of `plan` on `topology` with `threads` threads holds at
/// its peak in each of `ranks` processes (SimOptions::partition), the
/// topology included: 16 per live flow of its share, the per-link arrays and
/// per-thread scratch, and with several ranks the flows of a fill by lists,
/// which every rank gathers whole. Requires ranks >= 1.
int64_t EstimateMemoryBytes(const comm::Plan& plan, const net::Topology& topology, int threads, int ranks = 1);

}  // namespace railsim::sim
