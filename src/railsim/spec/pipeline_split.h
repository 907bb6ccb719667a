// Pipeline split: which of the model's transformer layers each pipeline rank,
// and each of its virtual stages, holds. The one place railsim decides it:
// time, memory, traffic and the launcher export all read PipelineChunks.
//
// Megatron-Core's rules (megatron/core/transformer/transformer_block.py,
// get_num_layers_to_build; transformer_layer.py, get_transformer_layer_offset;
// transformer_config.py and training/arguments.py check them):
// - --decoder-first-pipeline-num-layers F, --decoder-last-pipeline-num-layers
//   L: the first (last) rank holds F (L) layers and the other ranks, the
//   "middle" ones, share the rest evenly; with vp virtual stages per rank each
//   rank's layers split evenly over them (F, L and a middle rank's share are
//   multiples of vp).
// - --account-for-embedding-in-pipeline-split, --account-for-loss-in-pipeline-split:
//   the input embedding (the loss) counts as one layer, so n + 1 (or n + 2)
//   layers split evenly over the pp x vp virtual stages, and the very first
//   (last) virtual stage holds one transformer layer fewer (possibly none:
//   the embedding alone).
// - neither: n / (pp x vp) layers each. When pp does not divide n (railsim
//   goes beyond Megatron-Core here, which refuses it) the remainder goes one
//   each to the middle ranks first, then to the first rank; a rank's layers
//   split over its virtual stages as evenly as they can, the earlier ones
//   taking one more.
// Virtual stage v of rank r is the model's (v pp + r)-th chunk: chunks hold
// consecutive layers in that order (so with interleaving a rank's layers are
// not consecutive).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "railsim/spec/strategy.h"

namespace railsim::spec {

/// Model layers [first, first + count).
struct LayerRange {
  int first = 0;
  int count = 0;
};

/// The pp x vp virtual stages' layers in model order: element v pp + r is
/// virtual stage v of pipeline rank r. Requires CheckPipelineSplit(s,
/// num_layers) to find no problem (ValidateDegrees checks it).
std::vector<LayerRange> PipelineChunks(const Strategy& s, int num_layers);

/// Transformer layers pipeline rank `rank` holds over all its virtual
/// stages. Same requirement; 0 <= rank < pp.
int LayersOnRank(const Strategy& s, int num_layers, int rank);

/// What stops `s` from splitting `num_layers` layers: the flag to blame and
/// what was expected. Requires 1 <= pp <= num_layers and vp >= 1 with vp == 1
/// unless pp >= 2 (ValidateDegrees checks these first).
struct SplitProblem {
  const char* flag;
  std::string message;
};
std::optional<SplitProblem> CheckPipelineSplit(const Strategy& s, int num_layers);

/// True when the strategy gives any of Megatron-Core's four split flags.
bool HasSplitFlags(const Strategy& s);

}  // namespace railsim::spec
