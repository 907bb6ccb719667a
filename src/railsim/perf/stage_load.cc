#include "railsim/perf/stage_load.h"

#include <algorithm>

#include "railsim/spec/pipeline_split.h"

namespace railsim::perf {
namespace {

// The layers of `chunk` that are MoE, bf16 and both.
struct ChunkKinds {
  int moe = 0, bf16 = 0, bf16_moe = 0;
};

ChunkKinds KindsOf(const spec::ModelSpec& m, const spec::Strategy& s, spec::LayerRange chunk) {
  ChunkKinds k;
  k.moe = m.MoeLayersIn(chunk.first, chunk.count);
  if (s.precision == spec::Precision::kBf16) return k;
  const int n = m.num_layers, start = s.Bf16LayersAtStart(n), end = s.Bf16LayersAtEnd(n);
  for (auto [lo, hi] : {std::pair{0, start}, std::pair{n - end, n}}) {
    const int a = std::max(lo, chunk.first), b = std::min(hi, chunk.first + chunk.count);
    if (b <= a) continue;
    k.bf16 += b - a;
    k.bf16_moe += m.MoeLayersIn(a, b - a);
  }
  return k;
}

// Micro-batches in flight through each virtual stage of rank `rank` at its
// peak: the first ChunksInFlight chunks of the schedule's forward order,
// which takes the micro-batches in groups of N (the last group may be
// shorter) and runs each group through virtual stage 0, then 1, ...
std::vector<int64_t> InFlightPerVirtualStage(const spec::Strategy& s, int rank) {
  std::vector<int64_t> counts(size_t(s.vp), 0);
  const int64_t m = s.num_microbatches(), n = s.vp == 1 ? m : s.group_size();
  int64_t left = ChunksInFlight(s, rank);
  for (int64_t group_start = 0; left > 0 && group_start < m; group_start += n) {
    const int64_t group = std::min(n, m - group_start);
    for (int v = 0; v < s.vp && left > 0; ++v) {
      const int64_t take = std::min(group, left);
      counts[size_t(v)] += take;
      left -= take;
    }
  }
  return counts;
}

}  // namespace

Stage StageOf(const spec::Strategy& s, int rank) {
  if (s.pp == 1) return Stage::kOnly;
  if (rank == 0) return Stage::kFirst;
  return rank == s.pp - 1 ? Stage::kLast : Stage::kMiddle;
}

int64_t ChunksInFlight(const spec::Strategy& s, int rank) {
  const int64_t m = s.num_microbatches();
  if (s.pp == 1) return 1;
  if (s.vp == 1) return std::min<int64_t>(m, s.pp - rank);
  return std::min<int64_t>(m * s.vp, 2 * (s.pp - rank - 1) + int64_t{s.vp - 1} * s.group_size() + 1);
}

std::vector<StageLoad> StageLoads(const spec::ModelSpec& m, const spec::Strategy& s) {
  const std::vector<spec::LayerRange> chunks = spec::PipelineChunks(s, m.num_layers);
  std::vector<StageLoad> loads(size_t(s.pp));
  for (int r = 0; r < s.pp; ++r) {
    StageLoad& load = loads[size_t(r)];
    load.rank = r;
    load.stage = StageOf(s, r);
    const std::vector<int64_t> in_flight = InFlightPerVirtualStage(s, r);
    for (int v = 0; v < s.vp; ++v) {
      const spec::LayerRange chunk = chunks[size_t(v) * size_t(s.pp) + size_t(r)];
      const ChunkKinds k = KindsOf(m, s, chunk);
      const double times = double(in_flight[size_t(v)]);
      load.layers += chunk.count;
      load.moe_layers += k.moe;
      load.bf16_layers += k.bf16;
      load.bf16_moe_layers += k.bf16_moe;
      load.window_layers += m.WindowLayersIn(chunk.first, chunk.count);
      load.in_flight_layers += times * chunk.count;
      load.in_flight_moe_layers += times * k.moe;
      load.in_flight_bf16_layers += times * k.bf16;
      load.in_flight_bf16_moe_layers += times * k.bf16_moe;
    }
  }
  return loads;
}

}  // namespace railsim::perf
