#include "railsim/perf/groups.h"

#include <algorithm>
#include <cassert>

#include "railsim/spec/placement.h"

namespace railsim::perf {
namespace {

using spec::Dim;

constexpr const char* kGroupKindNames[kGroupKinds] = {"tp",        "cp",       "ep",        "pp",        "dp",
                                                      "expert-dp", "embedding", "dp-shard", "dp-replica", "etp"};
constexpr const char* kSpreadNames[] = {"none", "hb_domain", "same_rail", "cross_rail"};

// Which rank dimensions a group kind spans (embedding: pp, first and last
// only), and in which grid.
std::vector<Dim> DimsOf(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp: return {Dim::kTp};
    case GroupKind::kCp: return {Dim::kCp};
    case GroupKind::kEp: return {Dim::kEp};
    case GroupKind::kPp: return {Dim::kPp};
    case GroupKind::kDp: return {Dim::kCp, Dim::kDp};
    case GroupKind::kExpertDp: return {Dim::kDp};
    case GroupKind::kEmbedding: return {Dim::kPp};
    case GroupKind::kDpShard:
    case GroupKind::kDpReplica: return {Dim::kCp, Dim::kDp};
    case GroupKind::kEtp: return {Dim::kTp};
  }
  return {};
}

spec::Layers GridOf(GroupKind kind) {
  const bool expert = kind == GroupKind::kEp || kind == GroupKind::kExpertDp || kind == GroupKind::kEtp;
  return expert ? spec::Layers::kExpert : spec::Layers::kAttention;
}

bool Contains(const std::vector<Dim>& dims, Dim d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); }

bool IsHybridKind(GroupKind kind) { return kind == GroupKind::kDpShard || kind == GroupKind::kDpReplica; }

bool IsChain(GroupKind kind) {
  return kind == GroupKind::kPp || kind == GroupKind::kCp || kind == GroupKind::kEmbedding;
}

// Layout of an order placement's groups of `dims` (all congruent): strided
// when the dims that matter follow each other in the order, else read off
// group 0's members.
comm::GroupLayout OrderLayout(const PerfContext& c, const spec::Strategy& s, GroupKind kind) {
  const int64_t k = c.fabrics.hb_domain_size;
  const spec::RankOrder& order = c.placement.order;
  const spec::Layers grid = GridOf(kind);
  const std::array<int64_t, spec::kDims> degree = spec::DimDegrees(s, grid);
  const std::vector<Dim> dims = DimsOf(kind);
  if (kind == GroupKind::kEmbedding) {
    return comm::LayoutOf(2, (s.pp - 1) * spec::DimStride(order, s, Dim::kPp), k);
  }
  int64_t size = 1;
  for (Dim d : dims) size *= degree[int(d)];
  if (size == 1) return comm::LayoutOf(1, 1, k);
  // The dims of size > 1, in the order's sequence; contiguous there means an
  // evenly spaced group.
  int first = -1, last = -1, inside = 0;
  for (int i = 0; i < spec::kDims; ++i) {
    Dim d = order.fastest_first[i];
    if (degree[int(d)] == 1) continue;
    if (Contains(dims, d)) {
      if (first < 0) first = i;
      last = i;
      ++inside;
    }
  }
  int between = 0;  // non-unit dims of the group's span
  for (int i = first; i <= last; ++i) between += degree[int(order.fastest_first[i])] > 1 ? 1 : 0;
  if (between == inside) return comm::LayoutOf(size, spec::DimStride(order, s, order.fastest_first[first], grid), k);
  std::vector<int64_t> members;
  members.reserve(size_t(size));
  std::array<int64_t, spec::kDims> idx{};
  for (int64_t j = 0; j < size; ++j) {
    int64_t rest = j;
    for (Dim d : dims) {
      idx[int(d)] = rest % degree[int(d)];
      rest /= degree[int(d)];
    }
    members.push_back(spec::GpuOf(c.placement, s, idx, grid));
  }
  std::sort(members.begin(), members.end());
  return comm::LayoutOfMembers(members.data(), size, k);
}

