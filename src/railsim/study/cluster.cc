#include "railsim/study/cluster.h"

#include <algorithm>
#include <limits>
#include <atomic>
#include <cmath>
#include <map>
#include <queue>
#include <thread>
#include <tuple>

#include "railsim/core/error.h"
#include "railsim/core/interrupt.h"
#include "railsim/net/builder.h"
#include "railsim/core/spellcheck.h"
#include "railsim/study/cluster_placement.h"

namespace railsim::study {
namespace {

constexpr SchedulerPolicy kPolicies[] = {SchedulerPolicy::kFirstFit, SchedulerPolicy::kDomainPacking,
                                         SchedulerPolicy::kFewestLeaves, SchedulerPolicy::kBlock,
                                         SchedulerPolicy::kWaitForFit};
// Events between interrupt checks and progress ticks.
constexpr int64_t kCheckEvery = 256;

// A placed job's ring (see the header) and what it says about the placement.
struct Ring {
  FlowSet flows;
  int32_t domains = 0, leaves = 0;
  int64_t channels = 0;
  bool misaligned = false, above_leaf = false;
};

Ring MakeRing(const ClusterFabric& fabric, const std::vector<int64_t>& gpus) {
  Ring ring;
  const int64_t k = fabric.hb_domain_size();
  std::vector<std::vector<int64_t>> by_domain;
  std::vector<int32_t> leaves;
  for (int64_t g : gpus) {  // ascending: domains in order, rails in order inside
    if (by_domain.empty() || by_domain.back().front() / k != g / k) by_domain.emplace_back();
    by_domain.back().push_back(g);
    leaves.push_back(fabric.leaf_of(g));
  }
  std::sort(leaves.begin(), leaves.end());
  ring.leaves = static_cast<int32_t>(std::unique(leaves.begin(), leaves.end()) - leaves.begin());
  ring.domains = static_cast<int32_t>(by_domain.size());
  ring.channels = static_cast<int64_t>(gpus.size());
  if (by_domain.size() < 2) return ring;
  for (const std::vector<int64_t>& d : by_domain) ring.channels = std::min<int64_t>(ring.channels, static_cast<int64_t>(d.size()));
  int32_t path[kMaxPathLinks];
  for (int64_t c = 0; c < ring.channels; ++c) {
    for (size_t i = 0; i < by_domain.size(); ++i) {
      int64_t src = by_domain[i][size_t(c)], dst = by_domain[(i + 1) % by_domain.size()][size_t(c)];
      if (src % k != dst % k) ring.misaligned = true;
      int n = fabric.Path(src, dst, path);
      for (int h = 0; h < n; ++h) ring.above_leaf |= fabric.above_leaf(path[h]);
      ring.flows.Add(path, n);
    }
  }
  return ring;
}

// The ring's bandwidth: NVLink inside one domain, else its channels' slowest flow.
double RingBandwidth(const ClusterFabric& fabric, int32_t domains, int64_t channels, double min_rate) {
  if (domains <= 1) return fabric.hb_bw_Bps();
  return std::min(fabric.hb_bw_Bps(), double(channels) * min_rate);
}

double IdealRingBandwidth(const ClusterFabric& fabric, int64_t gpus) {
  const int64_t k = fabric.hb_domain_size();
  const int64_t domains = (gpus + k - 1) / k;
  return RingBandwidth(fabric, static_cast<int32_t>(domains), gpus / domains, fabric.nic_bw_Bps());
}

double MinRate(const std::vector<double>& rates, int64_t begin, int64_t end) {
  double r = rates.empty() || begin == end ? 0 : rates[size_t(begin)];
  for (int64_t i = begin; i < end; ++i) r = std::min(r, rates[size_t(i)]);
  return r;
}

Stat3 Stats(std::vector<double> v) {
  Stat3 s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  auto rank = [&](double q) {  // nearest rank
    size_t i = static_cast<size_t>(std::ceil(q * double(v.size())));
    return v[std::min(v.size(), std::max<size_t>(i, 1)) - 1];
  };
  s.p50 = rank(0.5);
  s.p99 = rank(0.99);
  return s;
}

// The replay's moving parts for one (fabric, policy).
class Replay {
 public:
  Replay(const spec::JobTrace& trace, const ClusterFabric& fabric, SchedulerPolicy policy, const ClusterOptions& o,
         ClusterRun* run)
      : trace_(trace), fabric_(fabric), policy_(policy), options_(o), run_(run), state_(fabric) {}

