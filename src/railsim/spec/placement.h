// Placement: which GPU each parallel rank runs on.
//
// A rank is a tuple (tp, cp, dp, pp) of indices; its expert-parallel index is
// dp % ep (expert-parallel groups are runs of consecutive dp ranks, as in
// Megatron-Core), and the rest of dp, dp / ep, is the expert-data-parallel
// index. A placement is either
//  - an order: the five dimensions tp, cp, ep, dp (meaning dp / ep), pp from
//    fastest to slowest; GPU id = the mixed-radix number of the indices in
//    that order. Megatron-LM's default is tp-cp-ep-dp-pp (tp fastest), which
//    the performance model assumed before placements existed; or
//  - an explicit map from every rank tuple to a GPU, read from a JSON file
//    (a permutation of 0..N-1).
// HB domain of a GPU = id / K, its rail = id % K, as everywhere in railsim.
// The GPUs are the job's: when it uses only N GPUs of each HB domain
// (--gpus-per-domain), its GPU i sits in domain i / N on rail i % N (K = N
// here), and comm::DomainUse gives its id in the built cluster; so ranks fill
// the N used GPUs of each domain in the order's sequence.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/strategy.h"

namespace railsim::spec {

enum class Dim : uint8_t { kTp, kCp, kEp, kDp, kPp };
constexpr int kDims = 5;
const char* DimName(Dim d);

/// Dimensions fastest first.
struct RankOrder {
  std::array<Dim, kDims> fastest_first = {Dim::kTp, Dim::kCp, Dim::kEp, Dim::kDp, Dim::kPp};
  bool is_default() const { return *this == RankOrder{}; }
  bool operator==(const RankOrder&) const = default;
  /// "tp-cp-ep-dp-pp".
  std::string Name() const;
};

/// Parses "tp-cp-dp-pp", "dp-tp-pp", ...: dimension names joined by '-',
/// each at most once, tp, dp and pp required. A missing cp goes right after
/// tp, a missing ep right before dp (it is part of dp), so an order that
/// leaves them out means what Megatron-LM would do. Throws Error(where).
RankOrder ParseRankOrder(std::string_view text, const std::string& where);

/// Degree of each dimension for strategy `s` (ep's is s.ep, dp's s.dp / s.ep).
std::array<int64_t, kDims> DimDegrees(const Strategy& s);

/// Distance in GPU ids between consecutive indices of dimension `d`
/// (the product of the degrees of the dimensions before it in `order`).
int64_t DimStride(const RankOrder& order, const Strategy& s, Dim d);

/// An explicit rank -> GPU map for one set of degrees.
struct PlacementMap {
  int64_t tp = 1, cp = 1, ep = 1, dp = 1, pp = 1;
  /// GPU of rank (tp_i, cp_i, dp_i, pp_i), indexed by the Megatron rank
  /// tp_i + tp (cp_i + cp (dp_i + dp pp_i)).
  std::vector<int32_t> gpu_of_rank;
  int64_t gpus() const { return tp * cp * dp * pp; }
};

/// Parses a placement file:
///   {"degrees": {"tp": 4, "cp": 1, "ep": 1, "dp": 2, "pp": 2},
///    "ranks": [{"tp": 0, "cp": 0, "dp": 0, "pp": 0, "gpu": 5}, ...]}
/// cp and ep default to 1 (degrees) and 0 (indices). Every rank tuple must
/// appear once and the GPUs must be a permutation of 0..N-1. Throws Error
/// whose `where` is the JSON pointer of the fault ("/ranks/17/gpu").
PlacementMap ParsePlacementJson(std::string_view text);

/// The JSON form ParsePlacementJson reads back.
std::string PlacementJson(const PlacementMap& map);

/// A placement as the user gave it: an order, or a map (shared: it can be
/// large and strategies copy it).
struct Placement {
  RankOrder order;
  std::shared_ptr<const PlacementMap> map;  ///< set for a placement file
  bool is_default() const { return !map && order.is_default(); }
  /// "tp-cp-ep-dp-pp" or "file".
  std::string Name() const;
};

/// Reads --placement: an order, or the path of a placement file (anything
/// containing '.' or '/', or naming an existing file). Throws Error(flag).
Placement LoadPlacement(const std::string& text, const std::string& flag);

/// Throws Error(flag) unless a placement map was made for the degrees of `s`.
void ValidatePlacement(const Placement& p, const Strategy& s, const std::string& flag);

/// The indices (by Dim: tp, cp, ep, dp / ep, pp) of Megatron rank `rank`
/// (tp_i + tp (cp_i + cp (dp_i + dp pp_i))).
std::array<int64_t, kDims> RankIndices(int64_t rank, const Strategy& s);

/// GPU of the rank with indices `index` (by Dim: tp, cp, ep, dp / ep, pp).
int64_t GpuOf(const Placement& p, const Strategy& s, const std::array<int64_t, kDims>& index);

/// The whole map, by Megatron rank (as PlacementMap::gpu_of_rank): for the
/// traffic analysis, which walks every rank.
std::vector<int32_t> GpuOfEveryRank(const Placement& p, const Strategy& s);

}  // namespace railsim::spec
