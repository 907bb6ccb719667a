#include "railsim/request/job_flags.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/error.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/presets.h"
#include "railsim/study/flag_values.h"
#include "railsim/study/idle_search.h"

namespace railsim::request {
namespace {

comm::NetworkKind ParseNetwork(const std::string& text) {
  std::string n = study::ParseChoiceFlag("--network", text, {"rail-only", "rail-optimized", "ideal"});
  if (n == "rail-only") return comm::NetworkKind::kRailOnly;
  if (n == "ideal") return comm::NetworkKind::kIdeal;
  return comm::NetworkKind::kRailOptimized;
}

}  // namespace

void ApplySeqLengthFlag(const std::string& seq_length, spec::ModelSpec* m) {
  if (seq_length.empty()) return;
  spec::SetSeqLength(m, study::ParseIntFlag("--seq-length", seq_length, 1, spec::kMaxSeqLength), "--seq-length");
}

spec::ModelSpec LoadModelFlags(const ModelFlags& f) {
  spec::ModelSpec m = spec::LoadModel(f.model, "--model");
  ApplySeqLengthFlag(f.seq_length, &m);
  if (const std::string warning = ContextLengthWarning(m, "--model"); !warning.empty()) {
    std::fputs(fmt::format("railsim: warning: {}\n", warning).c_str(), stderr);
  }
  return m;
}

std::string ModelDefaultsWarning(const ModelFlags& f, const spec::ModelSpec& m) {
  // No silent defaults: one line, once, before any output.
  if (m.defaulted.empty()) return "";
  return fmt::format("railsim: warning: --model {} leaves out architecture fields; using {}\n", f.model,
                     fmt::join(m.defaulted, ", "));
}

void PrintWarning(const std::string& warning) {
  if (!warning.empty()) std::fputs(warning.c_str(), stderr);
}

std::string ContextLengthWarning(const spec::ModelSpec& m, const std::string& where) {
  if (m.seq_length_key.empty() || m.seq_length <= kLongContextSeqLength) return "";
  return fmt::format("{}: {} trains at sequence length {}, its config's {} (the longest context it supports, not "
                     "a training length); give --seq-length to time another",
                     where, m.name, m.seq_length, m.seq_length_key);
}

void CheckSeqLengthNeedsModel(const ModelFlags& f) {
  if (f.model.empty() && !f.seq_length.empty()) throw Error("--seq-length", "sets the model's length; give --model too");
}

void ParseMoeFlags(const MoeFlags& f, spec::Strategy* s) {
  std::string a = study::ParseChoiceFlag("--moe-alltoall", f.alltoall, {"auto", "forwarded", "direct"});
  s->moe_alltoall = a == "forwarded" ? spec::MoeAllToAll::kForwarded
                    : a == "direct"  ? spec::MoeAllToAll::kDirect
                                     : spec::MoeAllToAll::kAuto;
  s->moe_imbalance = study::ParseNumberFlag("--moe-imbalance", f.imbalance, 1, spec::kMaxMoeImbalance);
  s->moe_max_domains = f.max_domains == "any" ? 0 : int(study::ParseIntFlag("--moe-max-domains", f.max_domains, 1, 1 << 20));
  s->moe_overlap = f.overlap;
  s->moe_dispatch_precision =
      study::ParseChoiceFlag("--moe-dispatch-precision", f.dispatch_precision, {"bf16", "fp8"}) == "fp8"
          ? spec::MoeDispatchPrecision::kFp8
          : spec::MoeDispatchPrecision::kBf16;
}

void ParseOptimizerFlags(const OptimizerFlags& f, spec::Strategy* s) {
  // "stack" keeps what `s` holds (the stack profile's default).
  auto moment = [](const char* flag, const std::string& text, spec::MomentDtype* d) {
    const std::string v = study::ParseChoiceFlag(flag, text, {"stack", "fp32", "bf16"});
    if (v != "stack") *d = v == "bf16" ? spec::MomentDtype::kBf16 : spec::MomentDtype::kFp32;
  };
  const std::string grads = study::ParseChoiceFlag("--main-grads-dtype", f.main_grads_dtype, {"stack", "fp32", "bf16"});
  if (grads != "stack") s->main_grads_dtype = grads == "bf16" ? spec::MainGradsDtype::kBf16 : spec::MainGradsDtype::kFp32;
  const std::string master =
      study::ParseChoiceFlag("--main-params-dtype", f.main_params_dtype, {"stack", "fp32", "fp16", "none"});
  if (master != "stack") {
    s->main_params_dtype = master == "fp16"   ? spec::MainParamsDtype::kFp16
                           : master == "none" ? spec::MainParamsDtype::kNone
                                              : spec::MainParamsDtype::kFp32;
  }
  moment("--exp-avg-dtype", f.exp_avg_dtype, &s->exp_avg_dtype);
  moment("--exp-avg-sq-dtype", f.exp_avg_sq_dtype, &s->exp_avg_sq_dtype);
  if (f.fsdp_shard_group_size != "all") {
    s->fsdp_shard_group_size = study::ParseIntFlag("--fsdp-shard-group-size", f.fsdp_shard_group_size, 1, spec::kMaxModelGpus);
  }
  if (f.data_parallel_sharding_given == 0) return;
  std::string sharding =
      study::ParseChoiceFlag("--data-parallel-sharding", f.data_parallel_sharding, {"optimizer", "gradients", "full"});
  s->dp_sharding = sharding == "full"        ? spec::DpSharding::kFull
                   : sharding == "gradients" ? spec::DpSharding::kGradients
                                             : spec::DpSharding::kOptimizer;
}

// --microbatch-group-size-per-virtual-pipeline-stage: "pp" (0, Megatron-
// Core's default) or a micro-batch count; the range against pp and the
// micro-batches is spec::ValidateStrategy's.
namespace {
int64_t ParseGroupSizeFlag(const std::string& text) {
  if (text == "pp") return 0;
  return study::ParseIntFlag("--microbatch-group-size-per-virtual-pipeline-stage", text, 1, spec::kMaxGlobalBatch);
}

// Megatron-Core's uneven-split flags into `s`; the split itself is
// spec::ValidateDegrees's to check.
void ParseSplitFlags(const StrategyFlags& f, spec::Strategy* s) {
  s->account_for_embedding_in_pipeline_split = f.account_for_embedding;
  s->account_for_loss_in_pipeline_split = f.account_for_loss;
  if (!f.decoder_first_layers.empty()) {
    s->decoder_first_pipeline_num_layers =
        int(study::ParseIntFlag("--decoder-first-pipeline-num-layers", f.decoder_first_layers, 1, spec::kMaxModelLayers));
  }
  if (!f.decoder_last_layers.empty()) {
    s->decoder_last_pipeline_num_layers =
        int(study::ParseIntFlag("--decoder-last-pipeline-num-layers", f.decoder_last_layers, 1, spec::kMaxModelLayers));
  }
}
}  // namespace

void CheckStrategyFlagValues(const StrategyFlags& f) {
  for (auto [flag, value] : {std::pair{"--tp", &f.tp}, {"--pp", &f.pp}, {"--dp", &f.dp}, {"--cp", &f.cp},
                             {"--ep", &f.ep}, {"--vp", &f.vp}}) {
    if (!value->empty()) study::ParseIntFlag(flag, *value, 1, 1 << 20);
  }
  if (!f.micro_batch.empty()) study::ParseIntFlag("--micro-batch-size", f.micro_batch, 1, spec::kMaxGlobalBatch);
  ParseExpertTpFlag("--expert-tensor-parallel-size", f.etp);
  ParseGroupSizeFlag(f.group_size);
  spec::Strategy split;
  ParseSplitFlags(f, &split);
  study::ParseChoiceFlag("--recompute", f.recompute, {"none", "selective", "full"});
  study::ParseChoiceFlag("--precision", f.precision, study::PrecisionNames());
  ParseBf16LayersFlag("--num-layers-at-start-in-bf16", f.bf16_layers_at_start);
  ParseBf16LayersFlag("--num-layers-at-end-in-bf16", f.bf16_layers_at_end);
  spec::Strategy unused;
  ParseMoeFlags(f.moe, &unused);
}

int ParseBf16LayersFlag(const std::string& where, const std::string& text) {
  if (text == "auto") return -1;
  return int(study::ParseIntFlag(where, text, 0, spec::kMaxModelLayers));
}

int ParseExpertTpFlag(const std::string& where, const std::string& text) {
  if (text == "tp") return 0;
  return int(study::ParseIntFlag(where, text, 1, 1 << 20));
}

int ParseSearchExpertTpFlag(const std::string& where, const std::string& text) {
  if (text == "any") return search::kExpertTpAny;
  return ParseExpertTpFlag(where, text);
}

spec::Strategy ParseStrategy(const StrategyFlags& f, const perf::PerfContext& c, int64_t global_batch,
                             spec::Attention attention, std::optional<spec::CudaGraphImpl> cuda_graph_impl) {
  const int64_t n = c.gpus;
  spec::Strategy s;
  s.tp = int(study::ParseIntFlag("--tp", f.tp, 1, 1 << 20));
  s.pp = int(study::ParseIntFlag("--pp", f.pp, 1, 1 << 20));
  s.cp = int(study::ParseIntFlag("--cp", f.cp, 1, 1 << 20));
  s.ep = int(study::ParseIntFlag("--ep", f.ep, 1, 1 << 20));
  s.etp = ParseExpertTpFlag("--expert-tensor-parallel-size", f.etp);
  s.vp = int(study::ParseIntFlag("--vp", f.vp, 1, 1 << 20));
  s.micro_batch = study::ParseIntFlag("--micro-batch-size", f.micro_batch, 1, spec::kMaxGlobalBatch);
  s.microbatch_group_size_per_vp_stage = ParseGroupSizeFlag(f.group_size);
  ParseSplitFlags(f, &s);
  s.global_batch = global_batch;
  spec::ValidateDegrees(c.model, s);
  s.dp = study::ParseDpFlag(f.dp, s.tp, s.pp, s.cp, n);
  std::string r = study::ParseChoiceFlag("--recompute", f.recompute, {"none", "selective", "full"});
  s.recompute = r == "full" ? spec::Recompute::kFull
                            : r == "selective" ? spec::Recompute::kSelective : spec::Recompute::kNone;
  s.sequence_parallel = f.sequence_parallel;
  // The stack's defaults first, then every flag given over them. The
  // switches only go one way: each turns its setting on (or off) whatever
  // the stack does.
  spec::ApplyStackDefaults(spec::StackProfileOf(c.stack), &s);
  if (f.distributed_optimizer) s.dp_sharding = spec::DpSharding::kOptimizer;
  ParseOptimizerFlags(f.optimizer, &s);
  if (f.no_dp_overlap) s.overlap_dp_comm = false;
  if (f.grad_reduce_in_bf16) s.grad_reduce_16bit = true;
  if (f.tp_comm_overlap) s.tp_comm_overlap = true;
  if (f.no_p2p_overlap) s.overlap_p2p_comm = false;
  s.precision = study::ParsePrecision(f.precision, c);
  s.low_precision_params = study::LowPrecisionParams(f.fp8_params, f.fp4_params, s.precision, "--fp8-params", "--fp4-params");
  s.bf16_layers_at_start = ParseBf16LayersFlag("--num-layers-at-start-in-bf16", f.bf16_layers_at_start);
  s.bf16_layers_at_end = ParseBf16LayersFlag("--num-layers-at-end-in-bf16", f.bf16_layers_at_end);
  s.attention = attention;
  s.cuda_graph_impl = cuda_graph_impl;
  ParseMoeFlags(f.moe, &s);
  spec::ValidateStrategy(c.model, n, s);
  spec::ValidatePlacement(c.placement, s, "--placement");
  return s;
}


std::optional<double> ParseIterationOverheadFlag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return study::ParseDurationFlag("--iteration-overhead", text, 0, spec::kMaxIterationOverheadS);
}

