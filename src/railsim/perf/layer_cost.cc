#include "railsim/perf/layer_cost.h"

#include <algorithm>

#include "railsim/perf/compute.h"
#include "railsim/perf/groups.h"

namespace railsim::perf {
namespace {

// Forward and backward time of a linear layer y[T x n] = x[T x k] W[k x n]
// applied `count` times: forward GEMM, then data- and weight-gradient GEMMs.
struct Pass {
  double fwd = 0, bwd = 0;
};

Pass Linear(const GpuModel& g, double tokens, double n, double k, double count = 1) {
  Pass p;
  p.fwd = count * GemmTime(g, tokens, n, k);
  p.bwd = count * (GemmTime(g, tokens, k, n) + GemmTime(g, k, n, tokens));
  return p;
}

// Elementwise work as a number of HBM-streaming kernels and their bytes; the
// backward of each reads the incoming gradient and the saved input and writes
// a gradient, about twice the forward traffic.
struct Stream {
  double kernels = 0, bytes = 0;
  void Add(double b, double n = 1) {
    bytes += b;
    kernels += n;
  }
  double Fwd(const GpuModel& g) const { return bytes / g.hbm_Bps + kernels * g.kernel_s; }
  double Bwd(const GpuModel& g) const { return 2 * bytes / g.hbm_Bps + kernels * g.kernel_s; }
};

LayerCosts ComputeLayerCostsIn(const PerfContext& c, const spec::Strategy& s) {
  const spec::ModelSpec& m = c.model;
  const GpuModel& g = c.gpu;
  const double t = s.tp;
  const double seq = m.seq_length;
  const double sl = seq / s.cp;
  const double b = double(s.micro_batch);
  const double tokens = b * sl;
  const double h = m.hidden_size;
  const double dh = m.kv_channels();
  const double kv = double(m.num_query_groups) * dh;
  const double f = m.ffn_hidden_size;
  const double heads = double(m.num_attention_heads) / t;
  const double hs = s.sequence_parallel ? h / t : h;  // width of replicated elementwise work
  // The routed experts' tensor parallelism, and the share of a TP group's
  // tokens an expert tensor-parallel group gathers (1 when etp = tp).
  const double et = s.expert_tp();
  const double fold = et / t;
  const double mask = m.hidden_dropout > 0 ? 1 : 0;
  const double vocab = double(PaddedVocab(m, s.tp));
  // The transformer layer's linear GEMMs run in the strategy's precision;
  // attention, the router and the output layer stay 16-bit (Transformer
  // Engine). Every low-precision GEMM input is quantized first.
  const bool low_precision = s.precision != spec::Precision::kBf16;
  const GpuModel lin = g.WithGemmPrecision(s.precision);
  const double cast_bytes = GemmFormatOf(s.precision).cast_bytes;
  LayerCosts out;

  // --- Transformer layer: attention GEMMs. Multi-latent attention runs its
  // down-projections replicated on every TP rank and splits the
  // up-projections and the output by heads, as Megatron-Core does.
  Pass qkv, proj;
  if (m.multi_latent_attention) {
    const spec::LatentAttention& a = m.mla;
    const double qk = a.qk_head_dim + a.qk_pos_emb_head_dim;
    const double all_heads = m.num_attention_heads;
    qkv = Linear(lin, tokens, a.q_lora_rank + a.kv_lora_rank + a.qk_pos_emb_head_dim, h);
    const double q_in = a.q_lora_rank > 0 ? a.q_lora_rank : h;
    Pass q_up = Linear(lin, tokens, all_heads * qk / t, q_in);
    Pass kv_up = Linear(lin, tokens, all_heads * (a.qk_head_dim + a.v_head_dim) / t, a.kv_lora_rank);
    qkv.fwd += q_up.fwd + kv_up.fwd;
    qkv.bwd += q_up.bwd + kv_up.bwd;
    proj = Linear(lin, tokens, h, all_heads * a.v_head_dim / t);
  } else {
    qkv = Linear(lin, tokens, (double(m.num_attention_heads) * dh + 2 * kv) / t, h);
    proj = Linear(lin, tokens, h, double(m.num_attention_heads) * dh / t);
  }
  // The MLP of an MoE layer (routed experts, shared experts, router,
  // permutation) or of a dense one, with its elementwise work.
  struct Mlp {
    double fwd = 0, bwd = 0;
    Pass fc1, fc2;      ///< its two GEMM layers (TP overlap hides behind them)
    double tokens = 0;  ///< token-rows through its fc2 (top-k copies for experts)
    double gemm_launches = 0, stream_launches = 0;  ///< its forward kernels
  };
  auto mlp_of = [&](bool moe) {
    Mlp out;
    Stream mew;
    auto add = [&](const Pass& p) {
      out.fwd += p.fwd;
      out.bwd += p.bwd;
    };
    auto gemms = [&](const Pass& fc1, const Pass& fc2) {
      add(fc1);
      add(fc2);
      out.fc1.fwd += fc1.fwd;
      out.fc1.bwd += fc1.bwd;
      out.fc2.fwd += fc2.fwd;
      out.fc2.bwd += fc2.bwd;
    };
    auto dense_mlp = [&](double width, double rows) {
      gemms(Linear(lin, rows, width * (m.swiglu ? 2 : 1) / t, h), Linear(lin, rows, h, width / t));
      mew.Add((m.swiglu ? 6 : 4) * rows * width / t);
      out.tokens += rows;
      out.gemm_launches += 2;
    };
    if (moe) {
      const double fe = m.moe_ffn_hidden_size;
      double local_experts = double(m.num_experts) / s.ep;
      // The busiest expert rank sets the pace: its experts see `imbalance`
      // times the mean load. Megatron-Core's all-to-all dispatcher takes each
      // GPU's sequence-parallel shard (tokens / tp), sends it over the EP group,
      // then all-gathers over the expert tensor-parallel group: an expert's
      // GEMMs run on etp shards of tokens, split etp ways (1 / tp of the tokens
      // and tp ways when etp = tp).
      double tokens_per_expert =
          tokens * m.moe_router_topk * s.ep / m.num_experts * s.expert_load_imbalance() * fold;
      gemms(Linear(lin, tokens_per_expert, fe * (m.swiglu ? 2 : 1) / et, h, local_experts),
            Linear(lin, tokens_per_expert, h, fe / et, local_experts));
      mew.Add((m.swiglu ? 6 : 4) * tokens * m.moe_router_topk * fe / t);
      out.tokens += tokens * m.moe_router_topk;
      add(Linear(g, tokens, m.num_experts, h));  // the router stays 16-bit
      out.gemm_launches += 3;  // grouped fc1 and fc2, the router
      // Permute before and unpermute after the experts: read and write each
      // token's top-k copies.
      mew.Add(2 * 4 * tokens * m.moe_router_topk * hs, 2);
      if (m.moe_shared_expert_intermediate_size > 0) dense_mlp(m.moe_shared_expert_intermediate_size, tokens);
      // The dispatcher's fixed cost per pass (spec::GpuSpec::moe_layer_overhead_s).
      out.fwd += g.moe_layer_overhead_s;
      out.bwd += g.moe_layer_overhead_s;
    } else {
      dense_mlp(f, tokens);
    }
    if (low_precision) {
      // Casts of each GEMM's input forward and of each GEMM's output
      // gradient backward; counted forward here and doubled by Stream::Bwd,
      // about what the backward casts add.
      const double width = moe ? m.moe_ffn_hidden_size : f;
      mew.Add(cast_bytes * out.tokens * (h + width / t), 2);
      // The experts' inputs are etp / tp of the tokens' rows (0 when etp = tp).
      if (moe) mew.Add(cast_bytes * tokens * m.moe_router_topk * (fold - 1) * h, 0);
    }
    out.fwd += mew.Fwd(g);
    out.bwd += mew.Bwd(g);
    out.stream_launches += mew.kernels;
    return out;
  };
  Stream ew;

  // --- Elementwise: two norms, two bias-dropout-adds, rotary embedding of
  // q and k.
  ew.Add(2 * 4 * tokens * hs, 2);
  ew.Add(2 * (6 + mask) * tokens * hs, 2);
  if (m.position_embedding_type == spec::PositionEmbedding::kRope) ew.Add(4 * tokens * (h + kv) / t);

  // --- Attention core.
  double core_fwd = 0, core_bwd = 0;
  const double d_qk = m.multi_latent_attention ? m.mla.qk_head_dim + m.mla.qk_pos_emb_head_dim : dh;
  const double d_v = m.multi_latent_attention ? m.mla.v_head_dim : dh;
  if (s.attention == spec::Attention::kClassic) {
    double batch = b * heads;
    double scores = GemmTime(g, sl, seq, d_qk, batch) + GemmTime(g, sl, d_v, seq, batch);
    Stream softmax;
    double elements = batch * sl * seq;
    softmax.Add(4 * elements);  // scale, mask, softmax: read and write 16-bit
    if (m.attention_dropout > 0) softmax.Add(5 * elements);
    core_fwd = scores + softmax.Fwd(g);
    core_bwd = 2 * scores + softmax.Bwd(g);
  } else {
    // Causal FlashAttention skips the masked half; backward does 2.5x the
    // forward FLOPs (it recomputes the scores).
    double flops = 0.5 * 2 * b * heads * sl * seq * (d_qk + d_v);
    // With context parallelism each ring step is one kernel over a chunk of
    // sl keys.
    AttentionShape shape{d_qk, sl, true, false};
    core_fwd = FlashAttentionTime(g, flops, shape);
    shape.backward = true;
    core_bwd = FlashAttentionTime(g, 2.5 * flops, shape);
  }
  // A sliding-window layer's FlashAttention visits only the key blocks of the
  // band: each query attends to min(window, position) keys. With context
  // parallelism its queries attend to the gathered keys of the whole
  // sequence (below), so the band is the whole sequence's.
  const bool windowed = m.window_layer_count() > 0 && m.window_size < m.seq_length &&
                        s.attention != spec::Attention::kClassic;
  double window_fwd = core_fwd, window_bwd = core_bwd;
  if (windowed) {
    const double flops = 2 * b * heads * sl * MeanKeysAttended(seq, m.window_size) * (d_qk + d_v);
    AttentionShape shape{d_qk, seq, true, false, double(m.window_size)};
    window_fwd = FlashAttentionTime(g, flops, shape);
    shape.backward = true;
    window_bwd = FlashAttentionTime(g, 2.5 * flops, shape);
  }

  const Mlp layer_mlp = mlp_of(m.is_moe());
  const Mlp dense_mlp = m.is_moe() ? mlp_of(false) : layer_mlp;
  BlockCost& layer = out.layer;
  layer.fwd = qkv.fwd + proj.fwd + layer_mlp.fwd + ew.Fwd(g) + core_fwd;
  layer.bwd = qkv.bwd + proj.bwd + layer_mlp.bwd + ew.Bwd(g) + core_bwd;
  layer.recompute_selective = core_fwd;
  if (low_precision) {
    // The attention GEMMs' casts.
    Stream casts;
    casts.Add(cast_bytes * tokens * (h + h / t), 2);
    layer.fwd += casts.Fwd(g);
    layer.bwd += casts.Bwd(g);
  }

  // --- Tensor parallelism: two all-reduces per pass, or with sequence
  // parallelism an all-gather and a reduce-scatter in their place.
  const ParallelGroups groups = PlaceGroups(c, s);
  const double act_bytes = 2 * tokens * h;
  double tp_collective = 0, all_gather = 0, reduce_scatter = 0;
  if (s.tp > 1) {
    const comm::GroupLayout& tp_group = groups[GroupKind::kTp];
    if (s.sequence_parallel) {
      reduce_scatter = comm::ReduceScatterTime(act_bytes, tp_group, c.fabrics);
      all_gather = comm::AllGatherTime(act_bytes, tp_group, c.fabrics);
      tp_collective = all_gather + reduce_scatter;
      // Overlapped low-precision layers all-gather their inputs already cast.
      if (low_precision && s.tp_comm_overlap) {
        all_gather = comm::AllGatherTime(act_bytes / 2 * GemmFormatOf(s.precision).value_bytes, tp_group, c.fabrics);
      }
    } else {
      tp_collective = comm::AllReduceTime(act_bytes, tp_group, c.fabrics);
    }
  }
  // The MLP's all-gather and reduce-scatter: the attention's, or in an MoE
  // layer whose experts have tensor-parallel groups of their own those of
  // Megatron-Core's dispatcher (all-to-all over EP, then all-gather over the
  // etp group; reduce-scatter before the combine): etp shards of the
  // sequence-parallel tokens, none with etp = 1.
  struct TpComm {
    double all_gather = 0, reduce_scatter = 0, collective = 0;
    double split = 1;  ///< the group's size: the overlap's chunks
  };
  const TpComm attention_tp{all_gather, reduce_scatter, tp_collective, t};
  TpComm expert_tp = attention_tp;
  if (m.is_moe() && !ExpertTpIsTp(c, s)) {
    expert_tp = TpComm{0, 0, 0, et};
    if (et > 1) {
      const comm::GroupLayout& etp_group = groups[GroupKind::kEtp];
      const double gathered = act_bytes * fold;
      expert_tp.reduce_scatter = comm::ReduceScatterTime(gathered, etp_group, c.fabrics);
      expert_tp.all_gather = comm::AllGatherTime(gathered, etp_group, c.fabrics);
      expert_tp.collective = expert_tp.all_gather + expert_tp.reduce_scatter;
      if (low_precision && s.tp_comm_overlap) {
        expert_tp.all_gather =
            comm::AllGatherTime(gathered / 2 * GemmFormatOf(s.precision).value_bytes, etp_group, c.fabrics);
      }
    }
  }
  // Each all-gather is split into tp chunks consumed by the GEMM after it,
  // each reduce-scatter fed by the GEMM before it: the first (last) chunk
  // waits, the rest hides behind the GEMM as far as it lasts, and what
  // hides still costs the GEMMs a fraction (they share SMs and HBM).
  auto tp_time = [&](const Mlp& mlp, const TpComm& mlp_tp, BlockCost* block) {
    if (!s.tp_comm_overlap) {
      block->tp_fwd = tp_collective + mlp_tp.collective;
      block->tp_bwd = tp_collective + mlp_tp.collective;
      return;
    }
    const double cost = g.tp_comm_overlap_cost;
    auto hide = [&](double comm, double gemm, double split) {
      const double rest = comm * (split - 1) / split;
      return comm / split + std::max(0.0, rest - gemm) + cost * std::min(rest, gemm);
    };
    block->tp_fwd = hide(all_gather, qkv.fwd, t) + hide(reduce_scatter, proj.fwd, t) +
                    hide(mlp_tp.all_gather, mlp.fc1.fwd, mlp_tp.split) +
                    hide(mlp_tp.reduce_scatter, mlp.fc2.fwd, mlp_tp.split);
    block->tp_bwd = hide(all_gather + reduce_scatter, qkv.bwd + proj.bwd, t) +
                    hide(mlp_tp.all_gather + mlp_tp.reduce_scatter, mlp.fc1.bwd + mlp.fc2.bwd, mlp_tp.split);
  };
  tp_time(layer_mlp, expert_tp, &layer);
  // Without CUDA graphs the host issues each kernel of a pass; it runs ahead
  // of the GPU, so a pass takes at least its kernels' issue time
  // (spec::GpuSpec::host_launch_s). Counted per pass: the GEMMs (backward:
  // data and weight gradients), the attention core, the elementwise kernels
  // and the TP collectives; what the GPU waits for the host shows as compute.
  const double attention_gemms = m.multi_latent_attention ? 4 : 2;
  auto host_floor = [&](const Mlp& mlp, const TpComm& mlp_tp, BlockCost* block) {
    if (g.host_launch_s <= 0 || s.cuda_graph_impl != spec::CudaGraphImpl::kNone) return;  // unset or graphed
    const double collectives = (tp_collective > 0 ? (s.sequence_parallel ? 2 : 1) : 0) +
                               (mlp_tp.collective > 0 ? (s.sequence_parallel || mlp_tp.split != t ? 2 : 1) : 0);
    const double gemms = attention_gemms + mlp.gemm_launches;
    const double others = 1 + ew.kernels + mlp.stream_launches + collectives;  // 1: the attention core
    const double fwd_launches = gemms + others;
    const double bwd_launches = 2 * gemms + others;
    block->fwd += std::max(0.0, fwd_launches * g.host_launch_s - (block->fwd + block->tp_fwd + block->cp_fwd));
    block->bwd += std::max(0.0, bwd_launches * g.host_launch_s - (block->bwd + block->tp_bwd + block->cp_bwd));
  };

  // --- Context parallelism: ring exchange of K and V chunks (and their
  // gradients backward), overlapped with the attention core.
  if (s.cp > 1) {
    // K and V of one chunk, 16-bit (with latent attention, as the
    // up-projections produce them: qk + rotary and v dims per head).
    const double kv_width = m.multi_latent_attention
                                ? double(m.num_attention_heads) *
                                      (m.mla.qk_head_dim + m.mla.qk_pos_emb_head_dim + m.mla.v_head_dim) / 2
                                : kv;
    out.cp_chunk_bytes = 2 * 2 * b * sl * kv_width / t;
    double step = comm::SendRecvTime(out.cp_chunk_bytes, groups[GroupKind::kCp], c.fabrics);
    double exchange = (s.cp - 1) * step;
    layer.cp_fwd = std::max(0.0, exchange - core_fwd);
    layer.cp_bwd = std::max(0.0, 2 * exchange - core_bwd);
  }

  // --- A sliding-window layer, as the difference from a full one.
  // Transformer Engine refuses sliding windows on the K/V ring (its p2p
  // cp_comm_type) and runs them with cp_comm_type all_gather: K and V
  // all-gathered before the attention, again in backward, and their
  // gradients reduce-scattered after it, none of it overlapped with the
  // attention core. It moves the whole sequence's K and V, as the ring does:
  // an exchange of only the chunks within the window would move
  // ceil(window / sl) chunks, which no framework railsim models runs.
  if (windowed) {
    BlockCost& w = out.window_change;
    w.fwd = window_fwd - core_fwd;
    w.bwd = window_bwd - core_bwd;
    w.recompute_selective = window_fwd - core_fwd;
    if (s.cp > 1) {
      out.cp_window_gather_bytes = s.cp * out.cp_chunk_bytes;
      const comm::GroupLayout& cp_group = groups[GroupKind::kCp];
      const double gather = comm::AllGatherTime(out.cp_window_gather_bytes, cp_group, c.fabrics);
      const double scatter = comm::ReduceScatterTime(out.cp_window_gather_bytes, cp_group, c.fabrics);
      w.cp_fwd = gather - layer.cp_fwd;
      w.cp_bwd = gather + scatter - layer.cp_bwd;
    }
  }

  // --- Embedding: gather rows, add positions, dropout; a vocab-parallel
  // all-reduce (reduce-scatter with sequence parallelism).
  Stream emb;
  emb.Add((4 + mask) * tokens * hs, 2);
  out.embedding.fwd = emb.Fwd(g);
  out.embedding.bwd = emb.Bwd(g);
  out.embedding.tp_fwd = tp_collective / (s.sequence_parallel ? 2 : 1);

  // --- Output: final norm, logits GEMM, fp32 vocab-parallel cross entropy.
  Pass logits = Linear(g, tokens, vocab / t, h);
  Stream loss;
  loss.Add(4 * tokens * hs);
  loss.Add(3 * 4 * tokens * vocab / t + 2 * tokens * vocab / t, 3);
  out.output.fwd = logits.fwd + loss.Fwd(g);
  out.output.bwd = logits.bwd + loss.Bwd(g);
  out.output.tp_fwd = s.sequence_parallel ? tp_collective / 2 : 0;
  out.output.tp_bwd = s.sequence_parallel ? tp_collective / 2 : tp_collective;

  // A dense layer of an MoE model: the same but for its MLP.
  out.dense_layer = layer;
  out.dense_layer.fwd += dense_mlp.fwd - layer_mlp.fwd;
  out.dense_layer.bwd += dense_mlp.bwd - layer_mlp.bwd;
  tp_time(dense_mlp, attention_tp, &out.dense_layer);
  host_floor(dense_mlp, attention_tp, &out.dense_layer);
  host_floor(layer_mlp, expert_tp, &layer);

  out.p2p_bytes = act_bytes / t;  // scatter-gather (or sequence-parallel) sends 1/tp
  out.memory = ComputeLayerMemory(c, s);
  out.a2a_bytes = m.is_moe() ? 2 * tokens * m.moe_router_topk * h / (s.sequence_parallel ? t : 1) : 0;
  if (m.is_moe()) {
    comm::MoeDispatch& d = out.moe_dispatch;
    d.tokens = tokens / (s.sequence_parallel ? t : 1);
    d.bytes_per_token = comm::DispatchBytesPerToken(m.hidden_size, s.moe_dispatch_precision);
    d.experts = m.num_experts;
    d.topk = m.moe_router_topk;
    d.max_domains = s.moe_max_domains;
    d.imbalance = s.expert_load_imbalance();
    out.moe_combine = d;
    out.moe_combine.bytes_per_token = 2 * h;
  }
  return out;
}

}  // namespace

LayerCosts ComputeLayerCosts(const PerfContext& c, const spec::Strategy& s) {
  LayerCosts out = ComputeLayerCostsIn(c, s);
  out.bf16_layer = out.layer;
  out.bf16_dense_layer = out.dense_layer;
  const int n = c.model.num_layers;
  if (s.Bf16LayersAtStart(n) + s.Bf16LayersAtEnd(n) > 0) {
    spec::Strategy bf16 = s;
    bf16.precision = spec::Precision::kBf16;
    bf16.low_precision_params = false;
    bf16.bf16_layers_at_start = bf16.bf16_layers_at_end = -1;
    const LayerCosts high = ComputeLayerCostsIn(c, bf16);
    out.bf16_layer = high.layer;
    out.bf16_dense_layer = high.dense_layer;
  }
  return out;
}

}  // namespace railsim::perf
