// The communication of one training iteration as a list of calls: which
// collective (or point-to-point pattern) each parallelism runs, on which
// group kind, with how many bytes, and how many times per iteration on the
// groups of each pipeline stage. The traffic analysis (study/traffic.h)
// turns these into GPU pairs through comm/'s plans.
//
// The counts follow what perf/estimate.cc times, call by call:
//   tp   per layer and micro-batch, 2 all-reduces forward and 2 backward (with
//        sequence parallelism an all-gather and a reduce-scatter each), 2 more
//        forward when fully recomputed; embedding 1 all-reduce (reduce-scatter
//        with sp); output layer 1 all-reduce backward (sp: 1 all-gather
//        forward, 1 reduce-scatter backward). When the routed experts have
//        tensor-parallel groups of their own (perf::ExpertTpIsTp), an MoE
//        layer's MLP half runs on the etp groups with etp / tp of the bytes
//        (none with etp = 1)
//   cp   per layer and micro-batch, the K/V ring: cp - 1 steps forward and
//        2 (cp - 1) backward (again forward when fully recomputed)
//   ep   per MoE layer and micro-batch, dispatch and combine, forward and
//        backward: 4 all-to-alls (6 when fully recomputed)
//   pp   per micro-batch, the activation to the next stage and its gradient
//        back, vp times per stage boundary (interleaving also wraps from the
//        last stage to the first vp - 1 times)
//   dp   per iteration, gradient all-reduce (reduce-scatter and parameter
//        all-gather with the distributed optimizer), dense (dp groups) and
//        expert (expert-dp groups); with
//        --data-parallel-sharding gradients a reduce-scatter per micro-batch,
//        with full also two parameter all-gathers per micro-batch (forward
//        and backward) and none after the optimizer step; with hybrid
//        sharding they run in the shard groups, and each reduce-scatter is
//        followed by an all-reduce of the shard across the replica groups
//   embedding  per iteration, the tied word embedding's all-reduce between
//        the first and last stage
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "railsim/comm/algorithms.h"
#include "railsim/comm/moe.h"
#include "railsim/perf/context.h"
#include "railsim/perf/groups.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

enum class Parallelism : uint8_t { kTp, kCp, kEp, kPp, kDp, kEmbedding };
constexpr int kParallelisms = 6;
/// "tp", "cp", "ep", "pp", "dp", "embedding".
const char* ParallelismName(Parallelism p);

/// Point-to-point patterns over a group's members in order.
enum class PointToPoint : uint8_t {
  kNone,         ///< a collective (CommCall::op)
  kNext,         ///< member j to j + 1, j < size - 1
  kPrevious,     ///< member j + 1 to j
  kLastToFirst,  ///< member size - 1 to 0
  kFirstToLast,  ///< member 0 to size - 1
  kRing,         ///< member j to (j + 1) mod size
};

struct CommCall {
  Parallelism parallelism;
  GroupKind group;
  comm::Op op = comm::Op::kSendRecv;
  PointToPoint p2p = PointToPoint::kNone;
  /// Collectives: per member, as comm::MakePlan takes it; point-to-point:
  /// per message.
  double bytes = 0;
  /// Calls per iteration by the groups of pipeline stage i (size pp), or a
  /// single entry for group kinds that span stages (pp, embedding).
  std::vector<double> times;
  /// Expert parallelism's dispatch and combine: what they send, and how
  /// (comm/moe.h); `bytes` is then the uniform all-to-all's equivalent.
  std::optional<comm::MoeDispatch> moe;
  comm::MoeAllToAll moe_algorithm = comm::MoeAllToAll::kAuto;
};

/// Requires a strategy valid for c.model on c.gpus (and for c.placement).
std::vector<CommCall> IterationComm(const PerfContext& c, const spec::Strategy& s);

/// The plan a collective call runs on groups laid out as `layout` (the MoE
/// dispatch plan for expert parallelism, else the auto algorithm's), with
/// its analytic time in `analytic_s` when given. Requires p2p == kNone.
comm::Plan CallPlan(const CommCall& call, const comm::GroupLayout& layout, const comm::ClusterFabrics& c,
                    double* analytic_s = nullptr);

}  // namespace railsim::perf
