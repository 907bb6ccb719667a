// The failure study's Monte Carlo: a training run's failures and repairs over
// many trials, drawn from each component's rate and repair time, with the
// spares a policy keeps (study/failures.h); the impact of one failure set is
// failures.cc's.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/interrupt.h"
#include "railsim/study/failures.h"

namespace railsim::study {
namespace {

constexpr double kSecondsPerYear = 365.25 * 86400;

// SplitMix64: a small, fast generator whose stream is the same on every
// platform (std:: distributions are not), so a seed reproduces a run.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1].
  double Uniform() { return (double(Next() >> 11) + 1.0) * 0x1.0p-53; }
  double Exponential(double mean) { return -std::log(Uniform()) * mean; }
  int64_t Below(int64_t n) { return int64_t(Uniform() * double(n)) % n; }
  /// Poisson with a small mean (inversion), for the parts under repair at the start.
  int64_t Poisson(double mean) {
    if (mean <= 0) return 0;
    if (mean > 500) return std::max<int64_t>(0, std::llround(mean + std::sqrt(mean) * Normal()));
    double p = std::exp(-mean), cdf = p, u = Uniform();
    int64_t k = 0;
    while (u > cdf && k < 100000) {
      ++k;
      p *= mean / double(k);
      cdf += p;
    }
    return k;
  }

 private:
  double Normal() { return std::sqrt(-2 * std::log(Uniform())) * std::cos(2 * M_PI * Uniform()); }
  uint64_t state_;
};

// Time at each level of spare demand, over all trials: demand rises when a
// part needing a spare fails and falls when it is repaired. Changes are
// sorted by a radix sort of 48-bit keys (time quantised to 2^-32 of the run,
// under a millisecond for a 30-day run, then the change's index), which is
// what keeps 100,000 trials of a 32,768-GPU run to seconds.
class DemandLevels {
 public:
  struct Change {
    double t;
    int32_t delta;
    int32_t pool;  ///< rail for per-rail pools, else 0
  };

  void Accumulate(const std::vector<Change>& changes, int pools, double horizon) {
    SortByTime(changes, horizon);
    counts_.assign(size_t(pools), 0);
    rails_at_.assign(1, pools);
    int32_t max_level = 0;
    double last = 0;
    for (uint32_t index : order_) {
      const Change& c = changes[index];
      const double t = std::clamp(c.t, 0.0, horizon);
      Add(max_level, t - last);
      last = t;
      if (pools == 1) {
        max_level = std::max(0, max_level + c.delta);
        continue;
      }
      int32_t& count = counts_[size_t(c.pool)];
      --rails_at_[size_t(count)];
      count = std::max(0, count + c.delta);
      if (size_t(count) >= rails_at_.size()) rails_at_.resize(size_t(count) + 1, 0);
      ++rails_at_[size_t(count)];
      if (count > max_level) max_level = count;
      while (max_level > 0 && rails_at_[size_t(max_level)] == 0) --max_level;
    }
    Add(max_level, horizon - last);
  }

  /// The smallest level held for at least `fraction` of the time.
  int64_t LevelCovering(double fraction) const {
    double total = 0;
    for (double t : time_at_) total += t;
    double covered = 0;
    for (size_t level = 0; level < time_at_.size(); ++level) {
      covered += time_at_[level];
      if (covered >= fraction * total * (1 - 1e-12)) return int64_t(level);
    }
    return int64_t(time_at_.size()) - 1;
  }

