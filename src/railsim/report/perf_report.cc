#include "railsim/report/perf_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/units.h"
#include "railsim/perf/model_stats.h"
#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/table.h"
#include "railsim/spec/stack.h"

namespace railsim::report {

Json StrategyObject(const spec::Strategy& s) {
  Json j;
  j["tp"] = s.tp;
  j["pp"] = s.pp;
  j["dp"] = s.dp;
  j["cp"] = s.cp;
  j["ep"] = s.ep;
  j["etp"] = s.expert_tp();  // --expert-tensor-parallel-size (tp by default)
  j["vp"] = s.vp;
  // Megatron-Core's interleave group size in use (0 without interleaving).
  j["microbatch_group_size_per_vp_stage"] = s.vp > 1 ? s.group_size() : int64_t{0};
  // Megatron-Core's uneven split (0 layers: not given; JSON numbers stay numbers).
  j["account_for_embedding_in_pipeline_split"] = s.account_for_embedding_in_pipeline_split;
  j["account_for_loss_in_pipeline_split"] = s.account_for_loss_in_pipeline_split;
  j["decoder_first_pipeline_num_layers"] = s.decoder_first_pipeline_num_layers;
  j["decoder_last_pipeline_num_layers"] = s.decoder_last_pipeline_num_layers;
  j["micro_batch_size"] = s.micro_batch;
  j["global_batch_size"] = s.global_batch;
  j["microbatches"] = s.num_microbatches();
  j["recompute"] = spec::RecomputeName(s.recompute);
  j["sequence_parallel"] = s.sequence_parallel;
  j["distributed_optimizer"] = s.distributed_optimizer();
  j["data_parallel_sharding"] = spec::DpShardingName(s.dp_sharding);
  j["main_grads_dtype"] = spec::MainGradsDtypeName(s.main_grads_dtype);
  j["main_params_dtype"] = spec::MainParamsDtypeName(s.main_params_dtype);
  j["exp_avg_dtype"] = spec::MomentDtypeName(s.exp_avg_dtype);
  j["exp_avg_sq_dtype"] = spec::MomentDtypeName(s.exp_avg_sq_dtype);
  j["fsdp_shard_group_size"] = s.shard_group();
  j["attention"] = spec::AttentionName(s.attention);
  if (s.cuda_graph_impl) j["cuda_graph_impl"] = spec::CudaGraphImplName(*s.cuda_graph_impl);  // only when stated
  j["overlap_dp_comm"] = s.overlap_dp_comm;
  j["grad_reduce_in_bf16"] = s.grad_reduce_16bit;
  j["tp_comm_overlap"] = s.tp_comm_overlap;
  j["overlap_p2p_comm"] = s.overlap_p2p_comm;
  j["precision"] = spec::PrecisionName(s.precision);
  j["low_precision_params"] = s.low_precision_params;
  // -1: the default (none).
  j["num_layers_at_start_in_bf16"] = s.bf16_layers_at_start;
  j["num_layers_at_end_in_bf16"] = s.bf16_layers_at_end;
  j["moe_alltoall"] = spec::MoeAllToAllName(s.moe_alltoall);
  j["moe_overlap"] = s.moe_overlap;
  j["moe_imbalance"] = s.moe_imbalance;
  j["moe_max_domains"] = s.moe_max_domains;
  j["moe_dispatch_precision"] = spec::MoeDispatchPrecisionName(s.moe_dispatch_precision);
  return j;
}

namespace {

// The built NIC network the collectives were timed on.
Json NetworkTimedObject(const perf::PerfContext& c) {
  Json j;
  j["design"] = perf::NetworkName(c.fabrics.network);
  j["hb_domain_size"] = c.built_hb_domain_size();
  j["radix"] = c.shape.radix;
  j["oversubscription"] = c.shape.oversubscription;
  j["tiers"] = c.shape.tiers;
  j["leaf_gpus"] = c.shape.leaf_gpus;
  j["nic_latency_s"] = c.fabrics.nic.latency_s;
  return j;
}

// gpus_per_domain, hb_domains and idle_gpus_in_domains of a job of `gpus`
// GPUs using `used` of each HB domain of `k`.
void AddDomainUse(int64_t gpus, int64_t used, int64_t k, Json* out) {
  Json& j = *out;
  j["gpus_per_domain"] = used;
  j["hb_domains"] = gpus / used;
  j["idle_gpus_in_domains"] = gpus / used * (k - used);
}

// A whole number of bytes as a JSON integer (a double prints "8.0"); beyond
// int64_t as a number.
Json Bytes(double bytes) {
  if (std::fabs(bytes) < 9e18) return int64_t(std::llround(bytes));
  return bytes;
}

// Adds the estimate's fields to `j` (an estimate document or object).
void AddEstimateFields(const perf::Estimate& e, Json* out) {
  Json& j = *out;
  j["iteration_time_s"] = e.iteration_time_s;
  j["model_flops_per_iteration"] = e.model_flops_per_iteration;
  j["hardware_flops_per_iteration"] = e.hardware_flops_per_iteration;
  j["mfu"] = e.mfu;
  j["hfu"] = e.hfu;
  j["peak_flops_per_gpu"] = e.peak_flops;
  j["tflops_per_gpu"] = e.tflops_per_gpu;
  j["tokens_per_s"] = e.tokens_per_s;
  j["memory_per_gpu_bytes"] = Bytes(e.memory.total_bytes);
  j["memory_capacity_bytes"] = Bytes(e.memory.capacity_bytes);
  j["memory_fits"] = e.memory.fits;
  Json b;
  for (const perf::TimeBreakdown::Component& part : e.breakdown.components()) b[part.key] = part.seconds;
  b["ep_comm_hidden_s"] = e.breakdown.ep_comm_hidden_s;
  j["breakdown"] = b;
  if (e.moe.timed) {
    j["moe_dispatch"] = {{"algorithm", comm::MoeAllToAllName(e.moe.algorithm)},
                         {"dispatch_s", e.moe.dispatch_s},
                         {"combine_s", e.moe.combine_s},
                         {"hb_domains_spanned", e.moe.domains},
                         {"domain_reach_probability", e.moe.reach_probability},
                         {"moe_layers", e.moe.moe_layers}};
  }
  const perf::MemoryBreakdown& m = e.memory;
  Json mem;
  mem["weights_bytes"] = Bytes(m.weights_bytes);
  mem["fp8_weights_bytes"] = Bytes(m.fp8_weights_bytes);
  mem["gradients_bytes"] = Bytes(m.gradients_bytes);
  mem["optimizer_bytes"] = Bytes(m.optimizer_bytes);
  mem["activations_bytes"] = Bytes(m.activations_bytes);
  mem["reserved_bytes"] = Bytes(m.reserved_bytes);
  mem["total_bytes"] = Bytes(m.total_bytes);
  mem["capacity_bytes"] = Bytes(m.capacity_bytes);
  j["memory"] = mem;
}

}  // namespace

Json ContextObject(const perf::PerfContext& c) {
  Json j;
  j["model"] = c.model.name;
  j["seq_length"] = c.model.seq_length;
  j["system"] = c.system.name;
  j["network"] = perf::NetworkName(c.fabrics.network);
  j["network_timed"] = NetworkTimedObject(c);
  j["gpus"] = c.gpus;
  j["hb_domain_size"] = c.built_hb_domain_size();
  if (!c.domain_use.whole()) AddDomainUse(c.gpus, c.domain_use.used, c.domain_use.size, &j);
  j["model_params"] = perf::CountParams(c.model).total;
  j["placement"] = c.placement.Name();
  j["stack"] = spec::StackName(c.stack);
  return j;
}

std::string ModelLine(const spec::ModelSpec& m) {
  return fmt::format("{} (sequence length {})", m.name, Grouped(m.seq_length));
}

// "nemo (NeMo recipes: ...; fixed costs: the GPU's (H100: ...))"
std::string StackLine(const perf::PerfContext& c) {
  const spec::StackProfile& p = spec::StackProfileOf(c.stack);
  return fmt::format("{} ({}; fixed costs {})", p.name, p.description, p.costs_source);
}

std::string DomainUseLine(int64_t gpus, int64_t used, int64_t k) {
  if (used >= k) return "";
  const int64_t domains = gpus / used;
  return fmt::format("{} HB domain{} of {}, {} GPU{} used in each ({} idle)", Grouped(domains),
                     domains == 1 ? "" : "s", k, used, used == 1 ? "" : "s", Grouped(domains * (k - used)));
}

std::string DomainUseLine(const perf::PerfContext& c) {
  return DomainUseLine(c.gpus, c.domain_use.used, c.built_hb_domain_size());
}

// "rail-optimized network (radix 64, 3 tiers, 2:1 leaves)"
std::string NetworkLine(const perf::PerfContext& c) {
  std::string line = fmt::format("{} network", perf::NetworkName(c.fabrics.network));
  if (c.shape.tiers == 0) return line;
  line += fmt::format(" (radix {}, {} tier{}", c.shape.radix, c.shape.tiers, c.shape.tiers == 1 ? "" : "s");
  if (c.shape.oversubscription > 1) line += fmt::format(", {:g}:1 leaves", c.shape.oversubscription);
  return line + ")";
}

std::string StrategyDegrees(const spec::Strategy& s) {
  std::string line = fmt::format("tp {} pp {} dp {} cp {}", s.tp, s.pp, s.dp, s.cp);
  if (s.ep > 1) line += fmt::format(" ep {}", s.ep);
  if (s.expert_tp() != s.tp) line += fmt::format(" etp {}", s.expert_tp());
  if (s.vp > 1) line += fmt::format(" vp {}", s.vp);
  if (s.vp > 1 && s.group_size() != s.pp) line += fmt::format(" N {}", s.group_size());
  return line;
}

namespace {

// The optimizer dtypes as grads/master/exp_avg/exp_avg_sq ("fp32/fp32/fp32/fp32" by default).
std::string OptimizerDtypes(const spec::Strategy& s) {
  return fmt::format("{}/{}/{}/{}", spec::MainGradsDtypeName(s.main_grads_dtype),
                     spec::MainParamsDtypeName(s.main_params_dtype), spec::MomentDtypeName(s.exp_avg_dtype),
                     spec::MomentDtypeName(s.exp_avg_sq_dtype));
}

// vp, and the interleave group size N when it is not pp ("4 N16").
std::string VirtualStagesCell(const spec::Strategy& s) {
  if (s.vp == 1 || s.group_size() == s.pp) return std::to_string(s.vp);
  return fmt::format("{} N{}", s.vp, s.group_size());
}

bool DefaultOptimizerDtypes(const spec::Strategy& s) { return OptimizerDtypes(s) == "fp32/fp32/fp32/fp32"; }

// The search table's sharding column: no, yes (the distributed optimizer), zero-2, zero-3.
const char* ShardingCell(spec::DpSharding d) {
  switch (d) {
    case spec::DpSharding::kNone: return "no";
    case spec::DpSharding::kOptimizer: return "yes";
    case spec::DpSharding::kGradients: return "zero-2";
    case spec::DpSharding::kFull: return "zero-3";
  }
  return "?";
}

}  // namespace

std::string StrategyLine(const spec::Strategy& s) {
  std::string line = StrategyDegrees(s);
  line += fmt::format(", micro-batch {} x {}, recompute {}", s.micro_batch, s.num_microbatches(),
                      spec::RecomputeName(s.recompute));
  const std::string settings = StrategySettings(s);
  return settings.empty() ? line : line + ", " + settings;
}

std::string StrategySettings(const spec::Strategy& s) {
  std::string line;
  if (s.sequence_parallel) line += ", sp";
  if (s.tp_comm_overlap) line += ", tp-overlap";
  if (s.dp_sharding == spec::DpSharding::kOptimizer) line += ", dist-opt";
  if (s.dp_sharding == spec::DpSharding::kGradients) line += ", dp-sharding gradients (ZeRO-2)";
  if (s.dp_sharding == spec::DpSharding::kFull) line += ", dp-sharding full (ZeRO-3)";
  if (s.hybrid_sharding()) line += fmt::format(", shard groups of {}", s.shard_group());
  if (!DefaultOptimizerDtypes(s)) line += ", optimizer grads/master/exp-avg/exp-avg-sq " + OptimizerDtypes(s);
  if (s.precision != spec::Precision::kBf16) line += fmt::format(", {}", spec::PrecisionName(s.precision));
  if (s.low_precision_params) line += s.precision == spec::Precision::kFp4 ? ", fp4-params" : ", fp8-params";
  if (s.ep > 1 && s.moe_alltoall != spec::MoeAllToAll::kAuto) {
    line += fmt::format(", moe {}", spec::MoeAllToAllName(s.moe_alltoall));
  }
  if (s.moe_overlap) line += ", moe-overlap";
  if (s.moe_imbalance > 1) line += fmt::format(", imbalance {:g}", s.moe_imbalance);
  if (s.moe_max_domains > 0) line += fmt::format(", max {} domains", s.moe_max_domains);
  return line.empty() ? line : line.substr(2);
}

std::string EstimateStrategyFlags(const spec::Strategy& s, spec::Stack stack) {
  // What estimate starts from: the stack's defaults (with tp and sp, on
  // which its TP overlap depends).
  const spec::StackProfile& profile = spec::StackProfileOf(stack);
  spec::Strategy base;
  base.tp = s.tp;
  base.sequence_parallel = s.sequence_parallel;
  spec::ApplyStackDefaults(profile, &base);
  std::string f = fmt::format("--tp {} --pp {}", s.tp, s.pp);
  if (s.cp > 1) f += fmt::format(" --cp {}", s.cp);
  if (s.ep > 1) f += fmt::format(" --ep {}", s.ep);
  if (s.expert_tp() != s.tp) f += fmt::format(" --expert-tensor-parallel-size {}", s.expert_tp());
  if (s.vp > 1) f += fmt::format(" --vp {}", s.vp);
  if (s.vp > 1 && s.microbatch_group_size_per_vp_stage > 0) {
    f += fmt::format(" --microbatch-group-size-per-virtual-pipeline-stage {}", s.microbatch_group_size_per_vp_stage);
  }
  f += fmt::format(" --micro-batch-size {}", s.micro_batch);
  if (s.recompute != spec::Recompute::kNone) f += fmt::format(" --recompute {}", spec::RecomputeName(s.recompute));
  if (s.sequence_parallel) f += " --sequence-parallel";
  if (s.dp_sharding != base.dp_sharding) {
    f += s.dp_sharding == spec::DpSharding::kOptimizer
             ? std::string(" --distributed-optimizer")
             : fmt::format(" --data-parallel-sharding {}", spec::DpShardingName(s.dp_sharding));
  }
  if (s.fsdp_shard_group_size > 0) f += fmt::format(" --fsdp-shard-group-size {}", s.fsdp_shard_group_size);
  if (s.main_grads_dtype != base.main_grads_dtype) {
    f += fmt::format(" --main-grads-dtype {}", spec::MainGradsDtypeName(s.main_grads_dtype));
  }
  if (s.main_params_dtype != base.main_params_dtype) {
    f += fmt::format(" --main-params-dtype {}", spec::MainParamsDtypeName(s.main_params_dtype));
  }
  if (s.exp_avg_dtype != base.exp_avg_dtype) {
    f += fmt::format(" --exp-avg-dtype {}", spec::MomentDtypeName(s.exp_avg_dtype));
  }
  if (s.exp_avg_sq_dtype != base.exp_avg_sq_dtype) {
    f += fmt::format(" --exp-avg-sq-dtype {}", spec::MomentDtypeName(s.exp_avg_sq_dtype));
  }
  if (!s.overlap_dp_comm && base.overlap_dp_comm) f += " --no-dp-overlap";
  if (s.grad_reduce_16bit && !base.grad_reduce_16bit) f += " --grad-reduce-in-bf16";
  if (s.tp_comm_overlap && !base.tp_comm_overlap) f += " --tp-comm-overlap";
  if (!s.overlap_p2p_comm && base.overlap_p2p_comm) f += " --no-overlap-p2p-communication";
  if (s.attention != profile.attention) f += fmt::format(" --attention {}", spec::AttentionName(s.attention));
  if (s.cuda_graph_impl) f += fmt::format(" --cuda-graph-impl {}", spec::CudaGraphImplName(*s.cuda_graph_impl));
  if (s.precision != spec::Precision::kBf16) f += fmt::format(" --precision {}", spec::PrecisionName(s.precision));
  if (s.moe_alltoall != spec::MoeAllToAll::kAuto) {
    f += fmt::format(" --moe-alltoall {}", spec::MoeAllToAllName(s.moe_alltoall));
  }
  if (s.moe_overlap) f += " --moe-overlap";
  if (s.moe_imbalance != 1) f += fmt::format(" --moe-imbalance {}", s.moe_imbalance);
  if (s.moe_max_domains > 0) f += fmt::format(" --moe-max-domains {}", s.moe_max_domains);
  if (s.moe_dispatch_precision != spec::MoeDispatchPrecision::kBf16) {
    f += fmt::format(" --moe-dispatch-precision {}", spec::MoeDispatchPrecisionName(s.moe_dispatch_precision));
  }
  return f;
}

std::string ShellWord(const std::string& text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_-./:=,+@%").find(c) != std::string::npos;
  });
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string LargestLoss(int64_t hb_domain_size, const spec::Strategy& s, const perf::Estimate& e, bool brief) {
  // components() returns its array by value: keep it alive while `worst`
  // points into it.
  const auto parts = e.breakdown.components();
  const perf::TimeBreakdown::Component* worst = nullptr;
  for (const perf::TimeBreakdown::Component& part : parts) {
    if (std::string_view(part.key) == "compute_s" || part.seconds <= 0) continue;
    if (!worst || part.seconds > worst->seconds) worst = &part;
  }
  if (!worst || e.iteration_time_s <= 0) return brief ? "none" : "none (compute only)";
  const std::string share = Percent(worst->seconds / e.iteration_time_s, 0);
  const std::string_view key = worst->key;
  const int64_t k = hb_domain_size;
  const int64_t m = s.num_microbatches();
  if (key == "bubble_s") {
    if (brief) return fmt::format("bubble {} (pp {}, {} mb)", share, s.pp, m);
    return fmt::format("pipeline bubble {} ({} stages, {} micro-batch{} per pipeline{})", share, s.pp, m,
                       m == 1 ? "" : "es", s.vp > 1 ? fmt::format(", {} virtual stages", s.vp) : "");
  }
  if (key == "tp_comm_s") {
    if (brief) return fmt::format("TP comm {}{}", share, s.tp > k ? " (across domains)" : "");
    return s.tp > k ? fmt::format("TP communication across HB domains {} (tp {} > K {})", share, s.tp, k)
                    : fmt::format("TP communication {} (inside the HB domain)", share);
  }
  if (key == "dp_comm_s") {
    return fmt::format("{} {}{}", brief ? "DP comm" : "exposed DP communication", share,
                       s.overlap_dp_comm ? "" : " (not overlapped)");
  }
  if (key == "recompute_s") {
    return brief ? fmt::format("recompute {}", share)
                 : fmt::format("recomputation {} (memory forced {} recompute)", share, spec::RecomputeName(s.recompute));
  }
  if (key == "ep_comm_s") return fmt::format("{} {}", brief ? "MoE dispatch" : "MoE dispatch and combine", share);
  if (key == "cp_comm_s") return fmt::format("{} {}", brief ? "CP comm" : "context-parallel communication", share);
  if (key == "pp_comm_s") return fmt::format("{} {}", brief ? "PP send/recv" : "pipeline send/receive", share);
  if (key == "overhead_s") {
    // Where a fixed cost comes from: the run's per-iteration cost (how it is
    // timed and logged) or the GPU's per-chunk one (launches per micro-batch).
    const double per_iteration = e.breakdown.iteration_overhead_s;
    const double per_chunks = worst->seconds - per_iteration;
    const bool run_side = per_iteration >= per_chunks;
    if (brief) return fmt::format("fixed {} ({})", share, run_side ? "per iteration" : "per chunk");
    return fmt::format("fixed costs {}: {} per iteration (the run's --iteration-overhead, its stack's or system's) "
                       "and {} for the pipeline chunks (the GPU's per-chunk cost)",
                       share, Seconds(per_iteration), Seconds(per_chunks));
  }
  return fmt::format("{} {}", worst->label, share);
}

