#include "railsim/spec/strategy.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/spec/pipeline_split.h"

namespace railsim::spec {
namespace {

// Returns "" when valid, else "flag\tmessage". One implementation serves the
// throwing validator (edge) and the search's silent filter.
std::string Fail(const char* flag, std::string message) { return std::string(flag) + "\t" + message; }

// The low-precision settings: FP8-only weights with an FP8 format, bf16
// layers with a low-precision one and within the model.
std::string CheckPrecision(const ModelSpec& m, const Strategy& s) {
  const bool low = s.precision != Precision::kBf16;
  if (s.low_precision_params && !low) {
    return Fail("--fp8-params", "applies to --precision fp8 or mxfp8 (and --fp4-params to fp4), got bf16");
  }
  for (auto [flag, n] : {std::pair{"--num-layers-at-start-in-bf16", s.bf16_layers_at_start},
                         std::pair{"--num-layers-at-end-in-bf16", s.bf16_layers_at_end}}) {
    if (n == -1) continue;
    if (!low) return Fail(flag, "applies to --precision fp8, mxfp8 or fp4 (with bf16 every layer is bf16)");
    if (n < 0 || n > m.num_layers) {
      return Fail(flag, fmt::format("expected an integer in [0, num_layers {}], got {}", m.num_layers, n));
    }
  }
  const int start = std::max(s.bf16_layers_at_start, 0), end = std::max(s.bf16_layers_at_end, 0);
  if (start + end > m.num_layers) {
    return Fail("--num-layers-at-end-in-bf16", fmt::format("expected at most num_layers {} bf16 layers at the start "
                                                           "and end together, got {} + {}", m.num_layers, start, end));
  }
  return "";
}

// The degrees against the model alone (no cluster size, no data parallelism).
std::string CheckDegrees(const ModelSpec& m, const Strategy& s) {
  auto fail = Fail;
  if (s.tp < 1) return fail("--tp", fmt::format("expected a positive integer, got {}", s.tp));
  if (s.pp < 1) return fail("--pp", fmt::format("expected a positive integer, got {}", s.pp));
  if (s.cp < 1) return fail("--cp", fmt::format("expected a positive integer, got {}", s.cp));
  if (s.ep < 1) return fail("--ep", fmt::format("expected a positive integer, got {}", s.ep));
  if (s.vp < 1) return fail("--vp", fmt::format("expected a positive integer, got {}", s.vp));
  if (m.num_attention_heads % s.tp != 0) {
    return fail("--tp", fmt::format("expected a divisor of num_attention_heads {}, got {}",
                                    m.num_attention_heads, s.tp));
  }
  if (m.num_query_groups % s.tp != 0) {
    return fail("--tp", fmt::format("expected a divisor of num_query_groups {}, got {}",
                                    m.num_query_groups, s.tp));
  }
  if (m.ffn_hidden_size % s.tp != 0) {
    return fail("--tp", fmt::format("expected a divisor of ffn_hidden_size {}, got {}",
                                    m.ffn_hidden_size, s.tp));
  }
  if (s.pp > m.num_layers) {
    return fail("--pp", fmt::format("expected at most num_layers {} stages, got {}", m.num_layers, s.pp));
  }
  if (s.vp > 1 && s.pp < 2) return fail("--vp", "expected 1 unless --pp is at least 2 (interleaving needs stages)");
  if (std::optional<SplitProblem> problem = CheckPipelineSplit(s, m.num_layers)) {
    return fail(problem->flag, problem->message);
  }
  if (s.cp > 1 && m.seq_length % (2 * s.cp) != 0) {
    return fail("--cp", fmt::format("expected 2 x cp to divide seq_length {}, got cp {}", m.seq_length, s.cp));
  }
  if (std::string problem = CheckPrecision(m, s); !problem.empty()) return problem;
  if (!m.is_moe() && s.ep != 1) return fail("--ep", "expected 1 for a dense model (num_experts is 0)");
  if (m.is_moe() && m.num_experts % s.ep != 0) {
    return fail("--ep", fmt::format("expected a divisor of num_experts {}, got {}", m.num_experts, s.ep));
  }
  const char* etp = "--expert-tensor-parallel-size";
  if (s.etp < 0) return fail(etp, fmt::format("expected a positive integer, got {}", s.etp));
  if (!m.is_moe() && s.expert_tp() != s.tp) {
    return fail(etp, "applies to MoE models only (num_experts is 0)");
  }
  if (m.is_moe() && m.moe_ffn_hidden_size % s.expert_tp() != 0) {
    return fail(etp, fmt::format("expected a divisor of moe_ffn_hidden_size {} (the experts' GEMMs split over "
                                 "it), got {}{}", m.moe_ffn_hidden_size, s.expert_tp(),
                                 s.etp == 0 ? " (tp, the default)" : ""));
  }
  return "";
}

// The MoE dispatch settings: within range for an MoE model, default for a
// dense one.
std::string CheckMoe(const ModelSpec& m, const Strategy& s) {
  auto fail = Fail;
  if (m.is_moe()) {
    if (!(s.moe_imbalance >= 1) || !(s.moe_imbalance <= kMaxMoeImbalance)) {
      return fail("--moe-imbalance", fmt::format("expected the busiest expert rank's load over the mean in [1, "
                                                 "{}], got {}", kMaxMoeImbalance, s.moe_imbalance));
    }
    if (s.moe_max_domains < 0) {
      return fail("--moe-max-domains", fmt::format("expected a positive number of HB domains, got {}",
                                                   s.moe_max_domains));
    }
    return "";
  }
  if (s.moe_imbalance != 1) return fail("--moe-imbalance", "applies to MoE models only (num_experts is 0)");
  if (s.moe_max_domains != 0) return fail("--moe-max-domains", "applies to MoE models only (num_experts is 0)");
  if (s.moe_overlap) return fail("--moe-overlap", "applies to MoE models only (num_experts is 0)");
  if (s.moe_dispatch_precision != MoeDispatchPrecision::kBf16) {
    return fail("--moe-dispatch-precision", "applies to MoE models only (num_experts is 0)");
  }
  if (s.moe_alltoall != MoeAllToAll::kAuto) {
    return fail("--moe-alltoall", "applies to MoE models only (num_experts is 0)");
  }
  return "";
}

// Megatron-Core's interleave group size: it raises unless pp <= N <= m, and
// unless the last group (m mod N micro-batches) is empty or at least pp long
// (a shorter one stalls on its own wrap-around).
std::string CheckGroupSize(const Strategy& s) {
  const int64_t n = s.microbatch_group_size_per_vp_stage;
  const char* flag = "--microbatch-group-size-per-virtual-pipeline-stage";
  if (n == 0) return "";
  if (s.vp == 1) return Fail(flag, fmt::format("applies to interleaving only (--vp > 1), got {}", n));
  const int64_t m = s.num_microbatches();
  if (n < s.pp || n > m) {
    return Fail(flag, fmt::format("expected an integer in [pp, micro-batches] = [{}, {}], got {}", s.pp, m, n));
  }
  if (m % n != 0 && m % n < s.pp) {
    return Fail(flag, fmt::format("expected the micro-batches {} mod N to be 0 or at least pp {}, got N {} "
                                  "(remainder {})", m, s.pp, n, m % n));
  }
  return "";
}

std::string Check(const ModelSpec& m, int64_t gpus, const Strategy& s) {
  auto fail = Fail;
  if (gpus < 1 || gpus > kMaxModelGpus) {
    return fail("--gpus", fmt::format("expected an integer in [1, {}], got {}", kMaxModelGpus, gpus));
  }
  if (std::string problem = CheckDegrees(m, s); !problem.empty()) return problem;
  if (s.dp < 1) return fail("--dp", fmt::format("expected a positive integer, got {}", s.dp));
  if (s.micro_batch < 1) {
    return fail("--micro-batch-size", fmt::format("expected a positive integer, got {}", s.micro_batch));
  }
  if (s.global_batch < 1 || s.global_batch > kMaxGlobalBatch) {
    return fail("--global-batch-size",
                fmt::format("expected an integer in [1, {}], got {}", kMaxGlobalBatch, s.global_batch));
  }
  // Products can overflow int64 only for absurd inputs; compare in doubles first.
  double product = double(s.tp) * double(s.pp) * double(s.dp) * double(s.cp);
  if (product != double(gpus) || s.gpus() != gpus) {
    return fail("--dp", fmt::format("expected tp x pp x dp x cp = --gpus {}, got {} x {} x {} x {} = {:.0f}",
                                    gpus, s.tp, s.pp, s.dp, s.cp, product));
  }
  if (double(s.dp) * double(s.micro_batch) > double(s.global_batch) ||
      s.global_batch % (s.dp * s.micro_batch) != 0) {
    return fail("--global-batch-size",
                fmt::format("expected a multiple of dp x micro-batch = {} x {}, got {}", s.dp,
                            s.micro_batch, s.global_batch));
  }
  if (s.vp > 1 && s.num_microbatches() % s.pp != 0) {
    return fail("--vp", fmt::format("interleaving needs the microbatches ({}) to be a multiple of pp {}",
                                    s.num_microbatches(), s.pp));
  }
  if (std::string problem = CheckGroupSize(s); !problem.empty()) return problem;
  if (s.tp_comm_overlap && (!s.sequence_parallel || s.tp < 2)) {
    return fail("--tp-comm-overlap", "requires --sequence-parallel with --tp > 1 (it overlaps the sequence-parallel "
                                     "all-gathers and reduce-scatters)");
  }
  if (s.fsdp_shard_group_size != 0) {
    const int64_t ranks = s.dp * s.cp;
    if (s.fsdp_shard_group_size < 1 || ranks % s.fsdp_shard_group_size != 0) {
      return fail("--fsdp-shard-group-size", fmt::format("expected a divisor of dp x cp = {}, got {}", ranks,
                                                         s.fsdp_shard_group_size));
    }
    if (s.dp_sharding == DpSharding::kNone) {
      return fail("--fsdp-shard-group-size", "requires --data-parallel-sharding (or --distributed-optimizer)");
    }
    if (m.is_moe()) {
      return fail("--fsdp-shard-group-size", "applies to dense models only (expert weights shard over their own "
                                             "data-parallel group)");
    }
  }
  if (m.is_moe()) {
    if (std::string problem = ExpertFoldingProblem(s); !problem.empty()) {
      return fail(s.expert_tp() != s.tp ? "--expert-tensor-parallel-size" : "--ep", problem);
    }
    if (s.tp > 1 && !s.sequence_parallel) {
      return fail("--sequence-parallel", "required for MoE models with --tp > 1 (as in Megatron-Core)");
    }
  }
  return CheckMoe(m, s);
}

void ThrowIf(const std::string& problem) {
  if (problem.empty()) return;
  size_t tab = problem.find('\t');
  throw Error(problem.substr(0, tab), problem.substr(tab + 1));
}

}  // namespace

const char* RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone: return "none";
    case Recompute::kSelective: return "selective";
    case Recompute::kFull: return "full";
  }
  return "?";
}

