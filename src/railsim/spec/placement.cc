#include "railsim/spec/placement.h"

#include <algorithm>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/spec/json_reader.h"

namespace railsim::spec {
namespace {

constexpr const char* kDimNames[kDims] = {"tp", "cp", "ep", "dp", "pp"};

std::optional<Dim> ParseDim(std::string_view name) {
  for (int i = 0; i < kDims; ++i) {
    if (name == kDimNames[i]) return Dim(i);
  }
  return std::nullopt;
}

// Largest degree a placement file may state: the model's own GPU bound.
constexpr int64_t kMaxDegree = kMaxModelGpus;

}  // namespace

const char* DimName(Dim d) { return kDimNames[int(d)]; }

std::string RankOrder::Name() const {
  std::string out;
  for (Dim d : fastest_first) {
    if (!out.empty()) out += '-';
    out += DimName(d);
  }
  return out;
}

RankOrder ParseRankOrder(std::string_view text, const std::string& where) {
  std::vector<Dim> named;
  std::vector<std::string> all(std::begin(kDimNames), std::end(kDimNames));
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('-', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view token = text.substr(start, end - start);
    std::optional<Dim> d = ParseDim(token);
    if (!d) {
      throw Error(where, fmt::format("{} is not a parallel dimension{}; an order names tp, cp, ep, dp, pp "
                                     "fastest first, such as tp-cp-dp-pp, or is a placement file (.json)",
                                     Quoted(token), DidYouMean(token, all)));
    }
    if (std::find(named.begin(), named.end(), *d) != named.end()) {
      throw Error(where, fmt::format("order {} names {} twice", Quoted(text), DimName(*d)));
    }
    named.push_back(*d);
    start = end + 1;
  }
  for (Dim required : {Dim::kTp, Dim::kDp, Dim::kPp}) {
    if (std::find(named.begin(), named.end(), required) == named.end()) {
      throw Error(where, fmt::format("order {} does not place {}; it needs tp, dp and pp (cp and ep are "
                                     "optional)",
                                     Quoted(text), DimName(required)));
    }
  }
  auto insert_missing = [&](Dim d, Dim anchor, bool after) {
    if (std::find(named.begin(), named.end(), d) != named.end()) return;
    auto at = std::find(named.begin(), named.end(), anchor);
    named.insert(after ? at + 1 : at, d);
  };
  insert_missing(Dim::kCp, Dim::kTp, true);
  insert_missing(Dim::kEp, Dim::kDp, false);
  RankOrder order;
  std::copy(named.begin(), named.end(), order.fastest_first.begin());
  return order;
}

std::array<int64_t, kDims> DimDegrees(const Strategy& s, Layers layers) {
  if (layers == Layers::kExpert) return {s.expert_tp(), 1, s.ep, s.expert_dp(), s.pp};
  return {s.tp, s.cp, 1, s.dp, s.pp};
}

int64_t DimStride(const RankOrder& order, const Strategy& s, Dim d, Layers layers) {
  const std::array<int64_t, kDims> degree = DimDegrees(s, layers);
  int64_t stride = 1;
  for (Dim e : order.fastest_first) {
    if (e == d) break;
    stride *= degree[int(e)];
  }
  return stride;
}

PlacementMap ParsePlacementJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader root(doc, "");
  PlacementMap m;
  {
    JsonReader deg = root.Object("degrees");
    m.tp = deg.Int("tp", 1, kMaxDegree);
    m.cp = deg.IntOr("cp", 1, 1, kMaxDegree);
    m.ep = deg.IntOr("ep", 1, 1, kMaxDegree);
    m.dp = deg.Int("dp", 1, kMaxDegree);
    m.pp = deg.Int("pp", 1, kMaxDegree);
    deg.Finish();
    if (m.tp * m.cp > kMaxModelGpus || m.tp * m.cp * m.dp > kMaxModelGpus ||
        m.tp * m.cp * m.dp * m.pp > kMaxModelGpus) {
      throw Error("/degrees", fmt::format("tp x cp x dp x pp must be at most {} GPUs", kMaxModelGpus));
    }
    if ((m.tp * m.cp * m.dp) % m.ep != 0) {
      throw Error("/degrees/ep", fmt::format("ep {} must divide tp x cp x dp = {}", m.ep, m.tp * m.cp * m.dp));
    }
  }
  const int64_t n = m.gpus();
  const nlohmann::json& ranks = root.Array("ranks");
  root.Finish();
  if (int64_t(ranks.size()) != n) {
    throw Error("/ranks", fmt::format("expected one entry per rank, {} (tp x cp x dp x pp), found {}", n,
                                      ranks.size()));
  }
  m.gpu_of_rank.assign(size_t(n), -1);
  std::vector<int32_t> rank_of_gpu(size_t(n), -1);
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string pointer = fmt::format("/ranks/{}", i);
    JsonReader r(ranks[i], pointer);
    int64_t tp = r.Int("tp", 0, m.tp - 1);
    int64_t cp = r.IntOr("cp", 0, 0, m.cp - 1);
    int64_t dp = r.Int("dp", 0, m.dp - 1);
    int64_t pp = r.Int("pp", 0, m.pp - 1);
    int64_t gpu = r.Int("gpu", 0, n - 1);
    r.Finish();
    const int64_t rank = tp + m.tp * (cp + m.cp * (dp + m.dp * pp));
    if (m.gpu_of_rank[size_t(rank)] >= 0) {
      throw Error(pointer, fmt::format("rank (tp {}, cp {}, dp {}, pp {}) is placed twice", tp, cp, dp, pp));
    }
    if (rank_of_gpu[size_t(gpu)] >= 0) {
      throw Error(pointer + "/gpu", fmt::format("gpu {} is given to two ranks; the GPUs must be a "
                                                "permutation of 0..{}",
                                                gpu, n - 1));
    }
    m.gpu_of_rank[size_t(rank)] = int32_t(gpu);
    rank_of_gpu[size_t(gpu)] = int32_t(rank);
  }
  return m;
}

