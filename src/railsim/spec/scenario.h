// Scenario: what `railsim compare` evaluates, the paper's headline by default
// (presets/scenarios/default.json): a cluster size, the HB domain sizes and
// switch radixes to cross, the link speed, and the training job to time on
// each design.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::spec {

/// The model name that means "no model" wherever a scenario's model or MoE
/// model is given (a scenario file, compare's overrides, a sweep's point):
/// that side of the comparison is left out, as an empty name leaves it out.
inline constexpr std::string_view kNoModel = "none";

struct Scenario {
  std::string name;
  std::string description;
  /// The cluster's GPUs; with gpus_per_domain, the GPUs the jobs use
  /// (BuiltGpus is the cluster built on each domain size).
  int64_t gpus = 0;
  std::vector<int> hb_domain_sizes;  ///< each divides gpus (with gpus_per_domain, BuiltGpus)
  std::vector<int> radixes;          ///< each even, >= 2
  double port_speed_Bps = 0;
  double oversubscription = 1;
  // Training side: a model and a system preset (or file) and the global
  // batch sizes to search at. Empty model means network side only.
  std::string model;
  std::string system;
  /// The system of the jobs on domains of K when it is not `system`: GB200
  /// NVL72 racks (72) against DGX B200 nodes (8) in one comparison.
  std::map<int, std::string> hb_domain_systems;
  /// The system preset (or file) the jobs on domains of `k` run on.
  const std::string& SystemFor(int k) const {
    auto it = hb_domain_systems.find(k);
    return it == hb_domain_systems.end() ? system : it->second;
  }
  std::vector<int64_t> global_batch_sizes;
  /// The GEMM precision the training and the MoE jobs are searched in: a
  /// precision name (bf16, fp8, mxfp8, fp4) or "any" (every one the GPU
  /// runs), as search's --precision. DeepSeek-V3 trained in FP8.
  std::string precision = "bf16", moe_precision = "bf16";
  /// The software stack each job runs (a --stack name: its defaults and
  /// fixed costs) and its per-iteration fixed cost when not the stack's
  /// (--iteration-overhead: how the run is timed and logged).
  std::string stack = "megatron-core", moe_stack = "megatron-core";
  std::optional<double> iteration_overhead_s, moe_iteration_overhead_s;
  /// Searches may leave up to this many GPUs idle (whole HB domains) when no
  /// layout uses them all (compare/report --allow-idle-gpus).
  int64_t allow_idle_gpus = 0;
  /// The jobs (training and MoE) use this many GPUs of each HB domain larger
  /// than it, the rest staying idle, as a Slurm segment per NVL72 rack (0:
  /// every GPU), as --gpus-per-domain does elsewhere: the jobs use `gpus`
  /// GPUs on every domain size, and the cluster is built and priced whole
  /// around them, gpus / GpusPerDomain(K) domains of K.
  int64_t gpus_per_domain = 0;
  /// The GPUs of each domain of `k` the jobs use.
  int64_t GpusPerDomain(int64_t k) const { return gpus_per_domain > 0 && gpus_per_domain < k ? gpus_per_domain : k; }
  /// The same as perf::NetworkOptions::gpus_per_domain takes it: 0 when
  /// the jobs use every GPU of a domain of `k`.
  int64_t NetworkGpusPerDomain(int64_t k) const { return GpusPerDomain(k) < k ? GpusPerDomain(k) : 0; }
  /// The jobs' GPUs on domains of `k`: the same on every domain size.
  int64_t JobGpus(int64_t /*k*/) const { return gpus; }
  /// The GPUs built on domains of `k`: whole domains around the jobs'.
  int64_t BuiltGpus(int64_t k) const { return gpus / GpusPerDomain(k) * k; }
  // MoE side (needs `system`): an MoE model timed per HB domain size on each
  // network with each dispatch algorithm. Empty moe_model means none.
  std::string moe_model;
  int64_t moe_global_batch_size = 0;
  int moe_max_domains = 0;  ///< node-limited routing (0 = any)
  bool moe_overlap = false;
  // Shared-cluster side: a job trace (a CSV as `railsim cluster --trace`
  // reads, or "synthetic") replayed on the cluster of the first HB domain
  // size and radix under each policy, on each design. Empty: none.
  std::string job_trace;
  std::vector<std::string> job_trace_policies = {"first-fit", "domain-packing"};
};

/// Parses and validates a scenario JSON document. Throws Error naming the field.
Scenario ParseScenarioJson(std::string_view text);

/// The JSON form, which ParseScenarioJson reads back unchanged.
std::string ScenarioToJson(const Scenario& scenario);

}  // namespace railsim::spec