// The layout the worst group of a placement file gives: most domains, then
// not rail-aligned.
comm::GroupLayout WorstLayout(const PerfContext& c, const spec::Strategy& s, GroupKind kind) {
  const int64_t k = c.fabrics.hb_domain_size;
  GroupMembers m = MembersOf(c, s, kind);
  if (m.count == 0 || m.size <= 1) return comm::LayoutOf(1, 1, k);
  comm::GroupLayout worst;
  bool have = false;
  for (int64_t g = 0; g < m.count; ++g) {
    comm::GroupLayout l = comm::LayoutOfMembers(m.gpus.data() + g * m.size, m.size, k);
    auto badness = [](const comm::GroupLayout& x) { return std::pair(x.domains, x.rail_aligned ? 0 : 1); };
    if (!have || badness(l) > badness(worst)) worst = l;
    have = true;
  }
  return worst;
}

}  // namespace

const char* GroupKindName(GroupKind g) { return kGroupKindNames[int(g)]; }

bool ExpertTpIsTp(const PerfContext& c, const spec::Strategy& s) {
  if (s.expert_tp() != s.tp) return false;
  // A placement file maps Megatron ranks, whose tp digit comes first in both
  // grids; an order gives the two tp dimensions the product of the degrees
  // before them, which differ only where cp, ep or dp precede tp.
  if (c.placement.map) return true;
  return spec::DimStride(c.placement.order, s, Dim::kTp) ==
         spec::DimStride(c.placement.order, s, Dim::kTp, spec::Layers::kExpert);
}
const char* GroupSpreadName(GroupSpread s) { return kSpreadNames[int(s)]; }

ParallelGroups PlaceGroups(const PerfContext& c, const spec::Strategy& s) {
  const int64_t k = c.fabrics.hb_domain_size;
  ParallelGroups out;
  const int64_t pp_distance = int64_t{s.tp} * s.cp * s.dp;
  if (c.placement.is_default()) {
    // Megatron's order: the strided layouts the model always assumed. Groups
    // of one member keep the default (size 1) layout; this runs for every
    // strategy the search times.
    out.layout[int(GroupKind::kTp)] = comm::LayoutOf(s.tp, 1, k);
    out.layout[int(GroupKind::kDp)] = comm::LayoutOf(s.dp * s.cp, s.tp, k);
    if (s.cp > 1) out.layout[int(GroupKind::kCp)] = comm::LayoutOf(s.cp, s.tp, k);
    // The experts' grid: etp fastest, then ep, then expert-dp (the expert
    // rank generator's etp-ep-edp-pp).
    const int64_t etp = s.expert_tp();
    if (s.ep > 1) out.layout[int(GroupKind::kEp)] = comm::LayoutOf(s.ep, etp, k);
    if (c.model.is_moe()) {
      out.layout[int(GroupKind::kExpertDp)] = comm::LayoutOf(s.expert_dp(), etp * s.ep, k);
      if (etp > 1) out.layout[int(GroupKind::kEtp)] = comm::LayoutOf(etp, 1, k);
    }
    if (s.hybrid_sharding()) {
      const int64_t g = s.shard_group();
      out.layout[int(GroupKind::kDpShard)] = comm::LayoutOf(g, s.tp, k);
      out.layout[int(GroupKind::kDpReplica)] = comm::LayoutOf(s.dp * s.cp / g, s.tp * g, k);
    }
    if (s.pp > 1) {
      out.layout[int(GroupKind::kPp)] = comm::LayoutOf(s.pp, pp_distance, k);
      out.layout[int(GroupKind::kEmbedding)] = comm::LayoutOf(2, (s.pp - 1) * pp_distance, k);
    }
    return out;
  }
  for (int i = 0; i < kGroupKinds; ++i) {
    const GroupKind kind = GroupKind(i);
    if (kind == GroupKind::kEmbedding && s.pp == 1) {
      out.layout[i] = comm::LayoutOf(1, 1, k);  // no embedding sync without pp
      continue;
    }
    if (IsHybridKind(kind)) {
      // Parts of the dp group: read off the members (only with hybrid sharding).
      out.layout[i] = s.hybrid_sharding() ? WorstLayout(c, s, kind) : comm::LayoutOf(1, 1, k);
      continue;
    }
    out.layout[i] = c.placement.map ? WorstLayout(c, s, kind) : OrderLayout(c, s, kind);
  }
  return out;
}