  bool Run(const std::function<void(int64_t)>& tick);

 private:
  // Tries queue_[first..] in order (see the top of cluster.h).
  void Schedule(double now, size_t first);
  void Start(int64_t job, std::vector<int64_t> gpus, double now);
  void Finish(int64_t job, double now);
  void SampleContention();
  void Summarize();

  const spec::JobTrace& trace_;
  const ClusterFabric& fabric_;
  SchedulerPolicy policy_;
  const ClusterOptions& options_;
  ClusterRun* run_;
  ClusterState state_;
  // (time, kind: 0 finish, 1 deadline, 2 submit, job), earliest first.
  using Event = std::tuple<double, int, int64_t>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<int64_t> queue_;
  std::vector<std::vector<int64_t>> placed_gpus_;
  std::vector<Ring> rings_;              // of running jobs
  std::vector<double> alone_rate_;
  std::vector<int64_t> running_;         // running jobs with network flows
  std::vector<std::pair<double, int64_t>> busy_steps_;  // (time, busy GPUs after)
  std::vector<double> contention_sum_;
  int64_t busy_ = 0, starts_ = 0, next_sample_ = 0, sample_stride_ = 1;
};

bool Replay::Run(const std::function<void(int64_t)>& tick) {
  const int64_t n = static_cast<int64_t>(trace_.jobs.size());
  run_->jobs.resize(size_t(n));
  placed_gpus_.resize(size_t(n));
  rings_.resize(size_t(n));
  alone_rate_.assign(size_t(n), 0);
  contention_sum_.assign(size_t(n), 0);
  sample_stride_ = std::max<int64_t>(1, (n + options_.samples - 1) / std::max<int64_t>(1, options_.samples));
  for (int64_t j = 0; j < n; ++j) {
    const spec::TraceJob& t = trace_.jobs[size_t(j)];
    JobRecord& r = run_->jobs[size_t(j)];
    r.id = j;
    r.gpus = t.gpus;
    r.submit_s = t.submit_s;
    r.duration_s = t.duration_s;
    if (t.gpus > fabric_.gpus()) {
      ++run_->jobs_unplaceable;
      continue;
    }
    events_.emplace(t.submit_s, 2, j);
  }
  int64_t done = 0;
  while (!events_.empty()) {
    const double now = std::get<0>(events_.top());
    // Jobs queued before now failed on a cluster no emptier unless something
    // finished or a wait-for-fit bound passed: then only new jobs are tried.
    const size_t queued_before = queue_.size();
    bool changed = false;
    while (!events_.empty() && std::get<0>(events_.top()) == now) {
      auto [time, kind, job] = events_.top();
      events_.pop();
      changed = changed || kind != 2;
      if (kind == 0) Finish(job, now);
      if (kind == 2) {
        queue_.push_back(job);
        if (policy_ == SchedulerPolicy::kWaitForFit) events_.emplace(now + options_.max_wait_s, 1, job);
      }
      if (++done % kCheckEvery == 0) {
        if (InterruptRequested()) return false;
        if (tick) tick(kCheckEvery);
      }
    }
    int64_t before = starts_;
    Schedule(now, changed ? 0 : queued_before);
    if (starts_ > before && starts_ >= next_sample_) {
      SampleContention();
      next_sample_ = starts_ + sample_stride_;
    }
  }
  Summarize();
  return true;
}

void Replay::Schedule(double now, size_t first) {
  // A job at least as large as one that failed this pass fails too (for the
  // same bound state of wait-for-fit): skipped without a search.
  int64_t failed_at[2] = {INT64_MAX, INT64_MAX};
  size_t tried = 0, kept = first;
  for (size_t i = first; i < queue_.size(); ++i) {
    int64_t job = queue_[i];
    const int64_t gpus = trace_.jobs[size_t(job)].gpus;
    const bool waited_out = now - trace_.jobs[size_t(job)].submit_s >= options_.max_wait_s;
    bool blocked = (!options_.backfill && kept > 0) || tried >= size_t(kBackfillDepth);
    std::vector<int64_t> place;
    if (!blocked && gpus < failed_at[waited_out]) {
      ++tried;
      place = state_.Place(policy_, gpus, options_.segment_gpus, waited_out);
      if (place.empty()) failed_at[waited_out] = gpus;
    }
    if (place.empty()) {
      queue_[kept++] = job;
    } else {
      Start(job, std::move(place), now);
    }
  }
  queue_.resize(kept);
}

void Replay::Start(int64_t job, std::vector<int64_t> gpus, double now) {
  JobRecord& r = run_->jobs[size_t(job)];
  state_.Take(gpus);
  busy_ += r.gpus;
  busy_steps_.emplace_back(now, busy_);
  Ring ring = MakeRing(fabric_, gpus);
  r.start_s = now;
  r.domains = ring.domains;
  r.leaves = ring.leaves;
  r.rail_misaligned = ring.misaligned;
  r.above_leaf = ring.above_leaf;
  double rate = 0;
  if (ring.flows.size() > 0) {
    rate = MinRate(MaxMinRates(fabric_, ring.flows), 0, ring.flows.size());
    run_->flows_simulated += ring.flows.size();
  }
  const double share = options_.comm_shares[size_t(JobClassFor(r.gpus).index)];
  const double ratio = IdealRingBandwidth(fabric_, r.gpus) / RingBandwidth(fabric_, ring.domains, ring.channels, rate);
  r.placement_slowdown = 1 + share * std::max(0.0, ratio - 1);
  r.end_s = now + r.duration_s * (options_.stretch ? r.placement_slowdown : 1);
  events_.emplace(r.end_s, 0, job);
  alone_rate_[size_t(job)] = rate;
  if (ring.flows.size() > 0) {
    rings_[size_t(job)] = std::move(ring);
    running_.push_back(job);
  }
  placed_gpus_[size_t(job)] = std::move(gpus);
  ++starts_;
}

void Replay::Finish(int64_t job, double now) {
  state_.Release(placed_gpus_[size_t(job)]);
  busy_ -= run_->jobs[size_t(job)].gpus;
  busy_steps_.emplace_back(now, busy_);
  placed_gpus_[size_t(job)] = {};
  auto it = std::find(running_.begin(), running_.end(), job);
  if (it != running_.end()) {
    running_.erase(it);
    rings_[size_t(job)] = Ring();
  }
}

void Replay::SampleContention() {
  ++run_->moments_sampled;
  if (running_.size() < 2) {
    for (int64_t job : running_) {
      contention_sum_[size_t(job)] += 1;
      ++run_->jobs[size_t(job)].moments;
    }
    return;
  }
  FlowSet all;
  std::vector<int64_t> first;
  for (int64_t job : running_) {
    const FlowSet& f = rings_[size_t(job)].flows;
    first.push_back(all.size());
    for (int64_t i = 0; i < f.size(); ++i) {
      all.Add(f.links.data() + f.starts[size_t(i)], static_cast<int>(f.starts[size_t(i) + 1] - f.starts[size_t(i)]));
    }
  }
  first.push_back(all.size());
  run_->flows_simulated += all.size();
  std::vector<double> rates = MaxMinRates(fabric_, all);
  for (size_t i = 0; i < running_.size(); ++i) {
    int64_t job = running_[i];
    JobRecord& r = run_->jobs[size_t(job)];
    double together = MinRate(rates, first[i], first[i + 1]);
    double comm = together > 0 ? alone_rate_[size_t(job)] / together : 1;
    const double share = options_.comm_shares[size_t(JobClassFor(r.gpus).index)];
    contention_sum_[size_t(job)] += 1 + share * std::max(0.0, comm - 1);
    ++r.moments;
  }
}

void Replay::Summarize() {
  ClusterRun& run = *run_;
  double first_submit = INFINITY, last_submit = 0, last_end = 0, gpu_time = 0;
  std::vector<double> waits, jct, contention;
  std::array<double, 3> jobs_across{}, time_across{};
  double contended_jobs = 0, contended_time = 0, placement_sum = 0;
  for (JobRecord& r : run.jobs) {
    if (!r.placed()) continue;
    if (r.moments > 0) r.contention_slowdown = contention_sum_[size_t(r.id)] / r.moments;
    ++run.jobs_placed;
    first_submit = std::min(first_submit, r.submit_s);
    last_submit = std::max(last_submit, r.submit_s);
    last_end = std::max(last_end, r.end_s);
    const double t = double(r.gpus) * (r.end_s - r.start_s);
    gpu_time += t;
    waits.push_back(r.wait_s());
    jct.push_back(r.jct_slowdown());
    if (r.moments > 0) contention.push_back(r.contention_slowdown);
    placement_sum += r.placement_slowdown;
    const bool across[3] = {r.domains > 1, r.rail_misaligned, r.above_leaf};
    for (int i = 0; i < 3; ++i) {
      jobs_across[size_t(i)] += across[i];
      time_across[size_t(i)] += across[i] ? t : 0;
    }
    if (r.contention_slowdown > 1 + 1e-9) {
      ++contended_jobs;
      contended_time += t;
    }
  }
  if (run.jobs_placed == 0) {
    // Nothing ran: waits, slowdowns and shares of placed jobs are undefined
    // (null in the JSON, "-" in the table), not 0.
    const double none = std::numeric_limits<double>::quiet_NaN();
    run.queue_wait_s = run.jct_slowdown = run.contention_slowdown = Stat3{none, none, none};
    run.placement_slowdown_mean = run.jobs_contended_share = run.gpu_time_contended_share = none;
    run.jobs_across.fill(none);
    run.gpu_time_across.fill(none);
    return;
  }
  const double jobs = double(run.jobs_placed);
  run.makespan_s = last_end - first_submit;
  // Occupancy over the submission window (a trace's load; the tail after
  // the last submission only drains), or the makespan when all came at once.
  const double t0 = first_submit, t1 = last_submit > first_submit ? last_submit : last_end;
  run.span_s = t1 - t0;
  run.queue_wait_s = Stats(waits);
  run.jct_slowdown = Stats(jct);
  // No job sampled across domains: nothing shared a link, so no slowdown.
  run.contention_slowdown = contention.empty() ? Stat3{1, 1, 1} : Stats(contention);
  run.placement_slowdown_mean = placement_sum / jobs;
  for (int i = 0; i < 3; ++i) {
    run.jobs_across[size_t(i)] = jobs_across[size_t(i)] / jobs;
    run.gpu_time_across[size_t(i)] = gpu_time > 0 ? time_across[size_t(i)] / gpu_time : 0;
  }
  run.jobs_contended_share = contended_jobs / jobs;
  run.gpu_time_contended_share = gpu_time > 0 ? contended_time / gpu_time : 0;
  // The busy-GPU step function over [t0, t1]: its mean, and its means over
  // kOccupancyPoints equal slices.
  run.occupancy.assign(kOccupancyPoints, 0);
  const double slice = run.span_s / kOccupancyPoints, n = double(fabric_.gpus());
  double busy_time = 0;
  for (size_t i = 0; i + 1 < busy_steps_.size() && slice > 0; ++i) {
    const double a = std::max(busy_steps_[i].first, t0) - t0, b = std::min(busy_steps_[i + 1].first, t1) - t0;
    if (b <= a) continue;
    const double busy = double(busy_steps_[i].second);
    busy_time += busy * (b - a);
    const int last = std::min(kOccupancyPoints - 1, static_cast<int>(b / slice));
    for (int s = std::min(kOccupancyPoints - 1, static_cast<int>(a / slice)); s <= last; ++s) {
      const double lo = std::max(a, s * slice), hi = s == kOccupancyPoints - 1 ? b : std::min(b, (s + 1) * slice);
      if (hi > lo) run.occupancy[size_t(s)] += busy * (hi - lo) / (slice * n);
    }
  }
  // Sums of slices can pass 1 by a rounding error; busy GPUs never exceed the cluster's.
  for (double& o : run.occupancy) o = std::min(1.0, o);
  run.occupancy_mean = run.span_s > 0 ? std::min(1.0, busy_time / (n * run.span_s)) : 0;
}

}  // namespace

RingSummary SummarizeRing(const ClusterFabric& fabric, const std::vector<int64_t>& gpus) {
  Ring ring = MakeRing(fabric, gpus);
  RingSummary r;
  r.domains = ring.domains;
  r.leaves = ring.leaves;
  r.channels = ring.channels;
  r.rail_misaligned = ring.misaligned;
  r.above_leaf = ring.above_leaf;
  r.flows = ring.flows.size();
  if (r.flows > 0) r.alone_rate_Bps = MinRate(MaxMinRates(fabric, ring.flows), 0, r.flows);
  return r;
}

std::vector<double> CommSlowdowns(const ClusterFabric& fabric, const std::vector<std::vector<int64_t>>& placements) {
  FlowSet all;
  std::vector<int64_t> first;
  std::vector<double> alone;
  for (const std::vector<int64_t>& gpus : placements) {
    Ring ring = MakeRing(fabric, gpus);
    alone.push_back(ring.flows.size() > 0 ? MinRate(MaxMinRates(fabric, ring.flows), 0, ring.flows.size()) : 0);
    first.push_back(all.size());
    for (int64_t i = 0; i < ring.flows.size(); ++i) {
      all.Add(ring.flows.links.data() + ring.flows.starts[size_t(i)],
              static_cast<int>(ring.flows.starts[size_t(i) + 1] - ring.flows.starts[size_t(i)]));
    }
  }
  first.push_back(all.size());
  std::vector<double> rates = MaxMinRates(fabric, all);
  std::vector<double> slowdowns;
  for (size_t j = 0; j < placements.size(); ++j) {
    double together = MinRate(rates, first[j], first[j + 1]);
    slowdowns.push_back(first[j] == first[j + 1] || together <= 0 ? 1 : std::max(1.0, alone[j] / together));
  }
  return slowdowns;
}

const char* PolicyName(SchedulerPolicy p) {
  switch (p) {
    case SchedulerPolicy::kFirstFit: return "first-fit";
    case SchedulerPolicy::kDomainPacking: return "domain-packing";
    case SchedulerPolicy::kFewestLeaves: return "fewest-leaves";
    case SchedulerPolicy::kBlock: return "block";
    case SchedulerPolicy::kWaitForFit: return "wait-for-fit";
  }
  return "";
}

std::vector<std::string> PolicyNames() {
  std::vector<std::string> names;
  for (SchedulerPolicy p : kPolicies) names.push_back(PolicyName(p));
  return names;
}

SchedulerPolicy ParsePolicy(const std::string& name, const std::string& where) {
  for (SchedulerPolicy p : kPolicies) {
    if (name == PolicyName(p)) return p;
  }
  throw Error(where, "unknown policy " + Quoted(name) + DidYouMean(name, PolicyNames()) +
                         " (first-fit, domain-packing, fewest-leaves, block, wait-for-fit, all)");
}

const JobClass& JobClassAt(int index) {
  // Typical sizes and Megatron-style strategies: TP inside a domain, PP to
  // fit the larger models, data parallel across the rest.
  static const JobClass kClasses[kJobClasses] = {
      {0, "llama3.1-8b", 8, 8, 1, 32},
      {1, "llama3.1-8b", 64, 8, 1, 256},
      {2, "llama3-70b", 512, 8, 4, 512},
      {3, "llama3-405b", 1024, 8, 2, 1024},
  };
  return kClasses[index];
}

JobClass JobClassFor(int64_t gpus) {
  return JobClassAt(gpus <= 8 ? 0 : gpus <= 64 ? 1 : gpus <= 512 ? 2 : 3);
}

double JobRecord::jct_s() const { return wait_s() + (end_s - start_s) * contention_slowdown; }

double JobRecord::jct_slowdown() const { return std::max(1.0, jct_s() / std::max(duration_s, kSlowdownFloor_s)); }

bool ReplayCluster(const spec::JobTrace& trace, const ClusterFabric& fabric, SchedulerPolicy policy,
                   const ClusterOptions& options, ClusterRun* run, const std::function<void(int64_t)>& tick) {
  run->design = fabric.design();
  run->policy = policy;
  Replay replay(trace, fabric, policy, options, run);
  return replay.Run(tick);
}

const ClusterRun* ClusterResult::RunOf(const std::string& design, SchedulerPolicy policy) const {
  for (const ClusterRun& run : runs) {
    if (run.design == design && run.policy == policy) return &run;
  }
  return nullptr;
}

ClusterResult RunCluster(const spec::JobTrace& trace, const std::vector<std::shared_ptr<const ClusterFabric>>& fabrics,
                         const ClusterOptions& options) {
  ClusterResult result;
  result.trace = trace.source;
  result.trace_jobs = static_cast<int64_t>(trace.jobs.size());
  result.comm_shares = options.comm_shares;
  if (!fabrics.empty()) {
    result.gpus = fabrics[0]->gpus();
    result.hb_domain_size = fabrics[0]->hb_domain_size();
  }
  std::vector<std::pair<size_t, SchedulerPolicy>> units;
  for (size_t f = 0; f < fabrics.size(); ++f) {
    for (SchedulerPolicy p : options.policies) units.emplace_back(f, p);
  }
  result.runs.resize(units.size());
  std::atomic<size_t> next{0};
  std::atomic<int64_t> events_done{0};
  std::atomic<bool> stopped{false};
  const double events_total = std::max(1.0, 2.0 * double(trace.jobs.size()) * double(units.size()));
  // Progress is reported from this thread only (the callback need not be thread-safe).
  auto work = [&](bool report) {
    auto tick = [&](int64_t n) {
      events_done += n;
      if (report && options.progress) options.progress(std::min(1.0, double(events_done) / events_total));
    };
    for (size_t u; (u = next++) < units.size() && !stopped;) {
      if (!ReplayCluster(trace, *fabrics[units[u].first], units[u].second, options, &result.runs[u], tick)) {
        stopped = true;
      }
    }
  };
  const int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(units.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, false);
  work(true);
  for (std::thread& t : pool) t.join();
  if (options.progress) options.progress(1.0);
  ThrowIfInterrupted();
  return result;
}

std::vector<std::shared_ptr<const ClusterFabric>> BuildDesignFabrics(net::TopologyParams params,
                                                                     const std::vector<net::Design>& designs) {
  for (net::Design d : designs) {
    params.design = d;
    net::ValidateTopologyParams(params, kMaxClusterGpus);
  }
  std::vector<std::shared_ptr<const ClusterFabric>> fabrics;
  for (net::Design d : designs) {
    params.design = d;
    fabrics.push_back(ClusterFabric::Built(params));
  }
  return fabrics;
}

}  // namespace railsim::study