 private:
  // order_ = the changes' indices in time order, ties in index order. A
  // trial with more than 2^16 changes falls back to a comparison sort.
  void SortByTime(const std::vector<Change>& changes, double horizon) {
    order_.resize(changes.size());
    if (changes.size() > 0xffff) {
      for (size_t i = 0; i < order_.size(); ++i) order_[i] = uint32_t(i);
      std::stable_sort(order_.begin(), order_.end(),
                       [&](uint32_t a, uint32_t b) { return changes[a].t < changes[b].t; });
      return;
    }
    keys_.resize(changes.size());
    const double scale = 4294967295.0 / horizon;
    for (size_t i = 0; i < changes.size(); ++i) {
      const double q = std::clamp(changes[i].t, 0.0, horizon) * scale;
      keys_[i] = (uint64_t(q) << 16) | uint64_t(i);
    }
    scratch_.resize(keys_.size());
    for (int shift = 16; shift < 48; shift += 8) {  // LSD over the time bits; stable
      size_t bucket[257] = {};
      for (uint64_t k : keys_) ++bucket[((k >> shift) & 0xff) + 1];
      for (int b = 0; b < 256; ++b) bucket[b + 1] += bucket[b];
      for (uint64_t k : keys_) scratch_[bucket[(k >> shift) & 0xff]++] = k;
      keys_.swap(scratch_);
    }
    for (size_t i = 0; i < keys_.size(); ++i) order_[i] = uint32_t(keys_[i] & 0xffff);
  }

  void Add(int32_t level, double dt) {
    if (dt <= 0) return;
    if (size_t(level) >= time_at_.size()) time_at_.resize(size_t(level) + 1, 0);
    time_at_[size_t(level)] += dt;
  }

  std::vector<int32_t> counts_;
  std::vector<int32_t> rails_at_;  ///< pools at each count
  std::vector<double> time_at_;
  std::vector<uint64_t> keys_, scratch_;
  std::vector<uint32_t> order_;
};

}  // namespace

const char* SparePolicyName(SparePolicy p) {
  switch (p) {
    case SparePolicy::kAny: return "any";
    case SparePolicy::kSameRail: return "same-rail";
    case SparePolicy::kDomain: return "domain";
    case SparePolicy::kOcs: return "ocs";
  }
  return "?";
}

std::optional<SparePolicy> ParseSparePolicy(std::string_view name) {
  for (SparePolicy p : {SparePolicy::kAny, SparePolicy::kSameRail, SparePolicy::kDomain, SparePolicy::kOcs}) {
    if (name == SparePolicyName(p)) return p;
  }
  return std::nullopt;
}

std::vector<std::string> SparePolicyNames() { return {"any", "same-rail", "domain", "ocs"}; }

SparePolicy DefaultSparePolicy(net::Design design) {
  return design == net::Design::kRailOnly ? SparePolicy::kSameRail : SparePolicy::kAny;
}

MonteCarloWork EstimateMonteCarloWork(const std::vector<ComponentEffect>& components, SparePolicy policy,
                                      const MonteCarloOptions& o) {
  MonteCarloWork w;
  for (const ComponentEffect& c : components) {
    // Failures over the run plus the parts already under repair at its
    // start (rate x MTTR), as RunMonteCarlo draws them; a spare taken per
    // rail adds one change per GPU it replaces.
    const double per_second = double(c.count) * c.rate_per_year / kSecondsPerYear;
    const double draws = per_second * (o.days * 86400 + c.mttr_hours * 3600);
    const double changes = policy == SparePolicy::kSameRail || policy == SparePolicy::kOcs
                               ? std::max(1, c.spare_gpus)
                               : 1;
    w.events_per_trial += draws * changes;
  }
  w.events = w.events_per_trial * double(o.trials);
  return w;
}

