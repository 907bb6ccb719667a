// An MoE layer's token dispatch (and, in reverse, combine) over its
// expert-parallel group, as a plan (comm/plan.h): its analytic time and its
// flows come from one description, as for the collectives. The group's layout
// is the expert layers' ep group where the job's placement puts it (MoE
// parallel folding: spec/placement.h's expert grid, perf::PlaceGroups), the
// same one traffic, `collective --group ep` and the simulator use.
//
// Each token goes to moe_router_topk experts, spread evenly over the group's
// members and HB domains; with node-limited routing (max_domains M, as
// DeepSeek-V3's device-limited routing) a token first picks M domains and
// then its experts among theirs. Two algorithms:
//   direct     every copy from the token's GPU to its expert's GPU, any NIC
//              to any NIC (low-latency kernels); on Rail-only a copy for
//              another rail crosses NVLink first to the GPU on that rail;
//   forwarded  over the NIC once per domain a token reaches, to the GPU of
//              the same local rank there (rail-aligned), then over NVLink to
//              the experts' GPUs in that domain (DeepEP's high-throughput
//              kernels). Only domains reached cost NIC bytes, so top-k > 1
//              and node-limited routing send fewer NIC bytes than direct.
//              As DeepEP's normal kernels do, the NIC and NVLink stages run
//              pipelined in `chunks` pieces (the NVLink forwarder passes on
//              each chunk of tokens as it arrives): the time is the slower
//              stage plus one chunk of the faster one, not their sum.
//              chunks = 1 runs them one after the other (--schedule
//              sequential, the reading of the paper's comparison).
// Flows are expected values: a pair's bytes are the mean over tokens of what
// that pair carries. Load imbalance scales every flow by the busiest
// member's load over the mean (the all-to-all ends with its busiest member).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/comm/plan.h"
#include "railsim/spec/strategy.h"

namespace railsim::comm {

/// auto (forwarded on Rail-only when the group spans domains, else direct),
/// forwarded, direct: the strategy's setting (spec/strategy.h).
using MoeAllToAll = spec::MoeAllToAll;
using spec::MoeAllToAllName;

/// Chunks DeepEP's normal kernels pipeline a dispatch in (railsim's default;
/// the same count as the pipelined forwarded all-to-all, comm/algorithms.h).
constexpr int kDefaultMoeChunks = 16;

/// Bytes a token row of `hidden` values takes in a dispatch of precision `p`:
/// 2 per value in bf16; in fp8 1 per value plus a 4-byte fp32 scale per 128
/// values (DeepEP's per-token, per-128-channel FP8 scales).
double DispatchBytesPerToken(int64_t hidden, spec::MoeDispatchPrecision p);

struct MoeDispatch {
  double tokens = 0;           ///< token rows per group member
  double bytes_per_token = 0;  ///< hidden size x element bytes
  int experts = 0;
  int topk = 0;
  int max_domains = 0;   ///< node-limited routing: domains a token may reach (0 = any)
  double imbalance = 1;  ///< busiest member's load over the mean, >= 1
  /// Forwarded: NIC and NVLink stages pipelined in this many chunks (1 = in
  /// sequence). Clamped to comm::kMaxForwardChunks.
  int chunks = kDefaultMoeChunks;
};

/// Probability that one token reaches a given HB domain of a group spanning
/// `domains` domains (experts evenly spread): 1 - C(E - E/D, k) / C(E, k),
/// and with node-limited routing M < D: (M / D) (1 - C((M - 1) E/D, k) /
/// C(M E/D, k)).
double DomainReachProbability(const MoeDispatch& d, int64_t domains);

/// The algorithm `a` resolves to on cluster `c` for group `g`.
MoeAllToAll ResolveMoeAllToAll(MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c);

/// The plan of one dispatch over every EP group of layout `g`. When
/// `analytic_s` is given it receives PlanTime of the plan.
Plan MoeDispatchPlan(const MoeDispatch& d, MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c,
                     double* analytic_s = nullptr);

/// PlanTime of MoeDispatchPlan.
double MoeDispatchTime(const MoeDispatch& d, MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c);

}  // namespace railsim::comm
