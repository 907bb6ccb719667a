// The shared-cluster study (`railsim cluster`): a job trace replayed on one
// network under one scheduler policy, for each design and policy asked for.
//
// Replay: events in time order (at equal times finishes, then wait-for-fit
// deadlines, then submissions). The queue is FIFO; with backfill (the
// default, as Slurm runs) every queued job that fits may start, in queue
// order, up to kBackfillDepth jobs per event, with no reservation for the
// head; without it only the head may start. A job larger than the cluster is
// never placed (counted in jobs_unplaceable).
//
// What a placed job costs: its dominant collective is its data-parallel
// ring all-reduce, laid as NCCL lays rings: channel c links the c-th GPU
// (by rail) of each HB domain it holds to the c-th of the next, for as many
// channels as the job's fewest GPUs in a domain; those flows are routed on
// the built network (ClusterFabric). Its ring bandwidth alone on its
// placement against the ideal placement (fewest whole domains, aligned,
// at the NIC rate) gives the placement slowdown; the same flows run with
// every other running job's at sampled moments give the contention
// slowdown. Each stretches only the job's communication share, a per-size
// table (JobClassFor). Job runtime in the replay = duration x placement
// slowdown (duration alone without ClusterOptions::stretch); contention is
// measured, not fed back into the replay.
//
// Deterministic: the same result whatever the thread count.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "railsim/spec/job_trace.h"
#include "railsim/spec/system.h"
#include "railsim/study/cluster_fabric.h"