std::string PlacementJson(const PlacementMap& m) {
  std::string out = fmt::format("{{\"degrees\": {{\"tp\": {}, \"cp\": {}, \"ep\": {}, \"dp\": {}, \"pp\": {}}},\n",
                                m.tp, m.cp, m.ep, m.dp, m.pp);
  out += " \"ranks\": [";
  for (int64_t rank = 0; rank < m.gpus(); ++rank) {
    int64_t tp = rank % m.tp, cp = rank / m.tp % m.cp, dp = rank / (m.tp * m.cp) % m.dp;
    int64_t pp = rank / (m.tp * m.cp * m.dp);
    out += fmt::format("{}\n  {{\"tp\": {}, \"cp\": {}, \"dp\": {}, \"pp\": {}, \"gpu\": {}}}",
                       rank ? "," : "", tp, cp, dp, pp, m.gpu_of_rank[size_t(rank)]);
  }
  out += "\n ]}\n";
  return out;
}

std::string Placement::Name() const { return map ? "file" : order.Name(); }

Placement LoadPlacement(const std::string& text, const std::string& flag) {
  Placement p;
  const bool file = text.find('.') != std::string::npos || text.find('/') != std::string::npos ||
                    PathExists(text);
  if (!file) {
    p.order = ParseRankOrder(text, flag);
    return p;
  }
  std::string contents = ReadTextFile(text, flag);
  try {
    p.map = std::make_shared<PlacementMap>(ParsePlacementJson(contents));
  } catch (const Error& e) {
    throw e.WithContext(flag + " " + text);
  }
  return p;
}

namespace {

void ValidateMapDegrees(const Placement& p, const Strategy& s, const std::string& flag) {
  const PlacementMap& m = *p.map;
  const std::array<std::pair<const char*, std::pair<int64_t, int64_t>>, 5> checks = {{
      {"tp", {m.tp, s.tp}}, {"cp", {m.cp, s.cp}}, {"ep", {m.ep, s.ep}}, {"dp", {m.dp, s.dp}}, {"pp", {m.pp, s.pp}},
  }};
  for (const auto& [name, degrees] : checks) {
    if (degrees.first != degrees.second) {
      throw Error(flag, fmt::format("the placement file is for {} {} but the strategy has {} {}", name,
                                    degrees.first, name, degrees.second));
    }
  }
}

// Megatron-Core's checks of one order for both grids (initialize_model_parallel:
// "When not using pp-last rank ordering, the data parallel size of the
// attention and moe layers must be the same", and the pipeline groups of the
// two rank generators must be equal, which for mixed-radix grids over the same
// GPUs means the same pp stride).
void ValidateFoldedOrder(const RankOrder& order, const Strategy& s, const std::string& flag) {
  if (s.ep == 1 && s.expert_tp() == s.tp) return;
  if (s.pp > 1 && order.fastest_first.back() != Dim::kPp && s.expert_dp() != s.dp) {
    throw Error(flag, fmt::format("order {} does not end in pp, so Megatron-Core needs the expert data-parallel "
                                  "size tp x cp x dp / (ep x etp) = {} to equal dp {}; put pp last",
                                  order.Name(), s.expert_dp(), s.dp));
  }
  const int64_t attention = DimStride(order, s, Dim::kPp), expert = DimStride(order, s, Dim::kPp, Layers::kExpert);
  if (attention != expert) {
    throw Error(flag, fmt::format("order {} puts the expert layers' pipeline stages {} GPUs apart and the "
                                  "attention's {}; Megatron-Core needs the same pipeline groups; put pp last",
                                  order.Name(), expert, attention));
  }
}

}  // namespace

void ValidatePlacement(const Placement& p, const Strategy& s, const std::string& flag) {
  if (!p.map) return ValidateFoldedOrder(p.order, s, flag);
  ValidateMapDegrees(p, s, flag);
}

std::array<int64_t, kDims> RankIndices(int64_t rank, const Strategy& s, Layers layers) {
  const std::array<int64_t, kDims> degree = DimDegrees(s, layers);
  std::array<int64_t, kDims> index{};
  for (int d = 0; d < kDims; ++d) {  // Dim's order is the default order, tp fastest
    index[size_t(d)] = rank % degree[size_t(d)];
    rank /= degree[size_t(d)];
  }
  return index;
}

int64_t GpuOf(const Placement& p, const Strategy& s, const std::array<int64_t, kDims>& index, Layers layers) {
  const std::array<int64_t, kDims> degree = DimDegrees(s, layers);
  if (p.map) {
    int64_t rank = 0;
    for (int d = kDims - 1; d >= 0; --d) rank = rank * degree[size_t(d)] + index[size_t(d)];
    return p.map->gpu_of_rank[size_t(rank)];
  }
  int64_t gpu = 0, stride = 1;
  for (Dim d : p.order.fastest_first) {
    gpu += index[int(d)] * stride;
    stride *= degree[int(d)];
  }
  return gpu;
}

std::vector<int32_t> GpuOfEveryRank(const Placement& p, const Strategy& s, Layers layers) {
  if (p.map) return p.map->gpu_of_rank;
  const int64_t n = s.gpus();
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t rank = 0; rank < n; ++rank) {
    out[size_t(rank)] = int32_t(GpuOf(p, s, RankIndices(rank, s, layers), layers));
  }
  return out;
}

}  // namespace railsim::spec
