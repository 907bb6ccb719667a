// Strategy: how one training job is parallelised and run, in Megatron-LM's
// terms: tensor (tp), pipeline (pp, with vp virtual stages per rank), data
// (dp), context (cp) and expert (ep) parallelism, micro- and global batch,
// activation recomputation, sequence parallelism, the distributed optimizer.
//
// Ranks are laid out in Megatron's default order, tp fastest, then cp, then dp,
// then pp; GPU id = rank, HB domain = id / K. So a TP group of size <= K sits
// inside one HB domain and pipeline neighbours share a local rank (a rail) when
// K divides tp*cp*dp. The expert layers fold onto the same GPUs with degrees of
// their own (Megatron-Core's MoE parallel folding, Liu et al., arXiv
// 2504.14960): expert tensor parallelism etp fastest, then ep, then the expert
// data parallelism tp*cp*dp / (ep*etp), then pp (spec/placement.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/model.h"

namespace railsim::spec {

enum class Recompute { kNone, kSelective, kFull };
enum class Attention { kFlash, kClassic };
/// Megatron-LM's --cuda-graph-impl: none (eager: the host issues every
/// kernel), local (Megatron-Core's graph manager) or transformer_engine (TE's
/// make_graphed_callables). Either capture replays a layer's kernels from one
/// launch, so the host's issue time (GpuSpec::host_launch_s) does not bind.
enum class CudaGraphImpl { kNone, kLocal, kTransformerEngine };
/// Number format of the transformer layers' linear GEMMs (Transformer
/// Engine's recipes): bf16; fp8 with one scale per tensor (delayed or current
/// scaling); mxfp8, FP8 with one E8M0 scale per 32 values (Blackwell's
/// block-scaled tensor cores); fp4, NVFP4: E2M1 values with one E4M3 scale per
/// 16 and an fp32 scale per tensor (Blackwell). Attention, norms, the
/// embedding, the output layer and the optimizer stay in 16/32 bit, and so do
/// the layers kept in bf16 (Strategy::bf16_layers).
enum class Precision { kBf16, kFp8, kMxfp8, kFp4 };
/// "bf16", "fp8", "mxfp8", "fp4"; and back (nullopt for any other text).
const char* PrecisionName(Precision p);
std::optional<Precision> PrecisionFromName(std::string_view name);
/// The precisions in their --precision order.
constexpr Precision kAllPrecisions[] = {Precision::kBf16, Precision::kFp8, Precision::kMxfp8, Precision::kFp4};
/// How MoE tokens cross HB domains (comm/moe.h): auto (forwarded on
/// Rail-only, direct otherwise), forwarded (NIC once per domain reached, then
/// NVLink), direct (any NIC to any NIC).
enum class MoeAllToAll { kAuto, kForwarded, kDirect };
const char* MoeAllToAllName(MoeAllToAll a);
/// Payload of the MoE dispatch (--moe-dispatch-precision): bf16, or fp8 with
/// one fp32 scale per 128 values, as DeepEP's FP8 dispatch and DeepSeek-V3's
/// training send it. The combine stays bf16 either way.
enum class MoeDispatchPrecision { kBf16, kFp8 };
const char* MoeDispatchPrecisionName(MoeDispatchPrecision p);
/// Largest --moe-imbalance: a rank cannot hold more than all the tokens, and
/// EP degrees stay below this. With ep ranks the model uses min(imbalance, ep).
constexpr double kMaxMoeImbalance = 1024;

/// Optimizer precision, in Megatron-Core's precision-aware optimizer terms:
/// the main-gradient buffer (--main-grads-dtype), the master copy of the
/// weights (--main-params-dtype: fp32, fp16 = the 16 low-order bits of the
/// fp32 master beside the bf16 weight, none = no master copy) and Adam's
/// moments (--exp-avg-dtype, --exp-avg-sq-dtype).
enum class MainGradsDtype { kFp32, kBf16 };
enum class MainParamsDtype { kFp32, kFp16, kNone };
enum class MomentDtype { kFp32, kBf16 };
/// What data-parallel ranks shard (--data-parallel-sharding): nothing, the
/// optimizer states (ZeRO-1, Megatron's distributed optimizer), also the
/// gradients (ZeRO-2), or also the weights (ZeRO-3 / FSDP).
enum class DpSharding { kNone, kOptimizer, kGradients, kFull };
const char* MainGradsDtypeName(MainGradsDtype d);    ///< "fp32", "bf16"
const char* MainParamsDtypeName(MainParamsDtype d);  ///< "fp32", "fp16", "none"
const char* MomentDtypeName(MomentDtype d);          ///< "fp32", "bf16"
const char* DpShardingName(DpSharding d);            ///< "none", "optimizer", "gradients", "full"

const char* RecomputeName(Recompute r);
const char* AttentionName(Attention a);
const char* CudaGraphImplName(CudaGraphImpl c);  ///< "none", "local", "transformer_engine"
/// The implementation named `name` (as CudaGraphImplName spells it), if any.
std::optional<CudaGraphImpl> CudaGraphImplFromName(std::string_view name);
/// Every CudaGraphImplName, in the enum's order: what --cuda-graph-impl, the
/// sweep key and Megatron-LM's flag accept.
std::vector<std::string> CudaGraphImplNames();

/// Plain value; copyable on purpose (the search makes millions).
struct Strategy {
  int tp = 1;
  int pp = 1;
  int64_t dp = 1;
  int cp = 1;
  int ep = 1;
  /// Expert tensor parallelism (Megatron-Core's --expert-tensor-parallel-size):
  /// the routed experts' GEMMs split over this many GPUs. 0 = tp, Megatron-Core's
  /// default; expert_tp() is the degree in use.
  int etp = 0;
  int vp = 1;                   ///< virtual pipeline stages per rank (1 = no interleaving)
  /// Megatron-Core's interleave group size N
  /// (--microbatch-group-size-per-virtual-pipeline-stage): each rank runs N
  /// micro-batches through one virtual stage before moving to the next. 0 =
  /// Megatron-Core's default, pp. Larger N holds (vp - 1)(N - pp) more chunks
  /// in flight and gives the pipeline's wrap-around sends N - pp chunks of
  /// slack. Interleaving only; in [pp, micro-batches].
  int64_t microbatch_group_size_per_vp_stage = 0;
  /// Megatron-Core's uneven pipeline split (spec/pipeline_split.h): the
  /// input embedding and the loss each count as one layer of the split
  /// (--account-for-embedding-in-pipeline-split,
  /// --account-for-loss-in-pipeline-split); or the first and the last stage
  /// hold this many transformer layers and the other stages share the rest
  /// evenly (--decoder-first-pipeline-num-layers,
  /// --decoder-last-pipeline-num-layers; 0 = not given).
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  int decoder_first_pipeline_num_layers = 0;
  int decoder_last_pipeline_num_layers = 0;
  int64_t micro_batch = 1;
  int64_t global_batch = 1;
  Recompute recompute = Recompute::kNone;
  bool sequence_parallel = false;
  DpSharding dp_sharding = DpSharding::kNone;
  MainGradsDtype main_grads_dtype = MainGradsDtype::kFp32;
  MainParamsDtype main_params_dtype = MainParamsDtype::kFp32;
  MomentDtype exp_avg_dtype = MomentDtype::kFp32;
  MomentDtype exp_avg_sq_dtype = MomentDtype::kFp32;
  /// Hybrid sharding (--fsdp-shard-group-size): shard over groups of this
  /// many consecutive dp x cp ranks and replicate across the groups (0 = one
  /// group of all dp x cp ranks). Dense models only.
  int64_t fsdp_shard_group_size = 0;
  /// Gradient reduce-scatter/all-reduce overlaps the last backward pass and
  /// the parameter all-gather the first forward (Megatron-Core's
  /// --overlap-grad-reduce / --overlap-param-gather).
  bool overlap_dp_comm = true;
  /// Gradients are reduced in 16-bit (Megatron-Core's --grad-reduce-in-bf16;
  /// also what 2021 Megatron-LM did in fp16 runs) instead of fp32.
  bool grad_reduce_16bit = false;
  /// With interleaving (vp > 1), pipeline sends and receives run behind the
  /// neighbouring chunks' compute (Megatron-Core's default;
  /// --no-overlap-p2p-communication turns it off).
  bool overlap_p2p_comm = true;
  Attention attention = Attention::kFlash;
  /// Unset: the run does not say, and railsim assumes the host keeps up
  /// with the GPU (as with CUDA graphs, which NVIDIA's recipes capture on
  /// Blackwell); kNone times an eager run, whose layers cannot go faster
  /// than the host issues their kernels (GpuSpec::host_launch_s).
  std::optional<CudaGraphImpl> cuda_graph_impl;
  /// Sequence-parallel TP all-gathers and reduce-scatters split and
  /// overlapped with the GEMMs that consume and produce them
  /// (Megatron-Core's --tp-comm-overlap, Transformer Engine userbuffers).
  /// Requires sequence_parallel.
  bool tp_comm_overlap = false;
  Precision precision = Precision::kBf16;
  /// The weights are kept only in the GEMM format (Megatron-Core's
  /// --fp8-param-gather and --fp4-param-gather; railsim's --fp8-params and
  /// --fp4-params): no 16-bit copy beside the optimizer's fp32 master, and the
  /// data-parallel parameter all-gather moves values of that format.
  bool low_precision_params = false;
  /// Transformer layers kept in bf16 at the start and the end of the network
  /// while the others run in the low precision (Megatron-Core's
  /// --first-last-layers-bf16 with --num-layers-at-start-in-bf16 and
  /// --num-layers-at-end-in-bf16). -1 = the default, none, as Megatron-Core's
  /// (--first-last-layers-bf16 off). NVIDIA's NVFP4 recipe for long runs
  /// ("Pretraining Large Language Models with NVFP4", arXiv 2509.25149) keeps
  /// about 15% of the layers in bf16, most at the end: set them to time it.
  int bf16_layers_at_start = -1;
  int bf16_layers_at_end = -1;
  // MoE dispatch and combine (ignored for dense models).
  MoeAllToAll moe_alltoall = MoeAllToAll::kAuto;
  /// Dispatch and combine run behind the layer's attention and expert
  /// compute of another micro-batch, as far as it lasts (DualPipe-style).
  bool moe_overlap = false;
  double moe_imbalance = 1;  ///< busiest expert rank's load over the mean (>= 1)
  int moe_max_domains = 0;   ///< node-limited routing: HB domains a token reaches (0 = any)
  MoeDispatchPrecision moe_dispatch_precision = MoeDispatchPrecision::kBf16;

