// Building the three network designs as graphs (net/topology.h).
//
// A full-bisection folded Clos over E endpoints with radix k uses the fewest
// tiers that fit: one switch when E <= k; two tiers while the leaves number at
// most k (E <= k^2/2); three while the pods of k/2 leaves number at most k
// (E <= k^3/4). Leaves have d down-ports, the largest d with
// d + ceil(d / R) <= k for oversubscription R (d = k/2 when R = 1), and
// ceil(e / R) up-links for e endpoints. Sizes that are not exact multiples
// round up honestly: a partial leaf, pod or spine layer is still a whole
// switch, and in two tiers every leaf is cabled to every spine (else the
// fabric would not be connected). In the exact cases the counts equal the
// closed forms E/k, 3E/k and 5E/k switches, 2E, 4E and 6E transceivers.
//
// Rail-optimized puts the GPUs of one rail under the same leaves; when a rail
// is smaller than a leaf's down-ports, as many whole rails as fit share a
// leaf (one leaf per one-GPU rail would be a fabric no one builds).
//
// Rail-only builds one such fabric per rail over M = N/K GPUs; when a rail
// fits in half a switch or less (M <= k/2), floor(k/M) rails share one
// partitioned chassis, as the paper counts (N/k switches).
#pragma once

#include <cstdint>
#include <vector>

#include "railsim/net/topology.h"

namespace railsim::net {

/// Default largest topology the builder accepts: 2^20 GPUs keeps the graph
/// (about 40 bytes per link, five links per GPU) near 200 MB. Callers may
/// raise it up to kHardMaxBuildGpus (node and link ids are 32-bit).
constexpr int64_t kMaxBuildGpus = int64_t{1} << 20;
constexpr int64_t kHardMaxBuildGpus = int64_t{1} << 26;

/// Leaf down-ports for radix k and oversubscription R (k/2 when R = 1).
/// Requires radix >= 2, oversubscription >= 1.
int LeafDownPorts(int radix, double oversubscription);

/// Switch tiers a Clos needs for endpoint groups of the given sizes (a leaf
/// never spans two groups); 4 means "more than three tiers".
int ClosTiersNeeded(const std::vector<int64_t>& group_sizes, int radix, double oversubscription);

/// Switch tiers the design needs (as above, for its fabrics).
int TiersNeeded(const TopologyParams& params);

/// Throws Error naming the flag (--gpus, --hb-size, --radix, --port-speed,
/// --oversubscription) unless `params` can be built: N in [1, max_gpus],
/// K >= 1 dividing N, radix even and >= 2, positive finite speeds, R in
/// [1, radix - 1], and at most three switch tiers.
void ValidateTopologyParams(const TopologyParams& params, int64_t max_gpus = kMaxBuildGpus);

/// ValidateTopologyParams for every design on the same cluster (params.design
/// is ignored): what commands that build all designs (cost, compare, report)
/// check before building any. The error names the design that cannot be built.
void ValidateAllDesigns(const TopologyParams& params, int64_t max_gpus = kMaxBuildGpus);

/// Builds the graph. Requires ValidateTopologyParams(params) to pass.
Topology BuildTopology(const TopologyParams& params);

}  // namespace railsim::net