const char* AttentionName(Attention a) { return a == Attention::kFlash ? "flash" : "classic"; }

const char* CudaGraphImplName(CudaGraphImpl c) {
  switch (c) {
    case CudaGraphImpl::kNone: return "none";
    case CudaGraphImpl::kLocal: return "local";
    case CudaGraphImpl::kTransformerEngine: return "transformer_engine";
  }
  return "?";
}

constexpr CudaGraphImpl kAllCudaGraphImpls[] = {CudaGraphImpl::kNone, CudaGraphImpl::kLocal,
                                                 CudaGraphImpl::kTransformerEngine};

std::optional<CudaGraphImpl> CudaGraphImplFromName(std::string_view name) {
  for (CudaGraphImpl c : kAllCudaGraphImpls) {
    if (name == CudaGraphImplName(c)) return c;
  }
  return std::nullopt;
}

std::vector<std::string> CudaGraphImplNames() {
  std::vector<std::string> names;
  for (CudaGraphImpl c : kAllCudaGraphImpls) names.push_back(CudaGraphImplName(c));
  return names;
}

const char* PrecisionName(Precision p) {
  switch (p) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp8: return "fp8";
    case Precision::kMxfp8: return "mxfp8";
    case Precision::kFp4: return "fp4";
  }
  return "?";
}