MonteCarloResult RunMonteCarlo(const DesignSetup& d, const std::vector<ComponentEffect>& components,
                               SparePolicy policy, const MonteCarloOptions& o) {
  const net::Topology& t = d.topology;
  const comm::DomainUse& use = d.context.domain_use;
  const int64_t n = use.JobGpus(t.gpus());  // the job's GPUs: a GPU component's instances
  const int64_t k = t.params().hb_domain_size;
  const double horizon = o.days * 86400;
  MonteCarloResult r;
  r.design = d.design;
  r.policy = policy;
  r.trials = o.trials;
  r.days = o.days;
  r.seed = o.seed;
  r.components = components;
  for (const ComponentEffect& c : components) r.slowdowns_timed = r.slowdowns_timed || c.slowdown != 1;
  // Pools the spares are counted in: one (any GPU, or spare domains) or one per rail.
  const bool per_rail = policy == SparePolicy::kSameRail;
  const int pools = per_rail ? int(k) : 1;
  DemandLevels demand, ports;  // ports: OCS spare ports per rail
  std::vector<DemandLevels::Change> changes, port_changes;
  struct Interruption {
    double t;
    bool network;
  };
  std::vector<Interruption> interruptions;
  std::vector<int64_t> counts(size_t(o.trials));
  double useful_sum = 0, network_interruptions = 0, all_interruptions = 0;
  Rng rng(o.seed);
  // A part out of service: spare demand from t for `repair` seconds.
  auto demand_spare = [&](const ComponentEffect& c, int64_t instance, double start, double repair) {
    const int64_t gpus = c.spare_gpus;
    const int64_t first_gpu = c.component == spec::Component::kHost ? instance * gpus : instance % n;
    auto change = [&](std::vector<DemandLevels::Change>& list, int32_t units, int32_t pool) {
      list.push_back({start, units, pool});
      list.push_back({start + repair, -units, pool});
    };
    switch (policy) {
      case SparePolicy::kAny: change(changes, int32_t(gpus), 0); break;
      case SparePolicy::kDomain: change(changes, 1, 0); break;
      case SparePolicy::kSameRail:
        for (int64_t g = first_gpu; g < first_gpu + gpus; ++g) {
          change(changes, 1, int32_t(t.rail_of(use.GpuId(g % n))));
        }
        break;
      case SparePolicy::kOcs:
        change(changes, int32_t(gpus), 0);
        for (int64_t g = first_gpu; g < first_gpu + gpus; ++g) {
          change(port_changes, 1, int32_t(t.rail_of(use.GpuId(g % n))));
        }
        break;
    }
  };
  for (int64_t trial = 0; trial < o.trials; ++trial) {
    ThrowIfInterrupted();
    changes.clear();
    port_changes.clear();
    interruptions.clear();
    double degraded_loss = 0;
    for (const ComponentEffect& c : components) {
      const double rate = double(c.count) * c.rate_per_year / kSecondsPerYear;  // per second, all instances
      if (rate <= 0 || (!c.interrupts && c.slowdown <= 1 && c.spare_gpus == 0)) continue;
      const double mttr = c.mttr_hours * 3600;
      if (c.spare_gpus > 0) {
        // Steady state: parts already under repair at the start (M/M/inf:
        // Poisson many, each with an exponential residual repair time).
        for (int64_t i = rng.Poisson(rate * mttr); i > 0; --i) {
          demand_spare(c, rng.Below(c.count), 0, rng.Exponential(mttr));
        }
      }
      for (double time = rng.Exponential(1 / rate); time < horizon; time += rng.Exponential(1 / rate)) {
        const int64_t instance = rng.Below(c.count);
        const double repair = rng.Exponential(mttr);
        if (c.interrupts) interruptions.push_back({time, spec::IsNetworkComponent(c.component)});
        if (c.slowdown > 1) degraded_loss += std::min(repair, horizon - time) * (1 - 1 / c.slowdown);
        if (c.spare_gpus > 0) demand_spare(c, instance, time, repair);
      }
    }
    // Progress since the last restart; a failure loses the work since the
    // last checkpoint (checkpoints every interval of progress) and restarts.
    std::sort(interruptions.begin(), interruptions.end(),
              [](const Interruption& a, const Interruption& b) { return a.t < b.t; });
    double useful = 0, resume = 0;
    for (const Interruption& i : interruptions) {
      if (i.t > resume) {
        const double run = i.t - resume;
        useful += std::floor(run / o.checkpoint_interval_s) * o.checkpoint_interval_s;
      }
      resume = i.t + o.restart_time_s;  // a failure during a restart starts it again
      network_interruptions += i.network ? 1 : 0;
    }
    if (horizon > resume) useful += horizon - resume;
    useful = std::max(0.0, useful - degraded_loss);
    useful_sum += useful;
    counts[size_t(trial)] = int64_t(interruptions.size());
    all_interruptions += double(interruptions.size());
    demand.Accumulate(changes, pools, horizon);
    if (policy == SparePolicy::kOcs) ports.Accumulate(port_changes, int(k), horizon);
    if (o.progress && (trial + 1) % 1000 == 0) o.progress(double(trial + 1) / double(o.trials));
  }
  const double trials = double(o.trials);
  r.interruptions_mean = all_interruptions / trials;
  double var = 0;
  for (int64_t c : counts) var += (double(c) - r.interruptions_mean) * (double(c) - r.interruptions_mean);
  var = o.trials > 1 ? var / (trials - 1) : 0;
  r.interruptions_ci95 = 1.96 * std::sqrt(var / trials);
  auto quantile = [&](double q) {
    size_t index = std::min(counts.size() - 1, size_t(q * double(counts.size() - 1) + 0.5));
    std::nth_element(counts.begin(), counts.begin() + std::ptrdiff_t(index), counts.end());
    return counts[index];
  };
  r.interruptions_p05 = quantile(0.05);
  r.interruptions_p95 = quantile(0.95);
  r.goodput = useful_sum / trials / horizon;
  r.gpu_hours_lost_mean = (horizon - useful_sum / trials) / 3600 * double(n);
  r.network_share = all_interruptions > 0 ? network_interruptions / all_interruptions : 0;
  const int64_t level = demand.LevelCovering(o.target_availability);
  switch (policy) {
    case SparePolicy::kAny:
    case SparePolicy::kOcs: r.spares_needed = level; break;
    case SparePolicy::kSameRail: r.spares_needed = level * k; break;
    case SparePolicy::kDomain: r.spares_needed = level * k; break;
  }
  r.spare_domains = (r.spares_needed + k - 1) / k;
  if (policy == SparePolicy::kOcs) {
    // The OCS sits on every NIC-to-leaf cable (a port each side) plus its
    // spare NIC-side ports per rail.
    r.ocs_ports_per_rail = ports.LevelCovering(o.target_availability);
    r.ocs_ports = 2 * t.gpus() + k * r.ocs_ports_per_rail;  // every NIC's cable, idle GPUs' too
    r.ocs_cost_usd = double(r.ocs_ports) * o.catalog.ocs_port_cost_usd;
    r.ocs_power_w = double(r.ocs_ports) * o.catalog.ocs_port_power_w;
  }
  return r;
}


namespace {
constexpr double kMaxMonteCarloEvents = 2e9;
constexpr double kMaxEventsPerTrial = 2e7;
}  // namespace

void CheckMonteCarloWork(const MonteCarloWork& w, const MonteCarloOptions& o, const std::string& trials_field,
                         const std::string& catalog_field) {
  if (w.events_per_trial > kMaxEventsPerTrial) {
    throw Error(catalog_field,
                fmt::format("one trial of {} days would draw about {:.3g} failures and repairs (parts x rate x "
                            "(days + MTTR)), more than the {:.0e} one trial may hold; check the catalog's "
                            "rate_per_year and mttr_hours, or lower the days",
                            o.days, w.events_per_trial, kMaxEventsPerTrial));
  }
  if (w.events > kMaxMonteCarloEvents) {
    throw Error(trials_field, fmt::format("{} trials would draw about {:.3g} failure events, more than the {:.0e} a "
                                          "run may take (about {:.0f} minutes); lower the trials (at most about {}) "
                                          "or the days",
                                          o.trials, w.events, kMaxMonteCarloEvents, w.events / 20e6 / 60,
                                          int64_t(kMaxMonteCarloEvents / std::max(1.0, w.events_per_trial))));
  }
}

}  // namespace railsim::study