std::string EstimateTable(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e) {
  const std::string domains = DomainUseLine(c);
  std::string out = fmt::format(
      "{} on {} x {} ({}, HB domain {})\n{}strategy: {}\nstack: {}\n{}\n", ModelLine(c.model), Grouped(c.gpus),
      c.system.name, NetworkLine(c), c.built_hb_domain_size(), domains.empty() ? "" : "GPUs: " + domains + "\n",
      StrategyLine(s), StackLine(c), c.placement.is_default() ? "" : fmt::format("placement: {}\n", c.placement.Name()));
  TextTable t;
  t.AddColumn("time", TextTable::Align::kLeft);
  t.AddColumn("seconds");
  t.AddColumn("share");
  for (const perf::TimeBreakdown::Component& part : e.breakdown.components()) {
    t.AddRow({part.label, fmt::format("{:.4f}", part.seconds), Percent(part.seconds / e.iteration_time_s)});
  }
  t.AddRow({"iteration", fmt::format("{:.4f}", e.iteration_time_s), "100.0%"});
  out += t.Render();
  if (s.precision != spec::Precision::kBf16) {
    // MFU is against the peak of the format the layers' GEMMs run in; the
    // BF16 figure is what Megatron-LM and most publications print.
    const char* format = s.precision == spec::Precision::kFp4 ? "FP4" : "FP8";
    out += fmt::format("\nthroughput: {:.1f} TFLOP/s per GPU (hardware), MFU {} of the {} peak ({} of the BF16 "
                       "peak), HFU {}, {:.0f} tokens/s\n",
                       e.tflops_per_gpu, Percent(e.mfu), format, Percent(e.mfu * e.peak_flops / c.system.gpu.peak_flops),
                       Percent(e.hfu), e.tokens_per_s);
  } else {
    out += fmt::format("\nthroughput: {:.1f} TFLOP/s per GPU (hardware), MFU {} of the BF16 peak, HFU {}, {:.0f} "
                       "tokens/s\n",
                       e.tflops_per_gpu, Percent(e.mfu), Percent(e.hfu), e.tokens_per_s);
  }
  out += fmt::format("largest loss: {}\n", LargestLoss(c.fabrics.hb_domain_size, s, e));
  const perf::MemoryBreakdown& m = e.memory;
  const char* format = s.precision == spec::Precision::kFp4 ? "NVFP4" : s.precision == spec::Precision::kMxfp8 ? "MXFP8"
                                                                                                             : "FP8";
  out += fmt::format(
      "memory per GPU: {} of {} ({}): weights {}{}, gradients {}, optimizer {}, activations {}, reserved {}\n",
      BinaryBytes(m.total_bytes), BinaryBytes(m.capacity_bytes), m.fits ? "fits" : "DOES NOT FIT",
      BinaryBytes(m.weights_bytes),
      m.fp8_weights_bytes > 0 ? fmt::format(" (+ {} {} copies)", BinaryBytes(m.fp8_weights_bytes), format) : "",
      BinaryBytes(m.gradients_bytes), BinaryBytes(m.optimizer_bytes), BinaryBytes(m.activations_bytes),
      BinaryBytes(m.reserved_bytes));
  if (e.moe.timed) {
    out += fmt::format("MoE dispatch: {} over {} HB domain{} (a token reaches a given domain with p = {:.3f}), "
                       "{} per dispatch{}, {} MoE layers{}\n",
                       comm::MoeAllToAllName(e.moe.algorithm), e.moe.domains, e.moe.domains == 1 ? "" : "s",
                       e.moe.reach_probability, Seconds(e.moe.dispatch_s),
                       e.moe.combine_s != e.moe.dispatch_s ? fmt::format(", {} per combine", Seconds(e.moe.combine_s))
                                                           : "",
                       e.moe.moe_layers,
                       e.breakdown.ep_comm_hidden_s > 0
                           ? fmt::format("; {} of expert-parallel comm hidden behind compute",
                                         Seconds(e.breakdown.ep_comm_hidden_s))
                           : "");
  }
  return out;
}

