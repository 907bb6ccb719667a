// The rows of the flag tables (request/flag_table.h): each flag's spelling, help
// and field, written once.
#include "railsim/request/flag_table.h"

#include <algorithm>
#include <type_traits>

namespace railsim::request {
namespace {

template <typename F>
FlagRow<F> Option(const char* flag, const char* help, std::string* (*text)(F&), bool show_default = true) {
  FlagRow<F> row;
  row.flag = flag;
  row.help = help;
  row.text = text;
  row.show_default = show_default;
  return row;
}

template <typename F>
FlagRow<F> Switch(const char* flag, const char* help, bool* (*on)(F&)) {
  FlagRow<F> row;
  row.flag = flag;
  row.help = help;
  row.on = on;
  row.show_default = false;
  return row;
}

template <typename F>
FlagRow<F> Required(FlagRow<F> row) {
  row.required = true;
  row.show_default = false;
  return row;
}

template <typename F>
FlagRow<F> Given(FlagRow<F> row, std::type_identity_t<bool* (*)(F&)> given) {
  row.given = given;
  return row;
}

template <typename F>
FlagRow<F> AsList(FlagRow<F> row) {
  row.list = true;
  return row;
}

template <typename F>
FlagRow<F> Alias(FlagRow<F> row, const char* alias) {
  row.alias = alias;
  return row;
}

// A row of an inner struct (MoeFlags, ClusterFlags) as a row of a struct
// that holds one (where `holder` says).
template <typename F, typename Inner>
FlagRow<F> Nested(const FlagRow<Inner>& inner, std::type_identity_t<Inner* (*)(F&)> holder) {
  FlagRow<F> row;
  row.flag = inner.flag;
  row.alias = inner.alias;
  row.help = inner.help;
  row.required = inner.required;
  row.show_default = inner.show_default;
  row.list = inner.list;
  if (inner.text) row.text = [text = inner.text, holder](F& f) { return text(*holder(f)); };
  if (inner.on) row.on = [on = inner.on, holder](F& f) { return on(*holder(f)); };
  if (inner.given) row.given = [given = inner.given, holder](F& f) { return given(*holder(f)); };
  return row;
}

// Short names for the tables' accessor lambdas.
using S = StrategyFlags;
using M = MoeFlags;
using J = JobFlags;
using Q = SearchFlags;
using N = NetworkFlags;
using O = ScenarioOverrides;
using P = CompareFlags;
using R = ReportFlags;
using F = FailureFlags;
using T = ClusterStudyFlags;
using C = ClusterFlags;
using A = AllToAllFlags;
using L = CollectiveFlags;

// The cluster, network and simulation rows alltoall and collective share;
// `ideal`: the network may be the ideal one (collective).
std::vector<FlagRow<C>> ClusterRows(bool ideal) {
  return {
      Required(Option<C>("--system", "system preset or JSON file", [](C& f) { return &f.system; })),
      Required(Option<C>("--gpus", "total GPUs N", [](C& f) { return &f.gpus; })),
      Option<C>("--hb-size", "override the system's HB domain size K", [](C& f) { return &f.hb_size; }, false),
      Alias(Option<C>("--network", ideal ? "rail-only, rail-optimized or ideal" : "rail-only or rail-optimized",
                      [](C& f) { return &f.network; }),
            "--design"),
      Option<C>("--radix", "switch radix (default 64, larger if 64 needs over three tiers)",
                [](C& f) { return &f.radix; }, false),
      Option<C>("--oversubscription", "leaf down:up ratio", [](C& f) { return &f.oversubscription; }),
      Switch<C>("--simulate", "also simulate every flow on the built network", [](C& f) { return &f.simulate; }),
      Option<C>("--routing", "ecmp or d-mod-k", [](C& f) { return &f.routing; }),
      Option<C>("--seed", "ECMP hash seed", [](C& f) { return &f.seed; }),
      Option<C>("--max-memory", "refuse simulations estimated to need more memory than this",
                [](C& f) { return &f.max_memory; }),
      Option<C>("--threads", "simulator threads (the results do not depend on them)",
                [](C& f) { return &f.threads; }),
      Option<C>("--max-gpus", "refuse to build graphs larger than this", [](C& f) { return &f.max_gpus; }),
  };
}

// The flags that override a scenario's entries (compare and report).
std::vector<FlagRow<O>> OverrideRows() {
  return {
      Option<O>("--gpus", "override the scenario's cluster size", [](O& f) { return &f.gpus; }, false),
      AsList(Option<O>("--hb-sizes", "override its HB domain sizes, comma-separated (8,256)",
                       [](O& f) { return &f.hb_sizes; }, false)),
      AsList(Option<O>("--radixes", "override its switch radixes, comma-separated (64,128)",
                       [](O& f) { return &f.radixes; }, false)),
      Option<O>("--port-speed", "override its link rate (400Gbps)", [](O& f) { return &f.port_speed; }, false),
      Option<O>("--model", "override its model (preset or file)", [](O& f) { return &f.model; }, false),
      Option<O>("--seq-length",
                "override the training sequence length of its model and MoE model (a Hugging Face config.json "
                "gives its pre-training context)",
                [](O& f) { return &f.seq_length; }, false),
      Option<O>("--system", "override its system (preset or file)", [](O& f) { return &f.system; }, false),
      AsList(Option<O>("--global-batch-sizes", "override its global batch sizes, comma-separated",
                       [](O& f) { return &f.batches; }, false)),
      Option<O>("--moe-model", "override its MoE model (preset or file)", [](O& f) { return &f.moe_model; }, false),
      Option<O>("--moe-global-batch-size", "override the MoE model's global batch", [](O& f) { return &f.moe_batch; },
                false),
      Option<O>("--moe-max-domains", "override the MoE model's node-limited routing (0: any)",
                [](O& f) { return &f.moe_max_domains; }, false),
      Option<O>("--allow-idle-gpus",
                "searches may leave up to this many GPUs idle (whole HB domains) when no layout uses them all",
                [](O& f) { return &f.allow_idle; }, false),
  };
}

}  // namespace

std::string KeywordOf(const std::string& flag) {
  std::string keyword = flag.substr(flag.find_first_not_of('-'));
  std::replace(keyword.begin(), keyword.end(), '-', '_');
  return keyword;
}

std::string InKeywords(const Error& e) {
  const std::string& where = e.where();
  if (!where.starts_with("--") || where.size() < 3 || where[2] == '-') return e.what();
  const size_t end = std::min(where.find(' '), where.size());
  return Error(KeywordOf(where.substr(0, end)) + where.substr(end), e.message()).what();
}

const std::vector<FlagRow<ModelFlags>>& ModelFlagTable() {
  static const std::vector<FlagRow<ModelFlags>> rows = {
      Option<ModelFlags>("--model", "a preset, a model JSON file or a Hugging Face config.json",
                         [](ModelFlags& f) { return &f.model; }, false),
      Option<ModelFlags>("--seq-length",
                         "training sequence length (default: the model's; a config.json's is its pre-training context)",
                         [](ModelFlags& f) { return &f.seq_length; }, false),
  };
  return rows;
}

const std::vector<FlagRow<MoeFlags>>& MoeFlagTable() {
  static const std::vector<FlagRow<M>> rows = {
      Option<M>("--moe-alltoall",
                "MoE dispatch: forwarded (NIC once per HB domain reached, then NVLink), direct (any NIC to any "
                "NIC) or auto (forwarded on Rail-only)",
                [](M& f) { return &f.alltoall; }),
      Option<M>("--moe-imbalance", "busiest expert rank's load over the mean (1 = balanced)",
                [](M& f) { return &f.imbalance; }),
      Option<M>("--moe-max-domains", "node-limited routing: HB domains each token may reach (DeepSeek-V3: 4), or any",
                [](M& f) { return &f.max_domains; }),
      Option<M>("--moe-dispatch-precision",
                "MoE dispatch payload: bf16, or fp8 with one fp32 scale per 128 values (DeepEP, DeepSeek-V3); "
                "the combine stays bf16",
                [](M& f) { return &f.dispatch_precision; }),
      Switch<M>("--moe-overlap", "run dispatch and combine behind the layer's compute of another micro-batch",
                [](M& f) { return &f.overlap; }),
  };
  return rows;
}

const std::vector<FlagRow<JobFlags>>& JobFlagTable(bool design, bool search) {
  auto table = [](bool design, bool search) {
    std::vector<FlagRow<J>> r = {
        Required(Option<J>("--system", "system preset or JSON file", [](J& f) { return &f.system; })),
        Required(Option<J>("--gpus", "total GPUs N", [](J& f) { return &f.gpus; })),
        Required(Option<J>("--global-batch-size", "sequences per iteration", [](J& f) { return &f.global_batch; })),
        design ? Alias(Option<J>("--design", "rail-optimized, rail-only or fat-tree", [](J& f) { return &f.network; }),
                       "--network")
               : Alias(Option<J>("--network", "rail-only, rail-optimized or ideal (one HB domain, K = N)",
                                 [](J& f) { return &f.network; }),
                       "--design"),
        Option<J>("--placement",
                  "rank order fastest first (tp-cp-ep-dp-pp is Megatron's; e.g. dp-tp-pp) or a placement JSON file",
                  [](J& f) { return &f.placement; }),
        Option<J>("--hb-size", "override the system's HB domain size K (what-if)", [](J& f) { return &f.hb_size; },
                  false),
        Option<J>("--gpus-per-domain",
                  "the job uses N GPUs of each HB domain (default: all K); --gpus is a multiple of N, the domains "
                  "and the network are built whole, the other K - N GPUs of each domain stay idle",
                  [](J& f) { return &f.gpus_per_domain; }, false),
        Option<J>("--attention", "flash, classic (materialised softmax) or stack (the stack's)",
                  [](J& f) { return &f.attention; }),
        Option<J>("--cuda-graph-impl",
                  "none (eager: a layer's pass is no faster than the host issues its kernels, the system's "
                  "host_launch), local or transformer_engine (captured layers); not given: the host keeps up",
                  [](J& f) { return &f.cuda_graph_impl; }, false),
        Option<J>("--stack",
                  "software stack profile: megatron-2021, megatron-core, nemo, torchtitan or fsdp (its attention, "
                  "overlaps, optimizer defaults and fixed costs; flags given override them)",
                  [](J& f) { return &f.stack; }),
        Option<J>("--iteration-overhead",
                  "the run's fixed cost per iteration (logging, timers, data loading), e.g. 227ms for Megatron-LM's "
                  "functional tests (default: the stack's, else the system's; the presets' is none, as production "
                  "runs at scale show)",
                  [](J& f) { return &f.iteration_overhead; }, false),
        Option<J>("--radix", "switch radix of the NIC network timed (default 64, larger if 64 needs over three tiers)",
                  [](J& f) { return &f.radix; }, false),
        Option<J>("--oversubscription", "leaf down:up ratio of the NIC network",
                  [](J& f) { return &f.oversubscription; }),
    };
    for (FlagRow<J>& row : r) {
      if (!search || std::string(row.flag) != "--gpus-per-domain") continue;
      row.list = true;
      row.help = "the job uses N GPUs of each HB domain (default: all K), or tries several: a list (64,16) or "
                 "auto (the whole domain and Slurm segments of 64, 16 and 4 GPUs); --gpus is a multiple of N, the "
                 "domains and the network are built whole";
    }
    return r;
  };
  static const std::vector<FlagRow<J>> tables[2][2] = {{table(false, false), table(false, true)},
                                                        {table(true, false), table(true, true)}};
  return tables[design][search];
}

const std::vector<FlagRow<SearchFlags>>& SearchFlagTable() {
  static const std::vector<FlagRow<Q>> rows = [] {
    std::vector<FlagRow<Q>> r = {
        Option<Q>("--top", "how many of the best strategies to print", [](Q& f) { return &f.top; }),
        Option<Q>("--threads", "worker threads (default: all cores)", [](Q& f) { return &f.threads; }, false),
        Option<Q>("--max-strategies", "refuse searches larger than this", [](Q& f) { return &f.max_strategies; }),
        Option<Q>("--precision", "GEMM precision to explore: bf16, fp8, mxfp8, fp4 or any (every one the GPU runs)",
                  [](Q& f) { return &f.precision; }),
        Switch<Q>("--no-tp-comm-overlap",
                  "sequence-parallel strategies without TP-communication overlap (frameworks without it)",
                  [](Q& f) { return &f.no_tp_comm_overlap; }),
        Switch<Q>("--explore-optimizer",
                  "also try every data-parallel sharding (ZeRO-0 to 3) and optimizer precision (main grads, "
                  "master weights, Adam moments)",
                  [](Q& f) { return &f.explore_optimizer; }),
    };
    for (const FlagRow<M>& m : MoeFlagTable()) r.push_back(Nested<Q>(m, [](Q& f) { return &f.moe; }));
    r.push_back(Option<Q>("--expert-tensor-parallel-size",
                          "MoE: expert tensor-parallel degrees to try: any (tp and 1), tp (Megatron-Core's default) "
                          "or one degree; ep ranges over tp x cp x dp (MoE parallel folding)",
                          [](Q& f) { return &f.etp; }));
    r.push_back(Option<Q>("--allow-idle-gpus",
                          "also search layouts that leave up to this many GPUs idle (whole HB domains), reporting "
                          "how many",
                          [](Q& f) { return &f.allow_idle; }));
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<StrategyFlags>>& StrategyFlagTable() {
  static const std::vector<FlagRow<S>> rows = [] {
    std::vector<FlagRow<S>> r = {
        Required(Option<S>("--tp", "tensor-parallel degree", [](S& f) { return &f.tp; })),
        Required(Option<S>("--pp", "pipeline-parallel degree", [](S& f) { return &f.pp; })),
        Option<S>("--dp", "data-parallel degree (default N / (tp x pp x cp))", [](S& f) { return &f.dp; }, false),
        Option<S>("--cp", "context-parallel degree", [](S& f) { return &f.cp; }),
        Option<S>("--ep", "expert-parallel degree (MoE)", [](S& f) { return &f.ep; }),
        Option<S>("--expert-tensor-parallel-size",
                  "MoE: tensor-parallel degree of the routed experts, or tp (Megatron-Core's default); ep x this "
                  "must divide tp x cp x dp (MoE parallel folding)",
                  [](S& f) { return &f.etp; }),
        Option<S>("--vp", "virtual pipeline stages per rank (1 = no interleaving)", [](S& f) { return &f.vp; }),
        Option<S>("--microbatch-group-size-per-virtual-pipeline-stage",
                  "with --vp > 1, micro-batches run through one virtual stage before the next (Megatron-Core's "
                  "N, in [pp, micro-batches]; larger holds more warm-up activations, hides the wrap-around sends)",
                  [](S& f) { return &f.group_size; }),
        Switch<S>("--account-for-embedding-in-pipeline-split",
                  "Megatron-Core's uneven split: the input embedding counts as one layer of the pipeline split "
                  "(the first stage holds one transformer layer fewer)",
                  [](S& f) { return &f.account_for_embedding; }),
        Switch<S>("--account-for-loss-in-pipeline-split",
                  "the same for the loss (the last stage holds one transformer layer fewer)",
                  [](S& f) { return &f.account_for_loss; }),
        Option<S>("--decoder-first-pipeline-num-layers",
                  "transformer layers on the first pipeline stage; the middle stages share the rest evenly "
                  "(Megatron-Core's uneven split)",
                  [](S& f) { return &f.decoder_first_layers; }, false),
        Option<S>("--decoder-last-pipeline-num-layers", "transformer layers on the last pipeline stage",
                  [](S& f) { return &f.decoder_last_layers; }, false),
        Required(Option<S>("--micro-batch-size", "sequences per micro-batch", [](S& f) { return &f.micro_batch; })),
        Option<S>("--recompute", "none, selective or full", [](S& f) { return &f.recompute; }),
        Switch<S>("--sequence-parallel", "sequence parallelism (with tp > 1)",
                  [](S& f) { return &f.sequence_parallel; }),
        Switch<S>("--distributed-optimizer", "shard optimizer states (ZeRO-1)",
                  [](S& f) { return &f.distributed_optimizer; }),
        Switch<S>("--no-dp-overlap", "do not overlap data-parallel communication with compute",
                  [](S& f) { return &f.no_dp_overlap; }),
        Switch<S>("--grad-reduce-in-bf16", "reduce gradients in 16-bit, not fp32",
                  [](S& f) { return &f.grad_reduce_in_bf16; }),
        Switch<S>("--tp-comm-overlap",
                  "overlap the sequence-parallel all-gathers and reduce-scatters with the GEMMs (needs "
                  "--sequence-parallel)",
                  [](S& f) { return &f.tp_comm_overlap; }),
        Switch<S>("--no-overlap-p2p-communication",
                  "with --vp > 1, send between pipeline stages in the critical path instead of behind compute",
                  [](S& f) { return &f.no_p2p_overlap; }),
        Option<S>("--precision",
                  "the transformer layers' GEMM format: bf16, fp8 (one scale per tensor), mxfp8 (FP8 with a scale "
                  "per 32 values) or fp4 (NVFP4); mxfp8 and fp4 need Blackwell's block-scaled tensor cores",
                  [](S& f) { return &f.precision; }),
        Switch<S>("--fp8-params",
                  "keep the weights only in FP8 (Megatron-Core's --fp8-param-gather: no 16-bit copy, 1-byte "
                  "parameter all-gather); with --precision fp8 or mxfp8",
                  [](S& f) { return &f.fp8_params; }),
        Switch<S>("--fp4-params",
                  "keep the weights only in NVFP4 (Megatron-Core's --fp4-param-gather); with --precision fp4",
                  [](S& f) { return &f.fp4_params; }),
        Option<S>("--num-layers-at-start-in-bf16",
                  "transformer layers at the start kept in bf16 under a low precision (auto: none)",
                  [](S& f) { return &f.bf16_layers_at_start; }),
        Option<S>("--num-layers-at-end-in-bf16",
                  "transformer layers at the end kept in bf16 under a low precision (auto: none; NVIDIA's NVFP4 "
                  "recipe keeps about 15% of them, most at the end)",
                  [](S& f) { return &f.bf16_layers_at_end; }),
        Option<S>("--main-grads-dtype", "main-gradient buffer: fp32, bf16 or stack (the stack profile's)",
                  [](S& f) { return &f.optimizer.main_grads_dtype; }),
        Option<S>("--main-params-dtype", "master weights: fp32, fp16 (16-bit remainders of the fp32 master), none or stack",
                  [](S& f) { return &f.optimizer.main_params_dtype; }),
        Option<S>("--exp-avg-dtype", "Adam's first moment: fp32, bf16 or stack",
                  [](S& f) { return &f.optimizer.exp_avg_dtype; }),
        Option<S>("--exp-avg-sq-dtype", "Adam's second moment: fp32, bf16 or stack",
                  [](S& f) { return &f.optimizer.exp_avg_sq_dtype; }),
        Given<S>(Option<S>("--data-parallel-sharding",
                        "shard over data-parallel ranks: optimizer (ZeRO-1), gradients (ZeRO-2) or full "
                        "(ZeRO-3/FSDP)",
                        [](S& f) { return &f.optimizer.data_parallel_sharding; }, false),
              [](S& f) { return &f.optimizer.data_parallel_sharding_given; }),
        Option<S>("--fsdp-shard-group-size",
                  "hybrid sharding: shard within groups of this many data-parallel ranks, replicate across them "
                  "(all = no replicas)",
                  [](S& f) { return &f.optimizer.fsdp_shard_group_size; }),
    };
    for (const FlagRow<M>& m : MoeFlagTable()) r.push_back(Nested<S>(m, [](S& f) { return &f.moe; }));
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<AllToAllFlags>>& AllToAllFlagTable() {
  static const std::vector<FlagRow<A>> rows = [] {
    std::vector<FlagRow<A>> r;
    for (const FlagRow<C>& c : ClusterRows(false)) r.push_back(Nested<A>(c, [](A& f) { return &f.cluster; }));
    for (FlagRow<A> row : {
             Option<A>("--hb-bw", "HB bandwidth per GPU per direction, used as given (no efficiency, no latency)",
                       [](A& f) { return &f.hb_bw; }, false),
             Option<A>("--nic-bw", "NIC bandwidth per GPU per direction, used as given", [](A& f) { return &f.nic_bw; },
                       false),
             Required(Option<A>("--bytes-per-pair", "bytes each GPU sends to every other GPU",
                                [](A& f) { return &f.bytes_per_pair; })),
             Option<A>("--schedule", "Rail-only forwarding: sequential or pipelined", [](A& f) { return &f.schedule; }),
             Option<A>("--chunks", "chunks of the pipelined schedule", [](A& f) { return &f.chunks; }),
             Option<A>("--baseline",
                       "Rail-only with --simulate: simulate or analytic (time the rail-optimized baseline how)",
                       [](A& f) { return &f.baseline; }),
         }) {
      r.push_back(row);
    }
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<CollectiveFlags>>& CollectiveFlagTable() {
  static const std::vector<FlagRow<L>> rows = [] {
    std::vector<FlagRow<L>> r;
    for (const FlagRow<C>& c : ClusterRows(true)) r.push_back(Nested<L>(c, [](L& f) { return &f.cluster; }));
    for (FlagRow<L> row : {
             Option<L>("--gpus-per-domain",
                       "the ranks use N GPUs of each HB domain (default: all K); --gpus is a multiple of N, the "
                       "domains and the network are built whole",
                       [](L& f) { return &f.cluster.gpus_per_domain; }, false),
             Required(Option<L>("--op",
                                "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send-recv, or "
                                "moe-dispatch (one MoE layer's token dispatch of --model on the ep groups)",
                                [](L& f) { return &f.op; })),
             Option<L>("--bytes", "buffer per member (all-to-all: what each member sends in total)",
                       [](L& f) { return &f.bytes; }, false),
             Option<L>("--micro-batch-size", "moe-dispatch: sequences per micro-batch",
                       [](L& f) { return &f.micro_batch; }),
         }) {
      r.push_back(row);
    }
    for (const FlagRow<M>& m : MoeFlagTable()) r.push_back(Nested<L>(m, [](L& f) { return &f.moe; }));
    for (FlagRow<L> row : {
             Required(Option<L>("--group", "tp, cp, ep, dp, pp or all: the groups as estimate places them",
                                [](L& f) { return &f.group; })),
             Option<L>("--algorithm",
                       "auto, ring, tree, hierarchical, in-switch, direct, forwarded, nvls-tree, pat or collnet",
                       [](L& f) { return &f.algorithm; }),
             Option<L>("--protocol",
                       "NCCL protocol: ll, ll128, simple, or auto (NCCL's least estimated time; needs the system's "
                       "NCCL model)",
                       [](L& f) { return &f.protocol; }),
             Option<L>("--tp", "tensor-parallel degree", [](L& f) { return &f.tp; }),
             Option<L>("--pp", "pipeline-parallel degree", [](L& f) { return &f.pp; }),
             Option<L>("--dp", "data-parallel degree (default N / (tp x pp x cp))", [](L& f) { return &f.dp; }, false),
             Option<L>("--cp", "context-parallel degree", [](L& f) { return &f.cp; }),
             Option<L>("--ep", "expert-parallel degree", [](L& f) { return &f.ep; }),
             Option<L>("--expert-tensor-parallel-size",
                       "tensor-parallel degree of the routed experts, or tp (Megatron-Core's default): the ep groups "
                       "run over etp x ep x expert-dp (MoE parallel folding)",
                       [](L& f) { return &f.etp; }),
             Option<L>("--schedule",
                       "forwarded all-to-all and moe-dispatch: sequential, pipelined, or auto (sequential for "
                       "all-to-all, pipelined for moe-dispatch as DeepEP runs it)",
                       [](L& f) { return &f.schedule; }),
             Option<L>("--chunks", "chunks of the pipelined schedule", [](L& f) { return &f.chunks; }),
             Option<L>("--placement",
                       "rank order fastest first (tp-cp-ep-dp-pp is Megatron's) or a placement file, as estimate "
                       "takes it: where the group's members sit",
                       [](L& f) { return &f.placement; }),
         }) {
      r.push_back(row);
    }
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<NetworkFlags>>& NetworkFlagTable(bool cost) {
  auto table = [](bool cost) {
    std::vector<FlagRow<N>> r;
    if (!cost) {
      r.push_back(Alias(Required(Option<N>("--design", "rail-only, rail-optimized or fat-tree",
                                           [](N& f) { return &f.design; })),
                        "--network"));
    }
    for (FlagRow<N> row : {
             Required(Option<N>("--gpus", "total GPUs N", [](N& f) { return &f.gpus; })),
             Required(Option<N>("--hb-size", "GPUs per HB (NVLink) domain K; divides N",
                                [](N& f) { return &f.hb_size; })),
             Required(Option<N>("--radix", "switch radix k (ports per switch, even)", [](N& f) { return &f.radix; })),
             Option<N>("--port-speed", "network link rate", [](N& f) { return &f.port_speed; }),
             Option<N>("--oversubscription", "leaf down:up ratio R >= 1", [](N& f) { return &f.oversubscription; }),
             Option<N>("--gpus-per-nic", "GPUs that share one NIC (2: 4 NICs per 8 GPUs); divides K",
                       [](N& f) { return &f.gpus_per_nic; }),
             Option<N>("--catalog", "cost/power catalog: preset name or JSON file", [](N& f) { return &f.catalog; }),
             Option<N>("--max-gpus", "refuse to build graphs larger than this", [](N& f) { return &f.max_gpus; }),
         }) {
      r.push_back(row);
    }
    if (cost) {
      r.push_back(Option<N>("--server",
                            "GPU server of the catalog (dgx-h100, dgx-h200, dgx-b200, dgx-b300, gb200-nvl72, "
                            "gb300-nvl72, rubin-nvl144): adds the whole cluster's cost and the network's share",
                            [](N& f) { return &f.server; }, false));
    }
    return r;
  };
  static const std::vector<FlagRow<N>> network = table(false), cost_rows = table(true);
  return cost ? cost_rows : network;
}

const std::vector<FlagRow<FailureFlags>>& FailureFlagTable() {
  static const std::vector<FlagRow<F>> rows = [] {
    std::vector<FlagRow<F>> r = {
        Alias(Option<F>("--network", "rail-only, rail-optimized, fat-tree or all", [](F& f) { return &f.network; }),
              "--design"),
        Option<F>("--system", "system preset or JSON file", [](F& f) { return &f.system; }),
        Required(Option<F>("--gpus", "total GPUs N", [](F& f) { return &f.gpus; })),
        Option<F>("--hb-size", "GPUs per HB domain K (default: the system's)", [](F& f) { return &f.hb_size; }, false),
        Option<F>("--gpus-per-domain",
                  "the job uses N GPUs of each HB domain (default: all K); --gpus is a multiple of N, the domains "
                  "and the network are built whole, and a failure of an idle GPU does not stop the job",
                  [](F& f) { return &f.gpus_per_domain; }, false),
        Option<F>("--radix", "switch radix (default 64, larger if 64 needs over three tiers)",
                  [](F& f) { return &f.radix; }, false),
        Option<F>("--oversubscription", "leaf down:up ratio", [](F& f) { return &f.oversubscription; }),
        Option<F>("--global-batch-size", "sequences per iteration (with --model)",
                  [](F& f) { return &f.global_batch; }, false),
        Option<F>("--attention", "flash or classic", [](F& f) { return &f.attention; }),
    };
    // The strategy is optional here: without --model only the network is studied.
    for (const FlagRow<S>& s : StrategyFlagTable()) {
      r.push_back(Nested<F>(s, [](F& f) { return &f.strategy; }));
      r.back().required = false;
    }
    for (FlagRow<F> row : {
             AsList(Given(Option<F>("--fail",
                                    "devices down, comma-separated: gpu17, nic17, hb5, switch:rail3/leaf2, "
                                    "switch:spine0, link:rail0/leaf1-rail0/spine3",
                                    [](F& f) { return &f.fail; }, false),
                          [](F& f) { return &f.fail_given; })),
             Option<F>("--fail-file", "a JSON array of device names, as --fail takes them",
                       [](F& f) { return &f.fail_file; }, false),
             Option<F>("--trials", "Monte Carlo trials (default 10000)", [](F& f) { return &f.trials; }, false),
             Option<F>("--days", "length of the training run simulated, days (default 30)",
                       [](F& f) { return &f.days; }, false),
             Option<F>("--seed", "Monte Carlo seed", [](F& f) { return &f.seed; }),
             Option<F>("--failure-catalog", "failure rates and repair times: preset or JSON file",
                       [](F& f) { return &f.failure_catalog; }),
             Option<F>("--checkpoint-interval", "training progress between checkpoints",
                       [](F& f) { return &f.checkpoint_interval; }),
             Option<F>("--restart-time", "time to restart the job after an interruption",
                       [](F& f) { return &f.restart_time; }),
             Given(Option<F>("--spare-policy",
                             "any, same-rail, domain or ocs (default: any on rail-optimized and fat-tree, same-rail "
                             "on Rail-only)",
                             [](F& f) { return &f.spare_policy; }, false),
                   [](F& f) { return &f.policy_given; }),
             Option<F>("--target-availability", "share of the run the spares must cover every part under repair",
                       [](F& f) { return &f.target_availability; }),
             Switch<F>("--no-simulate", "skip the simulator's check of the degraded collective",
                       [](F& f) { return &f.no_simulate; }),
         }) {
      r.push_back(row);
    }
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<ClusterStudyFlags>>& ClusterStudyFlagTable() {
  static const std::vector<FlagRow<T>> rows = {
      Option<T>("--trace", "job trace CSV (submit_s,duration_s,gpus[,model,state,...]) or 'synthetic'",
                [](T& f) { return &f.trace; }),
      Option<T>("--topology",
                "switch map CSV (host,asw,psw,dsw) as the network, in place of --gpus/--network; GPUs per host = "
                "the system's HB domain size",
                [](T& f) { return &f.topology; }, false),
      Option<T>("--system", "system preset or JSON file", [](T& f) { return &f.system; }),
      Option<T>("--gpus", "total GPUs N of the cluster", [](T& f) { return &f.gpus; }, false),
      Option<T>("--hb-size", "GPUs per HB domain K (default: the system's)", [](T& f) { return &f.hb_size; }, false),
      Option<T>("--radix", "switch radix (default 64, larger if 64 needs over three tiers)",
                [](T& f) { return &f.radix; }, false),
      Option<T>("--port-speed", "network link rate (default: the system's NIC)", [](T& f) { return &f.port_speed; },
                false),
      Option<T>("--oversubscription", "leaf down:up ratio", [](T& f) { return &f.oversubscription; }),
      Alias(Option<T>("--network", "rail-only, rail-optimized, fat-tree or all", [](T& f) { return &f.network; }),
            "--design"),
      Option<T>("--policy",
                "first-fit, domain-packing, fewest-leaves, block, wait-for-fit, a comma-separated list of them, or all",
                [](T& f) { return &f.policy; }),
      Option<T>("--segment", "block: GPUs per segment, each inside one HB domain (default: K)",
                [](T& f) { return &f.segment; }, false),
      Option<T>("--max-wait", "wait-for-fit: longest wait for a packed placement", [](T& f) { return &f.max_wait; }),
      Switch<T>("--no-backfill", "strict FIFO: only the queue's head may start", [](T& f) { return &f.no_backfill; }),
      Switch<T>("--no-stretch",
                "runtime = the trace's duration (placement slowdown measured, not applied), as schedulers' "
                "simulations assume",
                [](T& f) { return &f.no_stretch; }),
      Option<T>("--samples", "most moments at which contention is simulated, per run", [](T& f) { return &f.samples; }),
      Option<T>("--threads", "runs (design x policy) side by side (default: all cores)", [](T& f) { return &f.threads; },
                false),
      Option<T>("--jobs", "synthetic: jobs", [](T& f) { return &f.jobs; }),
      Option<T>("--arrivals-per-hour", "synthetic: Poisson arrival rate", [](T& f) { return &f.arrivals_per_hour; }),
      Option<T>("--size-mix",
                "synthetic: GPUs:share pairs, e.g. 8:0.5,64:0.5 (default: Lingjun's mix "
                "1:0.093,8:0.463,32:0.341,128:0.102,1024:0.001)",
                [](T& f) { return &f.size_mix; }, false),
      Option<T>("--duration-median", "synthetic: median job duration (lognormal)",
                [](T& f) { return &f.duration_median; }),
      Option<T>("--duration-p90", "synthetic: 90th percentile of the duration", [](T& f) { return &f.duration_p90; }),
      Option<T>("--seed", "synthetic: generator seed", [](T& f) { return &f.seed; }),
  };
  return rows;
}

const std::vector<FlagRow<CompareFlags>>& CompareFlagTable() {
  static const std::vector<FlagRow<P>> rows = [] {
    std::vector<FlagRow<P>> r = {
        Option<P>("--scenario", "scenario preset or JSON file", [](P& f) { return &f.scenario; }),
        Option<P>("--radix", "switch radix the training side is timed on (default 64)", [](P& f) { return &f.radix; },
                  false),
        Option<P>("--oversubscription", "leaf down:up ratio the training side is timed on",
                  [](P& f) { return &f.oversubscription; }),
        Option<P>("--catalog", "cost/power catalog: preset name or JSON file", [](P& f) { return &f.catalog; }),
        Option<P>("--server",
                  "GPU server of the catalog the whole cluster is priced with (default: the one named as the "
                  "scenario's system, if the catalog has it)",
                  [](P& f) { return &f.server; }, false),
    };
    for (const FlagRow<O>& o : OverrideRows()) r.push_back(Nested<P>(o, [](P& f) { return &f.overrides; }));
    return r;
  }();
  return rows;
}

const std::vector<FlagRow<ReportFlags>>& ReportFlagTable() {
  static const std::vector<FlagRow<R>> rows = [] {
    std::vector<FlagRow<R>> r = {
        Required(Option<R>("--out", "directory to write index.html and the figures' CSVs into",
                           [](R& f) { return &f.out; })),
        Option<R>("--scenario", "scenario preset or JSON file", [](R& f) { return &f.scenario; }),
        Option<R>("--catalog", "cost/power catalog: preset name or JSON file", [](R& f) { return &f.catalog; }),
        Option<R>("--failure-catalog", "failure rates for the failure figure",
                  [](R& f) { return &f.failure_catalog; }),
    };
    for (const FlagRow<O>& o : OverrideRows()) r.push_back(Nested<R>(o, [](R& f) { return &f.overrides; }));
    return r;
  }();
  return rows;
}

}  // namespace railsim::request
