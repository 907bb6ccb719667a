// Job traces for `railsim cluster`: the jobs a shared cluster runs (when each
// is submitted, how long it runs, how many GPUs it asks for), read from a CSV
// file or generated, and a cluster's switch map (which ToR each host hangs
// under).
//
// Trace CSV (the formats of the reference traces in tests/data/job-traces/):
// a header line, then one job per line. Required columns: submit_s,
// duration_s, gpus. Optional columns, read and checked: model (a model preset
// name, used as the job's model), state, gpus_per_server, gpu_milli,
// queue_s, type, gpu_spec (kept as text; the study does not use them). Any
// other column is refused with a did-you-mean. Every cell is checked; an
// error names the line and the column, on one line. Rows are bounded by
// kMaxTraceJobs.
//
// Switch map CSV (lingjun2023-topo.csv): columns host, asw, psw, dsw; one row
// per (host, asw, psw) uplink, so a host appears once per PSW its ToR reaches.
// Plain values, no I/O beyond ReadTextFile; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::spec {

/// Most jobs a trace may hold (rows of the file or generated).
constexpr int64_t kMaxTraceJobs = 1'000'000;
/// Largest job, in GPUs (the largest cluster the builder accepts).
constexpr int64_t kMaxJobGpus = int64_t{1} << 20;
/// Latest submit time and longest duration: ten years, in seconds.
constexpr double kMaxTraceSeconds = 10.0 * 365 * 86400;
/// Most hosts and ToR switches a switch map may hold.
constexpr int64_t kMaxSwitchMapHosts = 1 << 18;

struct TraceJob {
  double submit_s = 0;
  double duration_s = 0;
  int64_t gpus = 0;
  std::string model;  ///< model preset name; empty: chosen by size (study/cluster_jobs.h)
  std::string state;  ///< as in the file, not used
};

struct JobTrace {
  std::string source;  ///< file path, or "synthetic"
  std::vector<TraceJob> jobs;  ///< in file order
};

/// The column names a trace may have, for help and did-you-mean.
std::vector<std::string> TraceColumns();

/// Parses trace text. `where` prefixes errors ("--trace t.csv"), which read
/// "line L, column 'C': ..." after it. Throws Error.
JobTrace ParseJobTrace(std::string_view text, const std::string& where);

/// Reads and parses the file at `path` (ReadTextFile's size bound).
JobTrace LoadJobTrace(const std::string& path, const std::string& where);

/// A synthetic trace: `jobs` jobs with Poisson arrivals of `arrivals_per_hour`,
/// sizes drawn from `size_buckets` (GPU counts) with `size_shares` (summing
/// to about 1; each bucket's size used as is), durations lognormal with the
/// given median and 90th percentile. Deterministic for a seed (own 64-bit
/// generator, not <random>'s distributions, whose output differs between
/// standard libraries).
struct SyntheticTraceOptions {
  int64_t jobs = 1000;
  double arrivals_per_hour = 10;
  /// Lingjun's mix (tests/data/job-traces/README.md): share of jobs of 1,
  /// 2-8, 9-64, 65-512 and 513+ GPUs, each bucket drawn as one typical size.
  std::vector<int64_t> size_buckets = {1, 8, 32, 128, 1024};
  std::vector<double> size_shares = {0.093, 0.463, 0.341, 0.102, 0.001};
  double duration_median_s = 420;    ///< Lingjun's median
  double duration_p90_s = 17'940;    ///< Lingjun's 90th percentile
  uint64_t seed = 1;
};

/// Throws Error naming the flag for counts outside [1, kMaxTraceJobs], a
/// non-positive rate, empty or mismatched buckets, sizes outside
/// [1, kMaxJobGpus], negative shares, or p90 <= median.
void ValidateSyntheticOptions(const SyntheticTraceOptions& options);
JobTrace MakeSyntheticTrace(const SyntheticTraceOptions& options);

/// Parses a size mix "8:0.5,64:0.3,512:0.2" (GPUs:share). Throws Error(where).
void ParseSizeMix(std::string_view text, const std::string& where, SyntheticTraceOptions* options);

/// A cluster's hosts and their switches: host h hangs under ToR tor_of[h];
/// ToR t reaches the aggregation switches tor_psws[t] (indices into psw_names).
struct SwitchMap {
  std::vector<std::string> host_names;  ///< in first-seen order
  std::vector<int32_t> tor_of;          ///< per host
  std::vector<std::string> tor_names;
  std::vector<std::vector<int32_t>> tor_psws;  ///< per ToR, sorted
  std::vector<std::string> psw_names;
  int64_t hosts() const { return static_cast<int64_t>(host_names.size()); }
};

/// Parses a switch map (columns host, asw, psw, dsw in any order; dsw is
/// read but a single core layer is assumed). A host under two ToRs is an
/// error. Throws Error.
SwitchMap ParseSwitchMap(std::string_view text, const std::string& where);
SwitchMap LoadSwitchMap(const std::string& path, const std::string& where);

}  // namespace railsim::spec
