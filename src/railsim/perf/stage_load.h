// Stage load: what one pipeline rank holds, read from the pipeline split
// (spec/pipeline_split.h): its transformer layers, which of them are MoE
// layers and which stay in bf16 under a low precision, and, for its
// activation memory, each virtual stage's layers weighted by the
// micro-batches in flight through it at the rank's peak. Time and memory
// take every rank from here, so an uneven split's slowest and fullest ranks
// are found wherever they are.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

/// A rank's place in the pipeline: the first also holds the embedding, the
/// last the final norm and output layer, the only one (pp == 1) both.
enum class Stage { kFirst, kLast, kOnly, kMiddle };

/// The place of pipeline rank `rank` (0 <= rank < pp).
Stage StageOf(const spec::Strategy& s, int rank);

/// Forward chunks (a micro-batch through one virtual stage) whose
/// activations pipeline rank r holds at its peak: under 1F1B pp - r; with
/// interleaving and group size N (s.group_size()), Megatron-Core's warm-up
/// of 2 (pp - r - 1) + (vp - 1) N chunks and one more in the steady state
/// (get_pp_rank_microbatches); at most the m vp chunks there are.
int64_t ChunksInFlight(const spec::Strategy& s, int rank);

struct StageLoad {
  int rank = 0;
  int ranks = 1;  ///< ranks rank, rank + 1, ... this load stands for (FoldedStageLoads; 1 in StageLoads)
  Stage stage = Stage::kOnly;
  int layers = 0;           ///< transformer layers over all the rank's virtual stages
  int moe_layers = 0;       ///< of those, MoE layers (0 for a dense model)
  int bf16_layers = 0;      ///< of those, kept in bf16 under a low precision (0 in bf16)
  int bf16_moe_layers = 0;  ///< of the bf16 ones, MoE layers
  int window_layers = 0;    ///< of all, sliding-window attention layers (spec::ModelSpec::window_layers)
  /// The four counts before window_layers with each virtual stage's layers counted once per
  /// micro-batch in flight through it at the peak (Megatron-Core's schedule
  /// runs N micro-batches through virtual stage 0, then N through stage 1,
  /// ...; the in-flight chunks are the first ChunksInFlight of that order).
  /// With equal virtual stages: ChunksInFlight / vp x the count.
  double in_flight_layers = 0, in_flight_moe_layers = 0, in_flight_bf16_layers = 0, in_flight_bf16_moe_layers = 0;
};

/// Every pipeline rank's load, rank 0 first. Requires a strategy that passed
/// spec::ValidateStrategy for `m` (the split exists and the micro-batches
/// are known).
std::vector<StageLoad> StageLoads(const spec::ModelSpec& m, const spec::Strategy& s);

/// StageLoads with each run of consecutive ranks that hold the same layers
/// (the same count, MoE, bf16 and windowed layers in every virtual stage)
/// folded into its first rank, `ranks` counting the run. The first rank of a
/// run has the most micro-batches in flight of the run (ChunksInFlight falls
/// with the rank), so it has the run's peak memory, and every rank of the
/// run takes the same time: the slowest and fullest rank, and the sum of
/// the stages' times, are found in a few loads instead of pp (the search
/// evaluates every strategy this way; an even split of a dense model folds
/// to at most four).
std::vector<StageLoad> FoldedStageLoads(const spec::ModelSpec& m, const spec::Strategy& s);

/// The fields of a strategy that StageLoads reads (pipeline size, virtual
/// stages, group size, micro-batches, precision, bf16 layers and the split's
/// flags): two strategies with equal keys have equal loads for every model.
/// The search keeps the loads of each key it has met (a few hundred in a
/// search of tens of thousands of strategies) and computes them once.
struct StageLoadsKey {
  int pp = 1, vp = 1;
  int64_t group_size = 1, microbatches = 1;
  spec::Precision precision = spec::Precision::kBf16;
  int bf16_layers_at_start = -1, bf16_layers_at_end = -1;
  int decoder_first_pipeline_num_layers = 0, decoder_last_pipeline_num_layers = 0;
  bool account_for_embedding = false, account_for_loss = false;
  auto operator<=>(const StageLoadsKey&) const = default;
};
StageLoadsKey StageLoadsKeyOf(const spec::Strategy& s);

}  // namespace railsim::perf