std::optional<Precision> PrecisionFromName(std::string_view name) {
  for (Precision p : kAllPrecisions) {
    if (name == PrecisionName(p)) return p;
  }
  return std::nullopt;
}

int Strategy::Bf16LayersAtStart(int num_layers) const {
  if (precision == Precision::kBf16) return 0;
  if (bf16_layers_at_start >= 0) return std::min(bf16_layers_at_start, num_layers);
  return 0;
}

int Strategy::Bf16LayersAtEnd(int num_layers) const {
  if (precision == Precision::kBf16) return 0;
  const int start = Bf16LayersAtStart(num_layers);
  if (bf16_layers_at_end >= 0) return std::min(bf16_layers_at_end, num_layers - start);
  return 0;
}

const char* MainGradsDtypeName(MainGradsDtype d) { return d == MainGradsDtype::kBf16 ? "bf16" : "fp32"; }

const char* MainParamsDtypeName(MainParamsDtype d) {
  switch (d) {
    case MainParamsDtype::kFp32: return "fp32";
    case MainParamsDtype::kFp16: return "fp16";
    case MainParamsDtype::kNone: return "none";
  }
  return "?";
}

const char* MomentDtypeName(MomentDtype d) { return d == MomentDtype::kBf16 ? "bf16" : "fp32"; }