namespace railsim::study {

enum class SchedulerPolicy { kFirstFit, kDomainPacking, kFewestLeaves, kBlock, kWaitForFit };
const char* PolicyName(SchedulerPolicy p);  ///< "first-fit", "domain-packing", ...
std::vector<std::string> PolicyNames();
/// The policy named `name`; throws Error(where) with a did-you-mean.
SchedulerPolicy ParsePolicy(const std::string& name, const std::string& where);

/// Most queued jobs tried per event with backfill (Slurm's bf_max_job_test
/// default).
constexpr int kBackfillDepth = 500;
/// Most moments of contention sampled (--samples). A moment's flows are at
/// most the cluster's GPUs (one per GPU of each multi-domain ring).
constexpr int64_t kMaxSamples = 100'000;
/// Jobs shorter than this count as this long in jct_slowdown (the Lingjun
/// trace's resolution: a 0 s job there ran under a minute).
constexpr double kSlowdownFloor_s = 60;
/// Points of the occupancy series.
constexpr int kOccupancyPoints = 100;

/// The job a trace's row stands for, by size (the traces name no model):
/// class 0: <= 8 GPUs, Llama-3.1-8B fine-tuning; 1: 9-64, Llama-3.1-8B
/// pre-training; 2: 65-512, Llama-3-70B; 3: > 512, Llama-3-405B-class. Each
/// class is timed once (EstimateCommShares) at a typical size and strategy.
constexpr int kJobClasses = 4;
struct JobClass {
  int index;
  const char* model;       ///< model preset
  int64_t gpus;            ///< the size it is timed at
  int tp, pp;              ///< its strategy there (dp = the rest; micro-batch 1)
  int64_t global_batch;
};
JobClass JobClassFor(int64_t gpus);
const JobClass& JobClassAt(int index);

/// Fallback shares of iteration time that is communication, per class, when
/// none are estimated (tests; a system without a model of its own).
constexpr std::array<double, kJobClasses> kDefaultCommShares = {0.10, 0.15, 0.20, 0.25};

/// Per class: the exposed communication (tensor, context, expert, pipeline
/// and data parallel) over the iteration time, from perf::EstimateIteration
/// of the class's model and strategy at its size on `system` (rail-optimized,
/// the job's HB domains). A class that cannot be timed keeps its default,
/// with a sentence in `notes` (may be null).
std::array<double, kJobClasses> EstimateCommShares(const spec::SystemSpec& system, std::vector<std::string>* notes);

/// Most GPUs a cluster study takes (the built graphs of three designs).
constexpr int64_t kMaxClusterGpus = int64_t{1} << 18;

/// `params` built as each of `designs`, in order; every design is checked
/// (net::ValidateTopologyParams, at most kMaxClusterGpus) before any is
/// built. Throws Error for the first that cannot be.
std::vector<std::shared_ptr<const ClusterFabric>> BuildDesignFabrics(net::TopologyParams params,
                                                                     const std::vector<net::Design>& designs);

struct ClusterOptions {
  std::vector<SchedulerPolicy> policies = {SchedulerPolicy::kFirstFit};
  bool backfill = true;
  /// Runtime = duration x placement slowdown; false: runtime = duration (the
  /// slowdown still measured), as a scheduler simulation with fixed runtimes.
  bool stretch = true;
  /// Per job class: the share of an iteration that is communication, the
  /// part a placement or contention stretches (EstimateCommShares).
  std::array<double, kJobClasses> comm_shares = kDefaultCommShares;
  int64_t segment_gpus = 0;   ///< block: GPUs per segment (0: the HB domain size)
  double max_wait_s = 3600;   ///< wait-for-fit's bound
  int64_t samples = 2000;     ///< most contention moments per run
  int threads = 1;
  /// Called now and then with the fraction of runs x events done (may be empty).
  std::function<void(double)> progress;
};

struct JobRecord {
  int64_t id = 0;  ///< row of the trace
  int64_t gpus = 0;
  double submit_s = 0, start_s = -1, end_s = -1, duration_s = 0;
  int32_t domains = 0, leaves = 0;
  bool rail_misaligned = false;  ///< ring hops between domains change rail
  bool above_leaf = false;       ///< its ring crosses links above the leaves
  double placement_slowdown = 1;
  double contention_slowdown = 1;  ///< mean over the sampled moments it ran in
  int32_t moments = 0;             ///< sampled moments it ran in
  bool placed() const { return start_s >= 0; }
  double wait_s() const { return start_s - submit_s; }
  /// Wait + runtime x contention slowdown.
  double jct_s() const;
  /// Bounded slowdown: jct_s() / max(duration, kSlowdownFloor_s), at least 1.
  double jct_slowdown() const;
};

struct Stat3 {
  double mean = 0, p50 = 0, p99 = 0;
};

struct ClusterRun {
  std::string design;
  SchedulerPolicy policy = SchedulerPolicy::kFirstFit;
  /// Busy GPUs over the cluster's, averaged over the span: the submission
  /// window (first to last submission; first submission to last finish
  /// when every job came at once).
  double occupancy_mean = 0;
  std::vector<double> occupancy;  ///< kOccupancyPoints means over equal slices of the span
  double span_s = 0;
  double makespan_s = 0;          ///< first submission to last finish
  Stat3 queue_wait_s, jct_slowdown, contention_slowdown;
  double placement_slowdown_mean = 0;
  /// Shares of placed jobs and of their GPU-time: across HB domains, with
  /// ring hops changing rail, and with traffic above the leaf switches.
  std::array<double, 3> jobs_across{}, gpu_time_across{};
  double jobs_contended_share = 0, gpu_time_contended_share = 0;
  int64_t jobs_placed = 0, jobs_unplaceable = 0, moments_sampled = 0, flows_simulated = 0;
  std::vector<JobRecord> jobs;
};

struct ClusterResult {
  std::string trace;
  std::array<double, kJobClasses> comm_shares{};  ///< as used
  int64_t gpus = 0, hb_domain_size = 0, trace_jobs = 0;
  std::vector<ClusterRun> runs;  ///< designs in the order given, policies within
  /// The run of `design` ("rail-only", ...) under `policy`, or nullptr.
  const ClusterRun* RunOf(const std::string& design, SchedulerPolicy policy) const;
};

/// A job's ring on its GPUs (see the top of this file).
struct RingSummary {
  int32_t domains = 0, leaves = 0;
  int64_t channels = 0;           ///< ring channels: the job's fewest GPUs in one domain
  bool rail_misaligned = false;   ///< some hop between domains changes rail
  bool above_leaf = false;        ///< some hop crosses links above the leaves
  int64_t flows = 0;              ///< flows between domains
  double alone_rate_Bps = 0;      ///< slowest flow's max-min rate with no other job (0 without flows)
};
/// `gpus` ascending, distinct, below fabric.gpus().
RingSummary SummarizeRing(const ClusterFabric& fabric, const std::vector<int64_t>& gpus);

/// Per job of `placements` (each as SummarizeRing takes it): how much slower
/// its ring's slowest flow is when every job's ring runs at once than alone
/// (>= 1; 1 for jobs inside one domain).
std::vector<double> CommSlowdowns(const ClusterFabric& fabric, const std::vector<std::vector<int64_t>>& placements);

/// Replays `trace` on each fabric under each policy. Requires fabrics with
/// the same GPU count. Throws Interrupted when stopped (core/interrupt.h).
ClusterResult RunCluster(const spec::JobTrace& trace,
                         const std::vector<std::shared_ptr<const ClusterFabric>>& fabrics,
                         const ClusterOptions& options);

/// One run (no threads; for tests). Returns false when interrupted.
bool ReplayCluster(const spec::JobTrace& trace, const ClusterFabric& fabric, SchedulerPolicy policy,
                   const ClusterOptions& options, ClusterRun* run, const std::function<void(int64_t)>& tick = {});

}  // namespace railsim::study