std::string EstimateJson(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e) {
  Json j = ContextObject(c);
  j["strategy"] = StrategyObject(s);
  AddEstimateFields(e, &j);
  return j.dump(2) + "\n";
}

std::string SearchTable(const perf::PerfContext& c, const search::SearchResult& r) {
  std::string out = fmt::format(
      "{} on {} x {} ({}, HB domain {}), global batch {}\n"
      "stack: {}\n{} strategies: {} timed, {} pruned for memory, {:.2f} s on {} threads\n{}\n",
      ModelLine(c.model), Grouped(c.gpus), c.system.name, NetworkLine(c),
      c.built_hb_domain_size(), Grouped(r.global_batch), StackLine(c),
      Grouped(r.candidates), Grouped(r.evaluated), Grouped(r.pruned), r.elapsed_s, r.threads,
      c.placement.is_default() ? "" : fmt::format("placement: {}\n", c.placement.Name()));
  const bool segments = !r.gpus_per_domain_tried.empty();
  if (segments) {
    out = out.substr(0, out.size() - 1) +
          fmt::format("GPUs used per HB domain of {}, tried: {} (the other GPUs of each domain stay idle)\n\n",
                      c.built_hb_domain_size(), fmt::join(r.gpus_per_domain_tried, ", "));
  } else if (const std::string domains = DomainUseLine(c); !domains.empty()) {
    out = out.substr(0, out.size() - 1) + "GPUs: " + domains + "\n\n";
  }
  if (r.idle_gpus_allowed > 0) {
    out = out.substr(0, out.size() - 1) +
          fmt::format("layouts may leave up to {} of the {} GPUs idle\n\n", Grouped(r.idle_gpus_allowed), Grouped(c.gpus));
  }
  if (r.results.empty() && r.candidates == 0) {
    return out + fmt::format("no strategy: no combination of degrees uses exactly {} GPUs with global batch {} "
                             "(tp x pp x dp x cp must equal the GPUs, dp x micro-batch divide the batch); try "
                             "--allow-idle-gpus {} to search layouts that leave a few GPUs idle, a GPU count with "
                             "more divisors, or another batch size\n",
                             Grouped(c.gpus), Grouped(r.global_batch), c.fabrics.hb_domain_size * 8);
  }
  if (r.results.empty()) {
    return out + fmt::format("no strategy fits in memory: all {} strategies need more than the {} per GPU; try "
                             "more GPUs or a GPU with more memory\n",
                             Grouped(r.candidates), BinaryBytes(c.system.gpu.hbm_bytes));
  }
  TextTable t;
  for (const char* h : {"#", "tp", "pp", "dp", "cp", "ep", "vp", "mb", "recompute", "sp", "tp-ovl", "dist-opt",
                        "prec"}) {
    t.AddColumn(h, std::string(h) == "recompute" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  }
  bool dtypes = false, etp = false;
  for (const search::RankedStrategy& rs : r.results) {
    dtypes = dtypes || !DefaultOptimizerDtypes(rs.strategy);
    etp = etp || rs.strategy.expert_tp() != rs.strategy.tp;
  }
  if (etp) t.AddColumn("etp");
  if (dtypes) t.AddColumn("grad/master/m/v");
  for (const char* h : {"iteration", "MFU", "TFLOP/s", "memory"}) t.AddColumn(h);
  const bool idle = r.idle_gpus_allowed > 0;
  if (idle) t.AddColumn("idle GPUs");
  if (segments) t.AddColumn("GPUs/domain");
  int rank = 1;
  for (const search::RankedStrategy& rs : r.results) {
    const spec::Strategy& s = rs.strategy;
    const perf::Estimate& e = rs.estimate;
    std::vector<std::string> row = {
        std::to_string(rank++), std::to_string(s.tp), std::to_string(s.pp), std::to_string(s.dp),
        std::to_string(s.cp), std::to_string(s.ep), VirtualStagesCell(s), std::to_string(s.micro_batch),
        spec::RecomputeName(s.recompute), s.sequence_parallel ? "yes" : "no", s.tp_comm_overlap ? "yes" : "no",
        ShardingCell(s.dp_sharding), spec::PrecisionName(s.precision)};
    if (etp) row.push_back(std::to_string(s.expert_tp()));
    if (dtypes) row.push_back(OptimizerDtypes(s));
    for (std::string cell : {fmt::format("{:.3f} s", e.iteration_time_s), Percent(e.mfu),
                             fmt::format("{:.1f}", e.tflops_per_gpu), BinaryBytes(e.memory.total_bytes)}) {
      row.push_back(std::move(cell));
    }
    if (idle) row.push_back(Grouped(c.gpus - s.gpus()));
    if (segments) row.push_back(fmt::format("{} of {}", rs.gpus_per_domain, c.built_hb_domain_size()));
    t.AddRow(std::move(row));
  }
  const search::RankedStrategy& best = r.results.front();
  const bool fp8 = std::any_of(r.results.begin(), r.results.end(), [](const search::RankedStrategy& rs) {
    return rs.strategy.precision == spec::Precision::kFp8;
  });
  return out + t.Render() +
         fmt::format("\n#1 largest loss: {}; MFU is against the BF16 peak{}\n",
                     LargestLoss(c.fabrics.hb_domain_size, best.strategy, best.estimate),
                     fp8 ? " (fp8 rows: the FP8 peak)" : "");
}

std::string SearchCsv(const search::SearchResult& r) {
  std::vector<std::string> header = {
      "rank", "tp", "pp", "dp", "cp", "ep", "vp", "micro_batch_size", "recompute", "sequence_parallel",
      "distributed_optimizer", "tp_comm_overlap", "precision", "iteration_time_s", "mfu", "hfu",
      "tflops_per_gpu", "memory_per_gpu_bytes", "data_parallel_sharding", "main_grads_dtype",
      "main_params_dtype", "exp_avg_dtype", "exp_avg_sq_dtype", "expert_tensor_parallel_size"};
  const bool segments = !r.gpus_per_domain_tried.empty();
  if (segments) header.push_back("gpus_per_domain");
  CsvTable t(header);
  int rank = 1;
  for (const search::RankedStrategy& rs : r.results) {
    const spec::Strategy& s = rs.strategy;
    const perf::Estimate& e = rs.estimate;
    std::vector<std::string> row = {
        std::to_string(rank++), std::to_string(s.tp), std::to_string(s.pp), std::to_string(s.dp),
        std::to_string(s.cp), std::to_string(s.ep), std::to_string(s.vp), std::to_string(s.micro_batch),
        spec::RecomputeName(s.recompute), s.sequence_parallel ? "true" : "false",
        s.distributed_optimizer() ? "true" : "false", s.tp_comm_overlap ? "true" : "false",
        spec::PrecisionName(s.precision), CsvNumber(e.iteration_time_s), CsvNumber(e.mfu),
        CsvNumber(e.hfu), CsvNumber(e.tflops_per_gpu), fmt::format("{:.0f}", e.memory.total_bytes),
        spec::DpShardingName(s.dp_sharding), spec::MainGradsDtypeName(s.main_grads_dtype),
        spec::MainParamsDtypeName(s.main_params_dtype), spec::MomentDtypeName(s.exp_avg_dtype),
        spec::MomentDtypeName(s.exp_avg_sq_dtype), std::to_string(s.expert_tp())};
    if (segments) row.push_back(std::to_string(rs.gpus_per_domain));
    t.AddRow(row);
  }
  return t.Render();
}

std::string SearchJson(const perf::PerfContext& c, const search::SearchResult& r, bool timing) {
  Json j = ContextObject(c);
  j["evaluated"] = r.evaluated;
  j["pruned"] = r.pruned;
  j["candidates"] = r.candidates;
  j["global_batch_size"] = r.global_batch;
  j["idle_gpus_allowed"] = r.idle_gpus_allowed;
  const bool segments = !r.gpus_per_domain_tried.empty();
  if (segments) {
    // The context's own GPUs per domain are one of those tried: each result says its own.
    for (const char* key : {"gpus_per_domain", "hb_domains", "idle_gpus_in_domains"}) j.erase(key);
    j["gpus_per_domain_tried"] = r.gpus_per_domain_tried;
  }
  if (timing) {
    j["elapsed_s"] = r.elapsed_s;
    j["threads"] = r.threads;
  }
  Json results = Json::array();
  for (const search::RankedStrategy& rs : r.results) {
    Json entry;
    entry["strategy"] = StrategyObject(rs.strategy);
    entry["gpus_used"] = rs.strategy.gpus();
    entry["idle_gpus"] = c.gpus - rs.strategy.gpus();
    if (segments) AddDomainUse(rs.strategy.gpus(), rs.gpus_per_domain, c.built_hb_domain_size(), &entry);
    Json estimate;
    AddEstimateFields(rs.estimate, &estimate);
    entry["estimate"] = estimate;
    results.push_back(entry);
  }
  j["results"] = results;
  return j.dump(2) + "\n";
}

}  // namespace railsim::report