const char* DpShardingName(DpSharding d) {
  switch (d) {
    case DpSharding::kNone: return "none";
    case DpSharding::kOptimizer: return "optimizer";
    case DpSharding::kGradients: return "gradients";
    case DpSharding::kFull: return "full";
  }
  return "?";
}

const char* MoeAllToAllName(MoeAllToAll a) {
  switch (a) {
    case MoeAllToAll::kAuto: return "auto";
    case MoeAllToAll::kForwarded: return "forwarded";
    case MoeAllToAll::kDirect: return "direct";
  }
  return "?";
}

const char* MoeDispatchPrecisionName(MoeDispatchPrecision p) {
  switch (p) {
    case MoeDispatchPrecision::kBf16: return "bf16";
    case MoeDispatchPrecision::kFp8: return "fp8";
  }
  return "?";
}

void ValidateDegrees(const ModelSpec& model, const Strategy& s) { ThrowIf(CheckDegrees(model, s)); }

std::string ExpertFoldingProblem(const Strategy& s) {
  const int64_t ranks = int64_t{s.tp} * s.cp * s.dp, expert = int64_t{s.ep} * s.expert_tp();
  if (ranks % expert == 0) return "";
  return fmt::format("expected ep x expert tensor-parallel size to divide tp x cp x dp = {} (the expert layers "
                     "fold onto the attention's GPUs, as in Megatron-Core), got {} x {} = {}{}",
                     ranks, s.ep, s.expert_tp(), expert,
                     s.expert_tp() > 1 && ranks % s.ep == 0 ? "; --expert-tensor-parallel-size 1 fits" : "");
}

void ValidateMoeOptions(const ModelSpec& model, const Strategy& s) { ThrowIf(CheckMoe(model, s)); }

void ValidateStrategy(const ModelSpec& model, int64_t gpus, const Strategy& s) {
  ThrowIf(Check(model, gpus, s));
}

bool IsValidStrategy(const ModelSpec& model, int64_t gpus, const Strategy& s) {
  return Check(model, gpus, s).empty();
}

}  // namespace railsim::spec