  /// Optimizer states sharded over data-parallel ranks (ZeRO-1 or more).
  bool distributed_optimizer() const { return dp_sharding != DpSharding::kNone; }
  /// Ranks a data-parallel shard spans: fsdp_shard_group_size, or all dp x cp.
  int64_t shard_group() const { return fsdp_shard_group_size > 0 ? fsdp_shard_group_size : dp * cp; }
  /// Sharded within groups smaller than dp x cp, replicated across them.
  bool hybrid_sharding() const { return shard_group() < dp * cp; }
  int64_t gpus() const { return int64_t{tp} * pp * dp * cp; }
  /// The expert tensor-parallel degree in use: etp, or tp when it is 0.
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// Ranks holding the same experts (Megatron-Core's expert data-parallel
  /// size): tp x cp x dp / (ep x expert_tp()). Requires a valid strategy.
  int64_t expert_dp() const { return int64_t{tp} * cp * dp / (int64_t{ep} * expert_tp()); }
  /// The busiest expert rank's load over the mean the model uses: at most ep
  /// (with ep 1 there is no other rank to be busier than).
  double expert_load_imbalance() const { return std::clamp(moe_imbalance, 1.0, double(ep)); }
  int64_t num_microbatches() const { return global_batch / (dp * micro_batch); }
  /// Transformer layers kept in bf16 at the start and at the end of a model
  /// of `num_layers` layers (the fields, or their defaults; 0 for bf16).
  int Bf16LayersAtStart(int num_layers) const;
  int Bf16LayersAtEnd(int num_layers) const;
  /// The interleave group size in use: the field, or pp when it is 0.
  int64_t group_size() const {
    return microbatch_group_size_per_vp_stage > 0 ? microbatch_group_size_per_vp_stage : pp;
  }
};

/// Largest cluster the analytic model accepts: far beyond any built machine,
/// small enough that every product in the model stays exact in doubles.
constexpr int64_t kMaxModelGpus = int64_t{1} << 24;
constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;

/// Throws Error naming the flag (--tp, --pp, --dp, --cp, --ep, --vp,
/// --micro-batch-size, --global-batch-size, --sequence-parallel, --gpus)
/// unless `s` is a valid strategy for `model` on `gpus` GPUs: every degree
/// positive, tp dividing heads, query groups and ffn size, pp at most the
/// layers, a pipeline split spec/pipeline_split.h can make (Megatron-Core's
/// checks of its four flags; without them pp need not divide the layers, vp
/// divides the layers per stage of an even split and is at most the
/// smallest stage's layers of an uneven one), tp*pp*dp*cp == gpus, the global batch divisible by dp x micro-batch,
/// cp dividing the sequence into 2*cp chunks, ep dividing the experts, the
/// expert tensor-parallel degree (--expert-tensor-parallel-size) dividing
/// moe_ffn_hidden_size, ep x etp dividing tp x cp x dp (ExpertFoldingProblem),
/// interleaving only with pp >= 2 and microbatches divisible by pp,
/// the interleave group size only with interleaving, in [pp, microbatches]
/// with a remainder of 0 or at least pp (Megatron-Core's two checks),
/// TP-communication overlap only with sequence parallelism,
/// --fsdp-shard-group-size only with --data-parallel-sharding on a dense
/// model, dividing dp x cp.
void ValidateStrategy(const ModelSpec& model, int64_t gpus, const Strategy& s);

/// Only the checks of tp, pp, vp, cp, ep and etp against the model (no
/// cluster size or data parallelism), so a bad degree is reported before dp is
/// derived.
void ValidateDegrees(const ModelSpec& model, const Strategy& s);

/// Megatron-Core's rule for folding the expert layers onto the attention's
/// ranks (parallel_state.initialize_model_parallel: the world size must be a
/// multiple of etp x ep x pp, so etp x ep divides tp x cp x dp): "" when `s`
/// keeps it, else what is wrong, for the caller to name its own flag or key.
/// Needs no model, so the collective command checks its groups with it too.
std::string ExpertFoldingProblem(const Strategy& s);

/// Only the MoE dispatch settings (--moe-*): in range for an MoE model,
/// left at their defaults for a dense one.
void ValidateMoeOptions(const ModelSpec& model, const Strategy& s);

/// The same checks without throwing: true when valid. For the search.
bool IsValidStrategy(const ModelSpec& model, int64_t gpus, const Strategy& s);

}  // namespace railsim::spec
