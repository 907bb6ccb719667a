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

namespace {

// What one virtual stage of a rank holds: equal layouts take equal time and
// memory for equal micro-batches in flight.
struct ChunkLayout {
  int layers = 0, window = 0;
  ChunkKinds kinds;
  bool operator==(const ChunkLayout& o) const {
    return layers == o.layers && window == o.window && kinds.moe == o.kinds.moe && kinds.bf16 == o.kinds.bf16 &&
           kinds.bf16_moe == o.kinds.bf16_moe;
  }
};

std::vector<StageLoad> Loads(const spec::ModelSpec& m, const spec::Strategy& s, bool fold) {
  const std::vector<spec::LayerRange> chunks = spec::PipelineChunks(s, m.num_layers);
  std::vector<StageLoad> loads;
  loads.reserve(fold ? 4 : size_t(s.pp));
  std::vector<ChunkLayout> layout(size_t(s.vp)), previous;
  for (int r = 0; r < s.pp; ++r) {
    for (int v = 0; v < s.vp; ++v) {
      const spec::LayerRange chunk = chunks[size_t(v) * size_t(s.pp) + size_t(r)];
      layout[size_t(v)] = {chunk.count, m.WindowLayersIn(chunk.first, chunk.count), KindsOf(m, s, chunk)};
    }
    const Stage stage = StageOf(s, r);
    // Only middle ranks fold: the first and last hold the embedding and the
    // output layer.
    if (fold && stage == Stage::kMiddle && loads.back().stage == Stage::kMiddle && layout == previous) {
      ++loads.back().ranks;
      continue;
    }
    StageLoad& load = loads.emplace_back();
    load.rank = r;
    load.stage = stage;
    const std::vector<int64_t> in_flight = InFlightPerVirtualStage(s, r);
    for (int v = 0; v < s.vp; ++v) {
      const ChunkLayout& chunk = layout[size_t(v)];
      const double times = double(in_flight[size_t(v)]);
      load.layers += chunk.layers;
      load.moe_layers += chunk.kinds.moe;
      load.bf16_layers += chunk.kinds.bf16;
      load.bf16_moe_layers += chunk.kinds.bf16_moe;
      load.window_layers += chunk.window;
      load.in_flight_layers += times * chunk.layers;
      load.in_flight_moe_layers += times * chunk.kinds.moe;
      load.in_flight_bf16_layers += times * chunk.kinds.bf16;
      load.in_flight_bf16_moe_layers += times * chunk.kinds.bf16_moe;
    }
    std::swap(layout, previous);
    layout.resize(size_t(s.vp));
  }
  return loads;
}

}  // namespace

std::vector<StageLoad> StageLoads(const spec::ModelSpec& m, const spec::Strategy& s) { return Loads(m, s, false); }

std::vector<StageLoad> FoldedStageLoads(const spec::ModelSpec& m, const spec::Strategy& s) {
  return Loads(m, s, true);
}

StageLoadsKey StageLoadsKeyOf(const spec::Strategy& s) {
  return {s.pp,
          s.vp,
          s.group_size(),
          s.num_microbatches(),
          s.precision,
          s.bf16_layers_at_start,
          s.bf16_layers_at_end,
          s.decoder_first_pipeline_num_layers,
          s.decoder_last_pipeline_num_layers,
          s.account_for_embedding_in_pipeline_split,
          s.account_for_loss_in_pipeline_split};
}

}  // namespace railsim::perf