GroupMembers MembersOf(const PerfContext& c, const spec::Strategy& s, GroupKind kind) {
  GroupMembers out;
  const int64_t n = s.gpus();
  const spec::Layers grid = GridOf(kind);
  const std::array<int64_t, spec::kDims> degree = spec::DimDegrees(s, grid);
  const std::vector<Dim> dims = DimsOf(kind);
  const bool embedding = kind == GroupKind::kEmbedding;
  if (embedding && s.pp == 1) return out;
  int64_t size = 1;
  for (Dim d : dims) size *= degree[int(d)];
  if (embedding) size = 2;
  // Hybrid sharding splits each dp group (members in rank order) into runs
  // of g: a shard group is one run, a replica group the same place in each.
  const int64_t dp_size = size, g = s.shard_group();
  if (kind == GroupKind::kDpShard) size = g;
  if (kind == GroupKind::kDpReplica) size = dp_size / g;
  out.size = size;
  out.count = embedding ? n / s.pp : n / size;
  out.gpus.assign(size_t(out.count * size), -1);
  out.stage.assign(size_t(out.count), -1);
  const std::vector<int32_t> gpu_of_rank = spec::GpuOfEveryRank(c.placement, s, grid);
  for (int64_t rank = 0; rank < n; ++rank) {
    const std::array<int64_t, spec::kDims> idx = spec::RankIndices(rank, s, grid);
    int64_t member = 0, scale = 1;
    int64_t group = 0, group_scale = 1;
    for (int d = 0; d < spec::kDims; ++d) {
      if (Contains(dims, Dim(d))) {
        member += idx[d] * scale;
        scale *= degree[d];
      } else {
        group += idx[d] * group_scale;
        group_scale *= degree[d];
      }
    }
    if (embedding) {
      if (member != 0 && member != s.pp - 1) continue;
      member = member == 0 ? 0 : 1;
    }
    if (kind == GroupKind::kDpShard) {
      group = group * (dp_size / g) + member / g;
      member %= g;
    } else if (kind == GroupKind::kDpReplica) {
      group = group * g + member % g;
      member /= g;
    }
    out.gpus[size_t(group * size + member)] = gpu_of_rank[size_t(rank)];
    if (!Contains(dims, Dim::kPp)) out.stage[size_t(group)] = int32_t(idx[int(Dim::kPp)]);
  }
  if (!IsChain(kind)) {
    for (int64_t g = 0; g < out.count; ++g) {
      std::sort(out.gpus.begin() + g * size, out.gpus.begin() + (g + 1) * size);
    }
  }
  return out;
}

std::vector<GroupCheck> CheckPlacement(const PerfContext& c, const spec::Strategy& s) {
  const int64_t k = c.fabrics.hb_domain_size;
  std::vector<GroupCheck> out;
  for (int i = 0; i < kGroupKinds; ++i) {
    const GroupKind kind = GroupKind(i);
    if (kind == GroupKind::kExpertDp && !c.model.is_moe()) continue;
    if (kind == GroupKind::kEtp && (!c.model.is_moe() || ExpertTpIsTp(c, s))) continue;
    if (kind == GroupKind::kEmbedding && c.model.untie_embeddings_and_output_weights) continue;
    if (IsHybridKind(kind) && !s.hybrid_sharding()) continue;
    GroupMembers m = MembersOf(c, s, kind);
    if (m.count == 0 || m.size <= 1) continue;
    GroupCheck check;
    check.kind = kind;
    check.size = m.size;
    check.groups = m.count;
    for (int64_t g = 0; g < m.count; ++g) {
      const int64_t* gpus = m.gpus.data() + g * m.size;
      bool spans = false, cross = false;
      for (int64_t j = 1; j < m.size; ++j) {
        if (gpus[j] / k != gpus[0] / k) spans = true;
      }
      if (spans && IsChain(kind)) {
        // A chain talks to its neighbours: cross-rail when two of them sit
        // in different domains on different rails.
        for (int64_t j = 0; j + 1 < m.size + (kind == GroupKind::kCp ? 1 : 0); ++j) {
          const int64_t a = gpus[j], b = gpus[(j + 1) % m.size];
          cross = cross || (a / k != b / k && a % k != b % k);
        }
      } else if (spans) {
        // A collective is rail-aligned when every domain holds members on
        // the same rails, so that the part across domains runs rail by rail.
        cross = !comm::LayoutOfMembers(gpus, m.size, k).rail_aligned;
      }
      check.groups_spanning_domains += spans ? 1 : 0;
      check.groups_crossing_rails += cross ? 1 : 0;
      GroupSpread spread = cross ? GroupSpread::kCrossRail : spans ? GroupSpread::kSameRail : GroupSpread::kHbDomain;
      check.spread = std::max(check.spread, spread);
    }
    out.push_back(check);
  }
  return out;
}

}  // namespace railsim::perf
