// Where a strategy's communication groups sit on the cluster, under the
// job's placement (spec/placement.h): the layouts the iteration-time model
// times its collectives on, every group's members for the traffic analysis,
// and the per-parallelism check (inside one HB domain, on one rail, across
// rails).
//
// Group kinds, in Megatron-Core's terms; the attention's grid (spec/placement.h)
// unless the expert layers' is named:
//   tp         tensor-parallel group (dims tp)
//   cp         context-parallel ring (dims cp), in cp order
//   ep         expert-parallel group (the experts' dims ep): the dispatch's
//   pp         pipeline (dims pp), in stage order
//   dp         dense gradient reduction: data x context parallel (cp, dp)
//   expert-dp  expert gradient reduction (the experts' dims dp: the
//              tp x cp x dp / (ep x etp) ranks holding the same experts)
//   embedding  first and last pipeline stage (tied word embeddings)
//   dp-shard   hybrid sharding: runs of fsdp_shard_group_size consecutive dp
//              group members (the whole dp group without hybrid sharding)
//   dp-replica hybrid sharding: the members holding the same shard
//   etp        expert tensor-parallel group (the experts' dims tp): the
//              all-gather and reduce-scatter around the routed experts
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "railsim/comm/collective.h"
#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

enum class GroupKind : uint8_t { kTp, kCp, kEp, kPp, kDp, kExpertDp, kEmbedding, kDpShard, kDpReplica, kEtp };
constexpr int kGroupKinds = 10;
const char* GroupKindName(GroupKind g);

/// Whether the expert layers' tensor-parallel groups are the attention's
/// (etp == tp and the order gives both the same stride): then the routed
/// experts' all-gathers and reduce-scatters are counted on the tp groups, as
/// for a dense MLP.
bool ExpertTpIsTp(const PerfContext& c, const spec::Strategy& s);

/// The layout each kind's collectives are timed on: the default placement's
/// strided layouts exactly; for other placements the layout of the group
/// that crosses the most HB domains (comm::LayoutOfMembers).
struct ParallelGroups {
  std::array<comm::GroupLayout, kGroupKinds> layout;
  const comm::GroupLayout& operator[](GroupKind g) const { return layout[int(g)]; }
};

/// Requires a strategy valid for c.model on c.gpus and a placement valid for it.
ParallelGroups PlaceGroups(const PerfContext& c, const spec::Strategy& s);

/// Every group of one kind: `count` groups of `size` members, members of
/// group g at [g * size, (g + 1) * size) of `gpus` (in the order the
/// algorithms visit them: stage order for pp and embedding, cp order for cp,
/// ascending GPU id otherwise), and the pipeline stage each group belongs to
/// (-1 for pp and embedding, which span stages).
struct GroupMembers {
  int64_t size = 1;
  int64_t count = 0;
  std::vector<int64_t> gpus;
  std::vector<int32_t> stage;
};

GroupMembers MembersOf(const PerfContext& c, const spec::Strategy& s, GroupKind kind);

/// Where the groups of one kind sit: all inside one HB domain, spanning
/// domains but each member-domain on the same rails (rail-aligned), or
/// crossing rails; and how many of the groups do the worst of that.
enum class GroupSpread : uint8_t { kNone, kHbDomain, kSameRail, kCrossRail };
const char* GroupSpreadName(GroupSpread s);  ///< "none" (size 1), "hb_domain", "same_rail", "cross_rail"

struct GroupCheck {
  GroupKind kind;
  int64_t size = 1;
  int64_t groups = 0;
  GroupSpread spread = GroupSpread::kNone;  ///< the worst group's
  int64_t groups_crossing_rails = 0;
  int64_t groups_spanning_domains = 0;
};

/// The check of every kind the strategy uses (size > 1), in GroupKind order;
/// etp only when its groups are not the tp groups (ExpertTpIsTp).
std::vector<GroupCheck> CheckPlacement(const PerfContext& c, const spec::Strategy& s);

}  // namespace railsim::perf