std::optional<spec::CudaGraphImpl> ParseCudaGraphImplFlag(const std::string& where, const std::string& text) {
  if (text.empty()) return std::nullopt;
  return spec::CudaGraphImplFromName(study::ParseChoiceFlag(where, text, spec::CudaGraphImplNames()));
}

Job ParseJob(const JobFlags& f, std::optional<net::Design> design) {
  int64_t gpus = study::ParseIntFlag("--gpus", f.gpus, 1, spec::kMaxModelGpus);
  int64_t batch = study::ParseIntFlag("--global-batch-size", f.global_batch, 1, spec::kMaxGlobalBatch);
  comm::NetworkKind network = design ? (*design == net::Design::kRailOnly ? comm::NetworkKind::kRailOnly
                                                                          : comm::NetworkKind::kRailOptimized)
                                     : ParseNetwork(f.network);
  int64_t hb = f.hb_size.empty() ? 0 : study::ParseIntFlag("--hb-size", f.hb_size, 1, spec::kMaxModelGpus);
  const spec::Stack stack = spec::ParseStack(f.stack, "--stack");
  const std::optional<double> iteration_overhead = ParseIterationOverheadFlag(f.iteration_overhead);
  spec::Attention attention = spec::StackProfileOf(stack).attention;
  const std::string kernel = study::ParseChoiceFlag("--attention", f.attention, {"stack", "flash", "classic"});
  if (kernel != "stack") attention = kernel == "classic" ? spec::Attention::kClassic : spec::Attention::kFlash;
  const std::optional<spec::CudaGraphImpl> graphs = ParseCudaGraphImplFlag("--cuda-graph-impl", f.cuda_graph_impl);
  perf::NetworkOptions net;
  net.radix = f.radix.empty() ? 0 : int(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  net.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  if (!f.gpus_per_domain.empty()) {
    net.gpus_per_domain = study::ParseIntFlag("--gpus-per-domain", f.gpus_per_domain, 1, spec::kMaxModelGpus);
  }
  if (f.model.model.empty()) throw Error("--model", "needed: a preset, a model JSON file or a Hugging Face config.json");
  if (f.system.empty()) throw Error("--system", "needed: a system preset or JSON file");
  spec::ModelSpec model = LoadModelFlags(f.model);
  spec::SystemSpec system = spec::LoadSystem(f.system, "--system");
  spec::Placement placement = spec::LoadPlacement(f.placement, "--placement");
  perf::PerfContext context = perf::MakePerfContext(model, system, gpus, network, hb, net);
  context.placement = placement;
  perf::ApplyStack(stack, &context, iteration_overhead);
  if (design == net::Design::kFatTree) context.fabrics.rail_leaves = false;
  return {context, batch, attention, graphs, ModelDefaultsWarning(f.model, model)};
}

Job ParseTrafficJob(const JobFlags& f, net::Design* design) {
  std::string design_name = study::ParseChoiceFlag("--design", f.network, {"rail-optimized", "rail-only", "fat-tree"});
  *design = *net::ParseDesign(design_name);
  Job job = ParseJob(f, *design);
  const int64_t built = job.context.domain_use.BuiltGpus(job.context.gpus);
  if (built > net::kMaxBuildGpus) {
    throw Error("--gpus", fmt::format("the traffic analysis routes on the built network, at most {} GPUs; got {}{}",
                                      net::kMaxBuildGpus, built,
                                      built > job.context.gpus ? " (the job's HB domains, whole)" : ""));
  }
  return job;
}

std::vector<Job> ParseSearchJobs(const JobFlags& f) {
  const std::string& text = f.gpus_per_domain;
  if (text != "auto" && text.find(',') == std::string::npos) return {ParseJob(f)};
  // The domain size and the GPUs first: the segments tried depend on them.
  const int64_t gpus = study::ParseIntFlag("--gpus", f.gpus, 1, spec::kMaxModelGpus);
  int64_t k = f.hb_size.empty() ? 0 : study::ParseIntFlag("--hb-size", f.hb_size, 1, spec::kMaxModelGpus);
  if (k == 0) {
    if (f.system.empty()) throw Error("--system", "needed: a system preset or JSON file");
    k = spec::LoadSystem(f.system, "--system").hb_domain_size;
  }
  std::vector<int64_t> sizes;
  if (text == "auto") {
    for (int64_t n : {k, kSlurmSegmentGpus[0], kSlurmSegmentGpus[1], kSlurmSegmentGpus[2]}) {
      if (n <= k && gpus % n == 0 && std::find(sizes.begin(), sizes.end(), n) == sizes.end()) sizes.push_back(n);
    }
    if (sizes.empty()) {
      throw Error("--gpus-per-domain", fmt::format("auto tries the HB domain size {} and segments of 64, 16 and 4 "
                                                   "GPUs; none of them up to {} divides --gpus {}: give the GPUs "
                                                   "per domain",
                                                   k, k, gpus));
    }
  } else {
    for (const std::string& one : study::SplitFlagList("--gpus-per-domain", text)) {
      const int64_t n = study::ParseIntFlag("--gpus-per-domain", one, 1, spec::kMaxModelGpus);
      if (std::find(sizes.begin(), sizes.end(), n) != sizes.end()) {
        throw Error("--gpus-per-domain", fmt::format("{} is listed twice", n));
      }
      sizes.push_back(n);
    }
  }
  std::vector<Job> jobs;
  for (int64_t n : sizes) {
    JobFlags one = f;
    one.gpus_per_domain = std::to_string(n);
    Job job = ParseJob(one);
    const bool seen = std::any_of(jobs.begin(), jobs.end(), [&](const Job& j) {
      return j.context.domain_use.size == job.context.domain_use.size &&
             j.context.domain_use.used == job.context.domain_use.used;
    });
    if (!seen) jobs.push_back(std::move(job));
  }
  return jobs;
}

// Strategies a search may print: each kept one holds its estimate and
// memory breakdown per worker thread, and nobody reads 10,000 rows (the
// 100,000 once accepted took 4.2 GB).
constexpr int64_t kMaxTop = 10000;

SearchRequest ParseSearch(const SearchFlags& f, const Job& job) { return ParseSearch(f, std::vector<Job>{job}); }

SearchRequest ParseSearch(const SearchFlags& f, const std::vector<Job>& jobs) {
  assert(!jobs.empty());
  const Job& job = jobs.front();
  if (job.context.placement.map) {
    throw Error("--placement", "a placement file fixes one strategy's degrees; search takes a rank order "
                               "(such as tp-cp-dp-pp)");
  }
  SearchRequest r;
  search::SearchOptions& o = r.options;
  o = search::OptionsForStack(job.context.stack);
  o.global_batch = job.global_batch;
  o.attention = job.attention;
  o.cuda_graph_impl = job.cuda_graph_impl;
  if (f.no_tp_comm_overlap) o.tp_comm_overlap = false;
  o.explore_optimizer = f.explore_optimizer;
  o.expert_tp = ParseSearchExpertTpFlag("--expert-tensor-parallel-size", f.etp);
  if (o.expert_tp != search::kExpertTpAny && o.expert_tp != 0 && !job.context.model.is_moe()) {
    throw Error("--expert-tensor-parallel-size", "applies to MoE models only (num_experts is 0)");
  }
  ParseMoeFlags(f.moe, &o.moe);
  spec::ValidateMoeOptions(job.context.model, o.moe);  // said once, not by every strategy
  o.precisions = study::ParseSearchPrecisions(f.precision, job.context);
  o.top_k = int(study::ParseIntFlag("--top", f.top, 1, kMaxTop));
  r.threads_asked = f.threads.empty() ? study::DefaultThreads() : study::ParseThreadsFlag(f.threads);
  o.threads = std::min(r.threads_asked, study::DefaultThreads());
  int64_t limit = study::ParseIntFlag("--max-strategies", f.max_strategies, 1, INT64_MAX);
  r.idle_gpus = study::ParseIntFlag("--allow-idle-gpus", f.allow_idle, 0, job.context.gpus / 2);
  int64_t count = 0;
  for (const Job& j : jobs) count += study::CountStrategiesAllowingIdle(j.context, o, r.idle_gpus);
  if (count > limit) {
    throw Error("--max-strategies", fmt::format("the search would enumerate {} strategies, more than the "
                                                "limit {}; raise --max-strategies to run it anyway",
                                                count, limit));
  }
  return r;
}

}  // namespace railsim::request
