#include "railsim/perf/estimate.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "railsim/perf/compute.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/model_stats.h"

namespace railsim::perf {
namespace {

// Adam's HBM traffic per parameter of the shard: read the master weight (the
// 16-bit weight when there is none), the gradient and the two moments; write
// them back with the 16-bit copy; plus reading the gradient for its norm and
// zeroing it. All fp32 (Megatron's default), 4 x 4 + 3 x 4 + 2 + 4 + 4 = 38.
double AdamStepBytesPerParam(const spec::Strategy& s) {
  const BytesPerParam b = OptimizerBytesPerParam(s);
  // With fp16 remainders the master is rebuilt from the 16-bit weight too.
  const double master_read = b.master == 4 ? 4 : b.master + b.weights;
  const double grad_read = b.grad_copy > 0 ? b.grad_copy : b.gradients;
  return (master_read + grad_read + b.moments) + (b.master + b.moments + b.weights) + 2 * b.gradients;
}

// One micro-batch through one pipeline stage, split as the breakdown is.
struct StageTime {
  double compute = 0, recompute = 0, tp = 0, cp = 0, ep = 0;
  double ep_hidden = 0;     // dispatch and combine run behind compute (--moe-overlap)
  double fwd = 0, bwd = 0;  // compute only, for the overlap windows
  double total() const { return compute + recompute + tp + cp + ep; }
};

void AddBlock(StageTime* st, const BlockCost& b, double count, spec::Recompute r) {
  st->compute += count * (b.fwd + b.bwd);
  st->fwd += count * b.fwd;
  st->bwd += count * b.bwd;
  st->tp += count * (b.tp_fwd + b.tp_bwd);
  st->cp += count * (b.cp_fwd + b.cp_bwd);
  if (r == spec::Recompute::kFull) {
    st->recompute += count * b.fwd;
    st->tp += count * b.tp_fwd;
    st->cp += count * b.cp_fwd;
  } else if (r == spec::Recompute::kSelective) {
    st->recompute += count * b.recompute_selective;
  }
}

// An MoE layer's dispatch and combine per micro-batch: exposed and hidden.
struct ExpertComm {
  double exposed = 0, hidden = 0;
};

StageTime StageFor(const spec::Strategy& s, const LayerCosts& costs, const ExpertComm& ep_per_layer,
                   const StageLoad& load) {
  StageTime st;
  const double layers = load.layers, moe_layers = load.moe_layers;
  const double bf16_layers = load.bf16_layers, bf16_moe_layers = load.bf16_moe_layers;
  const Stage stage = load.stage;
  AddBlock(&st, costs.layer, moe_layers - bf16_moe_layers, s.recompute);
  AddBlock(&st, costs.dense_layer, layers - moe_layers - (bf16_layers - bf16_moe_layers), s.recompute);
  AddBlock(&st, costs.bf16_layer, bf16_moe_layers, s.recompute);
  AddBlock(&st, costs.bf16_dense_layer, bf16_layers - bf16_moe_layers, s.recompute);
  // Attention runs in 16 bits in every layer, so a windowed layer changes
  // each of the four the same way.
  AddBlock(&st, costs.window_change, load.window_layers, s.recompute);
  st.ep += moe_layers * ep_per_layer.exposed;
  st.ep_hidden += moe_layers * ep_per_layer.hidden;
  if (stage == Stage::kFirst || stage == Stage::kOnly) AddBlock(&st, costs.embedding, 1, spec::Recompute::kNone);
  if (stage == Stage::kLast || stage == Stage::kOnly) AddBlock(&st, costs.output, 1, spec::Recompute::kNone);
  return st;
}

// Exposed data-parallel time: gradient reduction (all-reduce, or
// reduce-scatter with the distributed optimizer) and the parameter
// all-gather, plus the tied-embedding all-reduce between first and last stage.
// With overlap on (Megatron-Core), a stage's reduction runs behind its last
// micro-batch's backward, and with vp interleaved chunks each chunk's share
// starts as soon as that chunk's last backward ends: the cool-down then offers
// about (1 + (vp - 1) pp) chunk-backwards of cover, and only the last chunk's
// share beyond its own backward is always exposed. The parameter all-gather
// mirrors this against the forward passes of the warm-up.
double Exposed(double comm, double pass, const spec::Strategy& s) {
  const double v = s.vp;
  double window = pass / v * (1 + (v - 1) * s.pp);
  return std::max({0.0, comm / v - pass / v, comm - window});
}

// ZeRO-2 and ZeRO-3 keep no whole gradient, so each micro-batch's backward
// reduce-scatters its gradients; ZeRO-3 also all-gathers the weights before
// each micro-batch's forward and again before its backward (FSDP's
// reshard-after-forward). With overlap they are prefetched a layer ahead, so
// all but the first layer's share can hide behind the pass's compute.
double PerMicrobatchExposed(double comm, double pass, double layers) {
  return std::max(comm / layers, comm - pass);
}

double DataParallelTime(const PerfContext& c, const spec::Strategy& s, const ParallelGroups& groups,
                        const StageTime& slowest, const StageParams& params, double layers,
                        comm::CollectiveTimeMemo& times) {
  double reduce = 0, gather = 0;
  const double grad_bytes = GradientBytesPerParam(s);
  // With --fp8-params the distributed optimizer gathers the FP8 weights (1
  // byte each; the other parameters, norms and embeddings, stay 16-bit: a
  // small share, counted as FP8 here).
  const double gather_bytes = s.low_precision_params ? GemmFormatOf(s.precision).value_bytes : 2;
  // Gradient reduction (and parameter all-gather) of `params` over `group`.
  auto synchronize = [&](double params, const comm::GroupLayout& group, bool hybrid) {
    if (hybrid) {
      // Shard inside the group, then all-reduce the shard across replicas.
      reduce += times.ReduceScatter(grad_bytes * params, groups[GroupKind::kDpShard]) +
                times.AllReduce(grad_bytes * params / double(s.shard_group()), groups[GroupKind::kDpReplica]);
      gather += times.AllGather(2 * params, groups[GroupKind::kDpShard]);
    } else if (s.distributed_optimizer()) {
      reduce += times.ReduceScatter(grad_bytes * params, group);
      gather += times.AllGather(gather_bytes * params, group);
    } else {
      reduce += times.AllReduce(grad_bytes * params, group);
    }
  };
  const int64_t dense_dp = s.dp * s.cp;
  if (dense_dp > 1) synchronize(params.dense, groups[GroupKind::kDp], s.hybrid_sharding());
  if (params.expert > 0 && s.expert_dp() > 1) synchronize(params.expert, groups[GroupKind::kExpertDp], false);
  const double m = double(s.num_microbatches());
  const bool overlap = s.overlap_dp_comm;
  double exposed = 0, total = 0;
  switch (s.dp_sharding) {
    case spec::DpSharding::kNone:
    case spec::DpSharding::kOptimizer:
      total = reduce + gather;
      exposed = overlap ? Exposed(reduce, slowest.bwd, s) + Exposed(gather, slowest.fwd, s) : total;
      break;
    case spec::DpSharding::kGradients:
      total = m * reduce + gather;
      exposed = overlap ? m * PerMicrobatchExposed(reduce, slowest.bwd, layers) + Exposed(gather, slowest.fwd, s)
                        : total;
      break;
    case spec::DpSharding::kFull:
      total = m * (2 * gather + reduce);
      exposed = overlap ? m * (PerMicrobatchExposed(gather, slowest.fwd, layers) +
                               PerMicrobatchExposed(gather + reduce, slowest.bwd, layers))
                        : total;
      break;
  }
  // What hides still slows the compute it hides behind (NCCL kernels take
  // SMs and HBM bandwidth from the GEMMs).
  exposed += c.gpu.dp_comm_overlap_cost * (total - exposed);
  if (s.pp > 1 && !c.model.untie_embeddings_and_output_weights) {
    exposed += times.AllReduce(EmbeddingSyncBytes(c, s), groups[GroupKind::kEmbedding]);
  }
  return exposed;
}

}  // namespace

double GradientBytesPerParam(const spec::Strategy& s) { return OptimizerBytesPerParam(s).gradients; }

double EmbeddingSyncBytes(const PerfContext& c, const spec::Strategy& s) {
  return GradientBytesPerParam(s) * double(PaddedVocab(c.model, s.tp)) * c.model.hidden_size / s.tp;
}

Estimate ComposeIteration(const PerfContext& c, const spec::Strategy& s, const LayerCosts& costs,
                          const std::vector<StageLoad>& loads, comm::CollectiveTimeMemo* times) {
  const comm::ClusterFabrics& f = c.fabrics;
  std::optional<comm::CollectiveTimeMemo> own_times;
  if (!times) times = &own_times.emplace(f);
  assert(&times->fabrics() == &f && "a memo answers for the fabrics it was made for");
  const ParallelGroups groups = PlaceGroups(c, s);
  const double m = double(s.num_microbatches());

  // Expert parallelism: dispatch and combine, forward and backward (and
  // again when the forward is recomputed). The dispatch direction (forward
  // dispatch, backward of the combine) carries --moe-dispatch-precision, the
  // combine direction bf16, as DeepSeek-V3 trains. With --moe-overlap each
  // pass's pair runs behind that pass's compute of another micro-batch, as
  // far as it lasts (DualPipe-style); the rest is exposed.
  ExpertComm ep_per_layer;
  MoeDispatchSummary moe;
  if (c.model.is_moe() && s.ep > 1) {
    const comm::GroupLayout& ep = groups[GroupKind::kEp];
    const double dispatch = comm::MoeDispatchTime(costs.moe_dispatch, s.moe_alltoall, ep, f);
    const double combine = s.moe_dispatch_precision == spec::MoeDispatchPrecision::kBf16
                               ? dispatch
                               : comm::MoeDispatchTime(costs.moe_combine, s.moe_alltoall, ep, f);
    moe = {true,     comm::ResolveMoeAllToAll(s.moe_alltoall, ep, f),
           dispatch, combine,
           ep.domains, comm::DomainReachProbability(costs.moe_dispatch, ep.domains),
           c.model.moe_layer_count()};
    const bool full = s.recompute == spec::Recompute::kFull;
    const double pair = dispatch + combine;
    const double total = (full ? 3 : 2) * pair;
    ep_per_layer.exposed = total;
    if (s.moe_overlap) {
      const double fwd = std::max(0.0, pair - costs.layer.fwd);
      const double bwd = std::max(0.0, pair - costs.layer.bwd);
      ep_per_layer.exposed = (full ? 2 : 1) * fwd + bwd;
    }
    ep_per_layer.hidden = total - ep_per_layer.exposed;
  }

  // The slowest stage sets the pace of the steady state; the others add to
  // the bubble. Every rank is timed: an uneven split, MoE layers or bf16
  // layers can make any of them the slowest. On a tie the first rank wins,
  // then the last, then the lowest middle one.
  const StageLoad* slowest_load = &loads.front();
  StageTime slowest = StageFor(s, costs, ep_per_layer, loads.front());
  double sum_of_stages = slowest.total() * loads.front().ranks;
  auto rank_of_tie = [](Stage stage) { return stage == Stage::kFirst ? 0 : stage == Stage::kLast ? 1 : 2; };
  for (size_t i = 1; i < loads.size(); ++i) {
    const StageTime st = StageFor(s, costs, ep_per_layer, loads[i]);
    sum_of_stages += st.total() * loads[i].ranks;
    if (st.total() > slowest.total() ||
        (st.total() == slowest.total() && rank_of_tie(loads[i].stage) < rank_of_tie(slowest_load->stage))) {
      slowest = st;
      slowest_load = &loads[i];
    }
  }
  const StageParams params = ParamsOnGpu(c, costs.memory, *slowest_load);

  Estimate e;
  e.moe = moe;
  TimeBreakdown& t = e.breakdown;
  t.compute_s = m * slowest.compute;
  t.recompute_s = m * slowest.recompute;
  t.tp_comm_s = m * slowest.tp;
  t.cp_comm_s = m * slowest.cp;
  t.ep_comm_s = m * slowest.ep;
  t.ep_comm_hidden_s = m * slowest.ep_hidden;
  t.bubble_s = (sum_of_stages - slowest.total()) / s.vp;
  if (s.pp > 1) {
    double p2p = times->SendRecv(costs.p2p_bytes, groups[GroupKind::kPp]);
    if (s.vp > 1 && s.overlap_p2p_comm) {
      // Interleaved with overlap: each send runs behind the next chunk's
      // compute; only the fill and drain chains and what a chunk cannot
      // cover are exposed.
      const double chunk = std::min(slowest.fwd, slowest.bwd) / s.vp;
      t.pp_comm_s = 2 * (s.pp - 1) * p2p + 2 * s.vp * m * std::max(0.0, p2p - chunk);
      // The fill and the drain wrap from the last rank back to the first
      // vp - 1 times each. The wrapped input comes back after pp chunks and
      // pp sends, while the first rank has N chunks of its own to run: a
      // group of N = pp leaves the pp sends exposed at each wrap, every
      // micro-batch beyond pp hides a chunk's worth of them.
      const double spare = double(s.group_size() - s.pp);
      const double fwd_chunk = slowest.fwd / s.vp, bwd_chunk = slowest.bwd / s.vp;
      t.pp_comm_s += (s.vp - 1) * (std::max(0.0, s.pp * p2p - spare * fwd_chunk) +
                                   std::max(0.0, s.pp * p2p - spare * bwd_chunk));
    } else {
      t.pp_comm_s = 2 * (s.vp * m + s.pp - 1) * p2p;
    }
  }
  t.dp_comm_s = DataParallelTime(c, s, groups, slowest, params, slowest_load->layers, *times);
  // The Adam step streams the local shard; before it, gradient clipping
  // all-reduces the squared gradient norm over every GPU (a latency-bound
  // collective of one fp32 number).
  t.optimizer_s = AdamStepBytesPerParam(s) * OptimizerShardParams(params, s) / c.gpu.hbm_Bps + c.grad_norm_allreduce_s;
  // Fixed costs: once per iteration, and once per chunk (a micro-batch
  // through one virtual stage, forward and backward) on the pipeline's
  // critical path: the steady state's m x vp chunks of the slowest stage plus
  // the fill and drain through the other pp - 1 stages.
  const double chunks = m * s.vp + (s.pp > 1 ? double(s.pp - 1) : 0.0);
  t.iteration_overhead_s = c.gpu.iteration_overhead_s;
  t.overhead_s = t.iteration_overhead_s + c.gpu.chunk_overhead_s * chunks;
  // Last, as it scales with everything before it: the step ends when its
  // slowest data-parallel replica does (a table lookup and a sqrt per
  // strategy).
  if (c.gpu.straggler_jitter > 0) {
    t.straggler_s = StragglerWait(c.gpu.straggler_jitter, t.total(), c.expected_slowest.Of(s.dp));
  }

  e.iteration_time_s = t.total();
  e.microbatches = s.num_microbatches();
  e.model_flops_per_iteration = ModelFlopsPerIteration(c.model, s);
  e.hardware_flops_per_iteration = HardwareFlopsPerIteration(c.model, s);
  const double gpu_seconds = e.iteration_time_s * double(c.gpus);
  // Against the peak of the format the transformer layers' GEMMs run in: a
  // faster format raises the ceiling, and MFU stays a share of it.
  e.peak_flops = c.gpu.PeakFlopsFor(s.precision);
  e.mfu = e.model_flops_per_iteration / (gpu_seconds * e.peak_flops);
  e.hfu = e.hardware_flops_per_iteration / (gpu_seconds * e.peak_flops);
  e.tflops_per_gpu = e.hardware_flops_per_iteration / gpu_seconds / 1e12;
  e.tokens_per_s = double(s.global_batch) * c.model.seq_length / e.iteration_time_s;
  return e;
}

Estimate EstimateIteration(const PerfContext& c, const spec::Strategy& s) {
  LayerCosts costs = ComputeLayerCosts(c, s);
  const std::vector<StageLoad> folded = FoldedStageLoads(c.model, s);
  Estimate e = ComposeIteration(c, s, costs, folded);
  e.memory = EstimateMemory(c, s, costs.memory, folded);
  return e;
}

}  // namespace railsim::perf
