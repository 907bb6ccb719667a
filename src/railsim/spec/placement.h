// Placement: which GPU each parallel rank runs on.
//
// Megatron-Core lays out two rank grids over the same GPUs (MoE parallel
// folding: Liu et al., "MoE Parallel Folding", arXiv 2504.14960; Megatron-Core's
// parallel_state.initialize_model_parallel builds decoder_rank_generator and
// expert_decoder_rank_generator from one `order`, NVIDIA/Megatron-LM
// megatron/core/parallel_state.py at 00caa53):
//  - the attention and dense layers': a rank is a tuple (tp, cp, dp, pp) of
//    indices (ep has degree 1 there);
//  - the expert layers': a tuple (etp, ep, edp, pp), with the expert
//    tensor-parallel degree etp, the expert-parallel degree ep and the expert
//    data-parallel degree edp = tp*cp*dp / (ep*etp) (cp has degree 1 there;
//    etp takes tp's place, edp dp's).
// Both are arrays indexed by Dim (tp, cp, ep, dp, pp), with the degrees of
// Layers' grid. A placement is either
//  - an order: the five dimensions from fastest to slowest; a GPU id is the
//    mixed-radix number of a tuple's indices in that order, in either grid.
//    Megatron-LM's default is tp-cp-ep-dp-pp (tp fastest): tp-cp-dp-pp for the
//    attention, etp-ep-edp-pp for the experts; or
//  - an explicit map from Megatron's global ranks (a tuple's number in the
//    default order, in either grid) to GPUs, read from a JSON file that names
//    each rank by its attention tuple (a permutation of 0..N-1).
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
/// tp, a missing ep right before dp, so an order that leaves them out means
/// what Megatron-LM would do. Throws Error(where).
RankOrder ParseRankOrder(std::string_view text, const std::string& where);

/// The two rank grids over the same GPUs: the attention and dense layers'
/// and the routed experts'.
enum class Layers : uint8_t { kAttention, kExpert };

/// Degree of each dimension in `layers`' grid: {tp, cp, 1, dp, pp} for the
/// attention, {etp, 1, ep, edp, pp} for the experts (s.expert_tp(),
/// s.expert_dp()). Requires ep x etp dividing tp x cp x dp.
std::array<int64_t, kDims> DimDegrees(const Strategy& s, Layers layers = Layers::kAttention);

/// Distance in GPU ids between consecutive indices of dimension `d` in
/// `layers`' grid (the product of the degrees of the dimensions before it in
/// `order`).
int64_t DimStride(const RankOrder& order, const Strategy& s, Dim d, Layers layers = Layers::kAttention);

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
/// cp and ep default to 1 (degrees) and 0 (indices); ep must divide tp x cp x
/// dp (the experts fold onto the same ranks). Every rank tuple must
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

/// Throws Error(flag) unless a placement map was made for the degrees of `s`,
/// and, when the expert layers have a layout of their own (ep > 1 or etp !=
/// tp), unless an order keeps Megatron-Core's two checks: with pp > 1 an
/// order that does not end in pp needs edp == dp, and both grids must put a
/// pipeline's stages on the same GPUs (the same pp stride).
void ValidatePlacement(const Placement& p, const Strategy& s, const std::string& flag);

/// The indices (by Dim) in `layers`' grid of Megatron rank `rank`: its digits
/// in the default order with that grid's degrees (attention: tp_i + tp (cp_i
/// + cp (dp_i + dp pp_i)); experts: etp_i + etp (ep_i + ep (edp_i + edp
/// pp_i))).
std::array<int64_t, kDims> RankIndices(int64_t rank, const Strategy& s, Layers layers = Layers::kAttention);

/// GPU of the rank with indices `index` (by Dim) in `layers`' grid. The one
/// placement function: every group's members (perf/groups.h), the traffic
/// analysis and the collective command's groups come from it.
int64_t GpuOf(const Placement& p, const Strategy& s, const std::array<int64_t, kDims>& index,
              Layers layers = Layers::kAttention);

/// The whole map of `layers`' grid, by Megatron rank: for the traffic
/// analysis, which walks every rank.
std::vector<int32_t> GpuOfEveryRank(const Placement& p, const Strategy& s, Layers layers = Layers::kAttention);

}  // namespace railsim::spec
