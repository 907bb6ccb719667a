#include "railsim/spec/pipeline_split.h"

#include <fmt/format.h>

namespace railsim::spec {
namespace {

constexpr const char* kFirstFlag = "--decoder-first-pipeline-num-layers";
constexpr const char* kLastFlag = "--decoder-last-pipeline-num-layers";
constexpr const char* kEmbeddingFlag = "--account-for-embedding-in-pipeline-split";
constexpr const char* kLossFlag = "--account-for-loss-in-pipeline-split";

bool HasEdgeLayers(const Strategy& s) {
  return s.decoder_first_pipeline_num_layers > 0 || s.decoder_last_pipeline_num_layers > 0;
}

// Ranks other than the first and last whose layers are given.
int MiddleRanks(const Strategy& s) {
  return s.pp - (s.decoder_first_pipeline_num_layers > 0 ? 1 : 0) - (s.decoder_last_pipeline_num_layers > 0 ? 1 : 0);
}

// railsim's split without flags: layers on rank r over all its virtual stages.
int DefaultLayersOnRank(const Strategy& s, int n, int r) {
  if (s.pp == 1) return n;
  const int base = n / s.pp, extra = n % s.pp;
  if (r == 0) return base + (extra > s.pp - 2 ? 1 : 0);
  if (r == s.pp - 1) return base;
  return base + (r <= extra ? 1 : 0);
}

// Layers on virtual stage v of rank r.
int ChunkLayers(const Strategy& s, int n, int r, int v) {
  if (HasEdgeLayers(s)) {
    const int first = s.decoder_first_pipeline_num_layers, last = s.decoder_last_pipeline_num_layers;
    if (r == 0 && first > 0) return first / s.vp;
    if (r == s.pp - 1 && last > 0) return last / s.vp;
    return (n - first - last) / MiddleRanks(s) / s.vp;
  }
  if (s.account_for_embedding_in_pipeline_split || s.account_for_loss_in_pipeline_split) {
    const bool embedding = s.account_for_embedding_in_pipeline_split, loss = s.account_for_loss_in_pipeline_split;
    const int chunks = s.pp * s.vp, chunk = v * s.pp + r;
    const int slots = (n + (embedding ? 1 : 0) + (loss ? 1 : 0)) / chunks;
    if (s.pp == 1) return n;  // the one stage holds everything; the slots are moot
    return slots - (embedding && chunk == 0 ? 1 : 0) - (loss && chunk == chunks - 1 ? 1 : 0);
  }
  const int on_rank = DefaultLayersOnRank(s, n, r);
  return on_rank / s.vp + (v < on_rank % s.vp ? 1 : 0);
}

std::optional<SplitProblem> CheckEdgeLayers(const Strategy& s, int n) {
  const int first = s.decoder_first_pipeline_num_layers, last = s.decoder_last_pipeline_num_layers;
  const char* given = first > 0 ? kFirstFlag : kLastFlag;
  if (s.account_for_embedding_in_pipeline_split || s.account_for_loss_in_pipeline_split) {
    return SplitProblem{given, fmt::format("cannot be combined with {} or {} (Megatron-Core refuses both)",
                                           kEmbeddingFlag, kLossFlag)};
  }
  if (s.pp < 2) return SplitProblem{given, fmt::format("applies to --pp 2 or more, got {}", s.pp)};
  const int middles = MiddleRanks(s), rest = n - first - last;
  if (rest < 0 || (middles == 0 && rest != 0)) {
    return SplitProblem{given, fmt::format("expected the first and last stages' layers to add up to {} num_layers "
                                           "{} with --pp {}, got {} + {} = {}",
                                           middles == 0 ? "exactly" : "less than", n, s.pp, first, last,
                                           first + last)};
  }
  if (middles > 0 && (rest == 0 || rest % middles != 0)) {
    return SplitProblem{given, fmt::format("expected the {} layers left ({} - {} - {}) to split evenly over the {} "
                                           "middle stages, at least one each",
                                           rest, n, first, last, middles)};
  }
  if (s.vp > 1) {
    for (auto [flag, layers] : {std::pair{kFirstFlag, first}, std::pair{kLastFlag, last}}) {
      if (layers > 0 && layers % s.vp != 0) {
        return SplitProblem{flag, fmt::format("expected a multiple of --vp {} (each virtual stage holds the same "
                                              "share), got {}", s.vp, layers)};
      }
    }
    if (middles > 0 && (rest / middles) % s.vp != 0) {
      return SplitProblem{"--vp", fmt::format("expected a divisor of the {} layers on each middle stage, got {}",
                                              rest / middles, s.vp)};
    }
  }
  return std::nullopt;
}

std::optional<SplitProblem> CheckAccounted(const Strategy& s, int n) {
  const bool embedding = s.account_for_embedding_in_pipeline_split, loss = s.account_for_loss_in_pipeline_split;
  const int slots = n + (embedding ? 1 : 0) + (loss ? 1 : 0);
  const std::string what = fmt::format("{}{}{}", n, embedding ? " + the embedding" : "", loss ? " + the loss" : "");
  if (slots % s.pp != 0) {
    return SplitProblem{embedding ? kEmbeddingFlag : kLossFlag,
                        fmt::format("expected --pp to divide the {} layers of the split ({}), got {}", slots, what,
                                    s.pp)};
  }
  if ((slots / s.pp) % s.vp != 0) {
    return SplitProblem{"--vp", fmt::format("expected a divisor of the {} layers per stage of the split ({} over {} "
                                            "stages), got {}", slots / s.pp, what, s.pp, s.vp)};
  }
  return std::nullopt;
}

}  // namespace

bool HasSplitFlags(const Strategy& s) {
  return HasEdgeLayers(s) || s.account_for_embedding_in_pipeline_split || s.account_for_loss_in_pipeline_split;
}

std::optional<SplitProblem> CheckPipelineSplit(const Strategy& s, int n) {
  for (auto [flag, layers] : {std::pair{kFirstFlag, s.decoder_first_pipeline_num_layers},
                              std::pair{kLastFlag, s.decoder_last_pipeline_num_layers}}) {
    if (layers < 0) return SplitProblem{flag, fmt::format("expected a positive integer, got {}", layers)};
  }
  if (HasEdgeLayers(s)) return CheckEdgeLayers(s, n);
  if (s.account_for_embedding_in_pipeline_split || s.account_for_loss_in_pipeline_split) return CheckAccounted(s, n);
  if (s.vp == 1) return std::nullopt;
  if (n % s.pp == 0 && (n / s.pp) % s.vp != 0) {
    return SplitProblem{"--vp", fmt::format("expected a divisor of the layers per stage {}, got {}", n / s.pp, s.vp)};
  }
  const int smallest = DefaultLayersOnRank(s, n, s.pp - 1);
  if (smallest < s.vp) {
    return SplitProblem{"--vp", fmt::format("expected at most {} virtual stages (each needs a layer; {} layers over {} "
                                            "stages), got {}; Megatron-Core's {} and {} or {} and {} split "
                                            "otherwise",
                                            smallest, n, s.pp, s.vp, kEmbeddingFlag, kLossFlag, kFirstFlag,
                                            kLastFlag)};
  }
  return std::nullopt;
}

std::vector<LayerRange> PipelineChunks(const Strategy& s, int num_layers) {
  std::vector<LayerRange> chunks(static_cast<size_t>(s.pp) * static_cast<size_t>(s.vp));
  int first = 0;
  for (int v = 0; v < s.vp; ++v) {
    for (int r = 0; r < s.pp; ++r) {
      const int count = ChunkLayers(s, num_layers, r, v);
      chunks[size_t(v) * size_t(s.pp) + size_t(r)] = {first, count};
      first += count;
    }
  }
  return chunks;
}

int LayersOnRank(const Strategy& s, int num_layers, int rank) {
  int layers = 0;
  for (int v = 0; v < s.vp; ++v) layers += ChunkLayers(s, num_layers, rank, v);
  return layers;
}

}  // namespace railsim::spec
