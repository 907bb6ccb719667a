#include "railsim/perf/iteration_comm.h"

#include <cassert>

#include "railsim/perf/estimate.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"

namespace railsim::perf {
namespace {

constexpr const char* kParallelismNames[kParallelisms] = {"tp", "cp", "ep", "pp", "dp", "embedding"};

}  // namespace

const char* ParallelismName(Parallelism p) { return kParallelismNames[int(p)]; }

std::vector<CommCall> IterationComm(const PerfContext& c, const spec::Strategy& s) {
  const LayerCosts costs = ComputeLayerCosts(c, s);
  const double m = double(s.num_microbatches());
  const bool full = s.recompute == spec::Recompute::kFull;
  const int pp = s.pp;
  // Which layers each rank holds: the pipeline split's (spec/pipeline_split.h).
  const std::vector<StageLoad> loads = StageLoads(c.model, s);
  std::vector<CommCall> out;
  // One call whose count per stage is `per_layer` x layers + `first` on the
  // first stage + `last` on the last, all per micro-batch.
  auto per_stage = [&](double per_layer, double first, double last) {
    std::vector<double> times(static_cast<size_t>(pp));
    for (int i = 0; i < pp; ++i) {
      times[size_t(i)] = m * (per_layer * loads[size_t(i)].layers + (i == 0 ? first : 0) +
                              (i == pp - 1 ? last : 0));
    }
    return times;
  };
  auto add = [&](Parallelism par, GroupKind g, comm::Op op, PointToPoint p2p, double bytes,
                 std::vector<double> times) {
    bool any = false;
    for (double t : times) any = any || t > 0;
    if (bytes > 0 && any) out.push_back({par, g, op, p2p, bytes, std::move(times), std::nullopt, comm::MoeAllToAll::kAuto});
  };

  // Tensor parallelism: the activation of one micro-batch, 16-bit. When the
  // routed experts have tensor-parallel groups of their own, an MoE layer's
  // MLP half (the dispatcher's all-gather and reduce-scatter, etp / tp of the
  // tokens) runs on the etp groups instead.
  const double act = 2.0 * double(s.micro_batch) * (double(c.model.seq_length) / s.cp) * c.model.hidden_size;
  const double per_layer = full ? 6 : 4;
  const bool expert_tp = c.model.is_moe() && !ExpertTpIsTp(c, s);
  std::vector<double> expert_times(static_cast<size_t>(pp), 0.0);
  if (expert_tp) {
    for (int i = 0; i < pp; ++i) expert_times[size_t(i)] = m * per_layer / 2 * loads[size_t(i)].moe_layers;
  }
  // The attention's share: every layer's count less what moved to etp.
  auto tp_share = [&](double first, double last) {
    std::vector<double> times = per_stage(per_layer, first, last);
    for (int i = 0; i < pp; ++i) times[size_t(i)] -= expert_times[size_t(i)];
    return times;
  };
  if (expert_tp && s.expert_tp() > 1) {
    const double gathered = act * s.expert_tp() / s.tp;
    add(Parallelism::kTp, GroupKind::kEtp, comm::Op::kAllGather, PointToPoint::kNone, gathered, expert_times);
    add(Parallelism::kTp, GroupKind::kEtp, comm::Op::kReduceScatter, PointToPoint::kNone, gathered, expert_times);
  }
  if (s.tp > 1) {
    if (s.sequence_parallel) {
      add(Parallelism::kTp, GroupKind::kTp, comm::Op::kAllGather, PointToPoint::kNone, act, tp_share(0, 1));
      add(Parallelism::kTp, GroupKind::kTp, comm::Op::kReduceScatter, PointToPoint::kNone, act, tp_share(1, 1));
    } else {
      add(Parallelism::kTp, GroupKind::kTp, comm::Op::kAllReduce, PointToPoint::kNone, act,
          per_stage(per_layer, 1, 1));
    }
  }
  // Context parallelism: the K/V ring; sliding-window layers all-gather K
  // and V (forward, backward and a recomputed forward) and reduce-scatter
  // their gradients instead (layer_cost.h).
  if (s.cp > 1) {
    const bool gather = costs.cp_window_gather_bytes > 0;
    std::vector<double> ring(static_cast<size_t>(pp)), gathers(ring), scatters(ring);
    for (int i = 0; i < pp; ++i) {
      const double windowed = gather ? loads[size_t(i)].window_layers : 0;
      ring[size_t(i)] = m * (full ? 4 : 3) * double(s.cp - 1) * (loads[size_t(i)].layers - windowed);
      gathers[size_t(i)] = m * (full ? 3 : 2) * windowed;
      scatters[size_t(i)] = m * windowed;
    }
    add(Parallelism::kCp, GroupKind::kCp, comm::Op::kSendRecv, PointToPoint::kRing, costs.cp_chunk_bytes, ring);
    add(Parallelism::kCp, GroupKind::kCp, comm::Op::kAllGather, PointToPoint::kNone, costs.cp_window_gather_bytes,
        gathers);
    add(Parallelism::kCp, GroupKind::kCp, comm::Op::kReduceScatter, PointToPoint::kNone,
        costs.cp_window_gather_bytes, scatters);
  }
  // Expert parallelism: dispatch and combine, in the MoE layers.
  // With an fp8 dispatch, the dispatch direction (forward dispatch, backward
  // combine) and the bf16 combine direction are two calls of half the count.
  if (c.model.is_moe() && s.ep > 1) {
    const bool split = s.moe_dispatch_precision != spec::MoeDispatchPrecision::kBf16;
    std::vector<double> times(static_cast<size_t>(pp));
    for (int i = 0; i < pp; ++i) {
      times[size_t(i)] = m * (full ? 6 : 4) / (split ? 2 : 1) * loads[size_t(i)].moe_layers;
    }
    const double dispatch_bytes = costs.a2a_bytes * costs.moe_dispatch.bytes_per_token /
                                  costs.moe_combine.bytes_per_token;
    add(Parallelism::kEp, GroupKind::kEp, comm::Op::kAllToAll, PointToPoint::kNone, dispatch_bytes, times);
    out.back().moe = costs.moe_dispatch;
    out.back().moe_algorithm = s.moe_alltoall;
    if (split) {
      add(Parallelism::kEp, GroupKind::kEp, comm::Op::kAllToAll, PointToPoint::kNone, costs.a2a_bytes, times);
      out.back().moe = costs.moe_combine;
      out.back().moe_algorithm = s.moe_alltoall;
    }
  }
  // Pipeline: activations forward, their gradients back.
  if (pp > 1) {
    const double along = double(s.vp) * m, wrap = double(s.vp - 1) * m;
    add(Parallelism::kPp, GroupKind::kPp, comm::Op::kSendRecv, PointToPoint::kNext, costs.p2p_bytes, {along});
    add(Parallelism::kPp, GroupKind::kPp, comm::Op::kSendRecv, PointToPoint::kPrevious, costs.p2p_bytes, {along});
    add(Parallelism::kPp, GroupKind::kPp, comm::Op::kSendRecv, PointToPoint::kLastToFirst, costs.p2p_bytes, {wrap});
    add(Parallelism::kPp, GroupKind::kPp, comm::Op::kSendRecv, PointToPoint::kFirstToLast, costs.p2p_bytes, {wrap});
  }
  // Data parallelism: per stage, the parameters that stage holds.
  const double grad = GradientBytesPerParam(s);
  auto synchronize = [&](GroupKind g, bool expert) {
    std::vector<double> params(static_cast<size_t>(pp));
    for (int i = 0; i < pp; ++i) {
      const StageParams p = ParamsOnGpu(c, costs.memory, loads[size_t(i)]);
      params[size_t(i)] = expert ? p.expert : p.dense;
    }
    // One call per stage, since the bytes differ by stage.
    for (int i = 0; i < pp; ++i) {
      std::vector<double> once(size_t(pp), 0.0);
      once[size_t(i)] = 1;
      if (s.distributed_optimizer()) {
        // ZeRO-2/3 reduce-scatter every micro-batch; ZeRO-3 gathers the
        // weights before each forward and backward (estimate.cc).
        const bool per_mb = s.dp_sharding == spec::DpSharding::kGradients || s.dp_sharding == spec::DpSharding::kFull;
        const double gathers = s.dp_sharding == spec::DpSharding::kFull ? 2 * m : 1;
        std::vector<double> reduces(once);
        if (per_mb) reduces[size_t(i)] = m;
        std::vector<double> gathered(size_t(pp), 0.0);
        gathered[size_t(i)] = gathers;
        // Hybrid sharding: inside the shard group, then the shard's
        // gradient all-reduced across the replicas.
        const bool hybrid = !expert && s.hybrid_sharding();
        const GroupKind shard = hybrid ? GroupKind::kDpShard : g;
        add(Parallelism::kDp, shard, comm::Op::kReduceScatter, PointToPoint::kNone, grad * params[size_t(i)],
            reduces);
        if (hybrid) {
          add(Parallelism::kDp, GroupKind::kDpReplica, comm::Op::kAllReduce, PointToPoint::kNone,
              grad * params[size_t(i)] / double(s.shard_group()), reduces);
        }
        add(Parallelism::kDp, shard, comm::Op::kAllGather, PointToPoint::kNone, 2 * params[size_t(i)], gathered);
      } else {
        add(Parallelism::kDp, g, comm::Op::kAllReduce, PointToPoint::kNone, grad * params[size_t(i)], once);
      }
    }
  };
  if (int64_t{s.dp} * s.cp > 1) synchronize(GroupKind::kDp, false);
  if (c.model.is_moe() && s.expert_dp() > 1) synchronize(GroupKind::kExpertDp, true);
  // The tied embedding between the first and last stage.
  if (pp > 1 && !c.model.untie_embeddings_and_output_weights) {
    add(Parallelism::kEmbedding, GroupKind::kEmbedding, comm::Op::kAllReduce, PointToPoint::kNone,
        EmbeddingSyncBytes(c, s), {1});
  }
  return out;
}

comm::Plan CallPlan(const CommCall& call, const comm::GroupLayout& layout, const comm::ClusterFabrics& c,
                    double* analytic_s) {
  if (call.moe) return comm::MoeDispatchPlan(*call.moe, call.moe_algorithm, layout, c, analytic_s);
  std::optional<comm::Plan> plan = comm::MakePlan(call.op, comm::Algorithm::kAuto, call.bytes, layout, c, {}, analytic_s);
  assert(plan && "the auto algorithm always applies");
  return *plan;
}

}  // namespace railsim::perf
