// A training job as its user gives it: text values named by their flags
// (--model, --tp, --micro-batch-size, ...), from the command line or from the
// Python module's keyword arguments, and the one place that turns them into
// validated values. Every parser throws Error naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/search/search.h"
#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"
#include "railsim/study/precisions.h"

namespace railsim::request {

// --model and --seq-length: a preset, a railsim model file, a Hugging Face
// config.json (which carries the model's maximum context, not the length a
// run trains at) or the model's JSON text itself.
struct ModelFlags {
  std::string model, seq_length;
};

/// The model --model names with --seq-length applied. Throws Error("--model"
/// or "--seq-length"). Requires: f.model is not empty.
spec::ModelSpec LoadModelFlags(const ModelFlags& f);

/// The one line a model file that leaves out architecture fields gets
/// ("railsim: warning: --model FILE leaves out architecture fields; using
/// ..."), or "" (presets and Hugging Face configs are silent).
std::string ModelDefaultsWarning(const ModelFlags& f, const spec::ModelSpec& m);

/// Prints `warning` (a whole line) on stderr unless it is empty. Commands
/// call it once every flag is validated, so that a bad flag gives its error
/// alone.
void PrintWarning(const std::string& warning);

/// Applies --seq-length (when given) to a model loaded elsewhere.
void ApplySeqLengthFlag(const std::string& seq_length, spec::ModelSpec* m);

/// Training sequences longer than this are rare enough that a length taken
/// from a config's maximum context (Qwen2.5's 131,072: steps tens of times
/// longer than at 4,096) is far more likely a default nobody chose.
constexpr int kLongContextSeqLength = 32768;

/// A warning when `m`'s length is a Hugging Face config's maximum context
/// (seq_length_key set) above kLongContextSeqLength, naming `where` (the
/// flag or field the model came from), the model and --seq-length; else "".
std::string ContextLengthWarning(const spec::ModelSpec& m, const std::string& where);

/// Throws Error("--seq-length") when it is given without a model.
void CheckSeqLengthNeedsModel(const ModelFlags& f);

// How MoE tokens are dispatched (also on search).
struct MoeFlags {
  std::string alltoall = "auto", imbalance = "1", max_domains = "any", dispatch_precision = "bf16";
  bool overlap = false;
};

/// Writes them into `s` (validated against the model by spec::ValidateStrategy).
void ParseMoeFlags(const MoeFlags& f, spec::Strategy* s);

// Optimizer precision and data-parallel sharding, with Megatron-Core's names.
struct OptimizerFlags {
  /// "stack" = the stack profile's.
  std::string main_grads_dtype = "stack", main_params_dtype = "stack", exp_avg_dtype = "stack",
              exp_avg_sq_dtype = "stack";
  std::string data_parallel_sharding;
  std::string fsdp_shard_group_size = "all";
  /// Whether --data-parallel-sharding was given (without it: none, or the
  /// distributed optimizer's), even as "" (which is then an error).
  bool data_parallel_sharding_given = false;
};

/// Writes them into `s`; throws Error naming the flag for an unknown value.
/// A --data-parallel-sharding given overrides --distributed-optimizer.
void ParseOptimizerFlags(const OptimizerFlags& f, spec::Strategy* s);

struct StrategyFlags {
  std::string tp, pp, dp, cp = "1", ep = "1", vp = "1", micro_batch;
  std::string etp = "tp";  ///< --expert-tensor-parallel-size: "tp" (Megatron-Core's default) or a degree
  std::string group_size = "pp";  ///< --microbatch-group-size-per-virtual-pipeline-stage
  /// Megatron-Core's uneven pipeline split: --account-for-embedding-in-pipeline-split,
  /// --account-for-loss-in-pipeline-split, and --decoder-first-pipeline-num-layers,
  /// --decoder-last-pipeline-num-layers ("" = not given).
  bool account_for_embedding = false, account_for_loss = false;
  std::string decoder_first_layers, decoder_last_layers;
  std::string recompute = "none";
  bool sequence_parallel = false, distributed_optimizer = false, no_dp_overlap = false;
  bool grad_reduce_in_bf16 = false;
  bool tp_comm_overlap = false, no_p2p_overlap = false;
  std::string precision = "bf16";
  bool fp8_params = false, fp4_params = false;  ///< --fp8-params, --fp4-params
  /// --num-layers-at-start-in-bf16, --num-layers-at-end-in-bf16: "auto" or a count.
  std::string bf16_layers_at_start = "auto", bf16_layers_at_end = "auto";
  OptimizerFlags optimizer;
  MoeFlags moe;
};

/// Parses every value given, without a job to check it against: what a
/// command whose job is optional does when none is given, so that no flag
/// it accepts goes unread. Throws Error naming the flag.
void CheckStrategyFlagValues(const StrategyFlags& f);

/// A count of layers kept in bf16 ("auto" = -1, the precision's default).
int ParseBf16LayersFlag(const std::string& where, const std::string& text);
/// --expert-tensor-parallel-size: "tp" (0: the strategy's tp, Megatron-Core's
/// default) or a positive degree. `where` names the flag, keyword or key.
int ParseExpertTpFlag(const std::string& where, const std::string& text);
/// search's --expert-tensor-parallel-size: "any" (tp and 1), "tp" or a degree,
/// as search::SearchOptions::expert_tp holds it.
int ParseSearchExpertTpFlag(const std::string& where, const std::string& text);

/// Throws Error naming the flag unless the strategy is valid for the job in
/// `c` (its model, GPUs and placement).
spec::Strategy ParseStrategy(const StrategyFlags& f, const perf::PerfContext& c, int64_t global_batch,
                             spec::Attention attention,
                             std::optional<spec::CudaGraphImpl> cuda_graph_impl = std::nullopt);

// The job and the cluster it is timed on (estimate, search, traffic).
struct JobFlags {
  ModelFlags model;
  std::string system, gpus, global_batch;
  std::string network = "rail-optimized";
  std::string hb_size;
  std::string attention = "stack";  ///< "stack" = the stack profile's
  std::string cuda_graph_impl;      ///< --cuda-graph-impl ("" = not stated)
  std::string stack = "megatron-core";
  /// --iteration-overhead: the run's per-iteration fixed cost ("" = the
  /// stack's, else the system's; the presets' is production's, none).
  std::string iteration_overhead;
  std::string radix, oversubscription = "1";
  std::string placement = "tp-cp-ep-dp-pp";
  /// --gpus-per-domain: "" (all K), a count N (search also takes "auto" or a list).
  std::string gpus_per_domain;
};

/// --cuda-graph-impl's value (nullopt when not given); `where` names the flag or key.
std::optional<spec::CudaGraphImpl> ParseCudaGraphImplFlag(const std::string& where, const std::string& text);

/// --iteration-overhead's value (nullopt when not given), in [0, 60 s].
std::optional<double> ParseIterationOverheadFlag(const std::string& text);

struct Job {
  perf::PerfContext context;
  int64_t global_batch;
  spec::Attention attention;
  std::optional<spec::CudaGraphImpl> cuda_graph_impl;  ///< --cuda-graph-impl, if stated
  std::string warning;  ///< ModelDefaultsWarning: for the command to print once its flags are valid
};

/// The job of `f`, its context built. `design`: the built network whose
/// links carry the bytes (traffic), which then stands for --network.
Job ParseJob(const JobFlags& f, std::optional<net::Design> design = std::nullopt);

/// traffic's job: --design (rail-optimized, rail-only or fat-tree) and at
/// most net::kMaxBuildGpus GPUs, since it routes on the built network.
Job ParseTrafficJob(const JobFlags& f, net::Design* design);

/// The segments search's `--gpus-per-domain auto` tries below the HB
/// domain: NVIDIA's guidance for Slurm block scheduling on NVL72 racks, 16, 4
/// and 1 compute trays of 4 GPUs (docs/search.md).
inline constexpr int64_t kSlurmSegmentGpus[] = {64, 16, 4};

/// search's jobs, one per segment --gpus-per-domain names: a count (one
/// job), a comma-separated list, or "auto": the whole HB domain and each
/// kSlurmSegmentGpus below it, those that divide --gpus. Jobs whose domains
/// come out the same (the ideal network's) are searched once. Throws Error
/// naming the flag.
std::vector<Job> ParseSearchJobs(const JobFlags& f);

// What search adds to the job.
struct SearchFlags {
  std::string top = "10";
  std::string threads;  ///< empty: study::DefaultThreads()
  std::string max_strategies = "200000000";
  std::string precision = "bf16";
  bool no_tp_comm_overlap = false;
  bool explore_optimizer = false;
  MoeFlags moe;
  std::string allow_idle = "0";
  std::string etp = "any";  ///< --expert-tensor-parallel-size: "any", "tp" or a degree
};

struct SearchRequest {
  search::SearchOptions options;  ///< threads at most study::DefaultThreads()
  int64_t idle_gpus = 0;
  int threads_asked = 0;  ///< --threads as given (more than options.threads: say so)
};

/// The search of `job` that `f` asks for, its size checked against
/// --max-strategies before anything runs. Throws Error naming the flag.
SearchRequest ParseSearch(const SearchFlags& f, const Job& job);
/// The same for the jobs of ParseSearchJobs (their sizes summed). Requires
/// at least one job.
SearchRequest ParseSearch(const SearchFlags& f, const std::vector<Job>& jobs);

}  // namespace railsim::request
