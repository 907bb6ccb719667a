// Collective algorithms as plans (comm/plan.h): which phases each algorithm
// runs on a group, so that its analytic time and its flows come from one
// description.
//
//   ring          one ring through every member (NCCL ring); with several
//                 members per HB domain, one ring per local rank (channels)
//                 so each domain boundary is crossed on every NIC
//   tree          double binary tree: reduce up both trees, broadcast down
//   hierarchical  reduce-scatter inside each HB domain, the collective across
//                 domains on each rail, all-gather inside the domain
//   in-switch     reduction in the NVLink switches (NVLink SHARP); one HB domain,
//                 or across domains where the NIC switches reduce too (NCCL's
//                 NVLS with CollNet: NVLink SHARP, then InfiniBand SHARP)
//   direct        all-to-all from every member to every other over the network
//                 (on Rail-only, cross-rail pairs go NVLink first, per flow)
//   forwarded     all-to-all forwarded through the HB domain (Rail-only): first
//                 to the GPU on the destination rail, then along that rail;
//                 sequential, or pipelined in chunks
//   nvls-tree     NCCL's NVLSTree all-reduce: NVLink SHARP inside each domain
//                 and a double binary tree of head GPUs across domains
//   pat           NCCL's PAT all-gather and reduce-scatter (one member per HB
//                 domain): logarithmic latency, three quarters of the ring's
//                 bandwidth; needs the system's NCCL constants ("pat")
//   collnet       NCCL's CollNetDirect all-reduce on systems whose NIC switches
//                 reduce (InfiniBand SHARP; the preset's "nccl" has "collnet"):
//                 scatter-reduce and gather in each domain over NVLink, each
//                 member's shard reduced in its rail's switches, pipelined
//   auto          what NCCL picks. With the system's NCCL constants
//                 (ClusterFabrics::nccl): NCCL's least estimated time over
//                 ring, tree, collnet, in-switch (NVLS), nvls-tree and pat and the protocols LL, LL128
//                 and Simple (comm/nccl_model.h), per call size. Without
//                 them: the fastest of ring, hierarchical and in-switch, with
//                 the latency of the cheaper of ring and tree steps.
//
// Under NCCL's model `ring` and `tree` are NCCL's: rail-local rings (one per
// member of a domain) and a chain inside each domain with a double binary
// tree across domains; their latency and protocol factors are NCCL's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/comm/nccl_model.h"
#include "railsim/comm/plan.h"

namespace railsim::comm {

enum class Op : uint8_t { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kBroadcast, kSendRecv };
enum class Algorithm : uint8_t {
  kAuto, kRing, kTree, kHierarchical, kInSwitch, kDirect, kForwarded, kNvlsTree, kPat, kCollNet
};

const char* OpName(Op op);
const char* AlgorithmName(Algorithm a);
std::optional<Op> ParseOp(std::string_view name);
std::optional<Algorithm> ParseAlgorithm(std::string_view name);
std::vector<std::string> OpNames();
std::vector<std::string> AlgorithmNames();

/// Chunks a pipelined forwarded all-to-all is cut into.
constexpr int kDefaultForwardChunks = 16;
constexpr int kMaxForwardChunks = 1024;

struct PlanOptions {
  bool pipelined = false;  ///< forwarded all-to-all: pipelined in chunks
  int chunks = kDefaultForwardChunks;
  /// NCCL's protocol (NCCL_PROTO); auto = the least estimated time. Used
  /// only under NCCL's model (ClusterFabrics::nccl enabled).
  Protocol protocol = Protocol::kAuto;
};

/// The plan of `op` with algorithm `a` on every group of `group`, moving
/// `bytes` per member (all-reduce, reduce-scatter, all-gather, broadcast: the
/// buffer; all-to-all: what each member sends in total, bytes / size to each
/// member including itself; send-recv: the message). Returns nullopt when `a`
/// does not apply (in-switch outside one HB domain or without switch
/// reduction, direct across rails... see AlgorithmApplies).
/// When `analytic_s` is given it receives PlanTime of the returned plan.
std::optional<Plan> MakePlan(Op op, Algorithm a, double bytes, const GroupLayout& group,
                             const ClusterFabrics& c, const PlanOptions& options = {},
                             double* analytic_s = nullptr);

/// PlanTime of MakePlan(op, Algorithm::kAuto, ...) without building the
/// returned plan: the performance model's fast path.
double AutoTime(Op op, double bytes, const GroupLayout& group, const ClusterFabrics& c,
                const PlanOptions& options = {});

/// Why protocol `p` cannot run `op` with `a` on `group` (no NCCL model,
/// LL128 disabled, an algorithm that runs only Simple), or empty when it can.
std::string ProtocolInapplicable(Op op, Algorithm a, Protocol p, const GroupLayout& group, const ClusterFabrics& c);

/// Why `a` cannot run `op` on `group`, or empty when it can.
std::string AlgorithmInapplicable(Op op, Algorithm a, const GroupLayout& group, const ClusterFabrics& c);

}  // namespace railsim::comm
