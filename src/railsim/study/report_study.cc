#include "railsim/study/report_study.h"

#include <algorithm>

#include "railsim/comm/collective.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/search/search.h"
#include "railsim/study/design_setup.h"

namespace railsim::study {
namespace {

// Failure trials per design: enough for a mean to a few tenths of an
// interruption, fast enough for the report's minute.
constexpr int64_t kFailureTrials = 5000;

// The best strategy of `model` in context `c` at `batch`, if any fits.
std::optional<search::RankedStrategy> Best(const perf::PerfContext& c, int64_t batch, int threads) {
  search::SearchOptions o;
  o.global_batch = batch;
  o.top_k = 1;
  o.threads = threads;
  search::SearchResult r = search::Search(c, o);
  if (r.results.empty()) return std::nullopt;
  return r.results[0];
}

double BestTime(const perf::PerfContext& c, int64_t batch, int threads) {
  std::optional<search::RankedStrategy> b = Best(c, batch, threads);
  return b ? b->estimate.iteration_time_s : 0;
}

// HB domain sizes 1, 2, 4, ... up to the largest the system or the
// scenario names, each dividing the cluster.
std::vector<int64_t> HbSizes(const spec::Scenario& s) {
  int64_t largest = 1;
  for (int k : s.hb_domain_sizes) largest = std::max<int64_t>(largest, k);
  std::vector<int64_t> out;
  for (int64_t k = 1; k <= largest; k *= 2) {
    if (s.gpus % s.GpusPerDomain(k) == 0) out.push_back(k);
  }
  return out;
}

// The scenario's model on domains of `k`: the domain size's system, the
// scenario's GPUs as its jobs use them (gpus_per_domain of each domain).
perf::PerfContext JobContext(const ReportInputs& in, comm::NetworkKind network, int64_t k,
                             perf::NetworkOptions o = {}) {
  const spec::Scenario& s = in.scenario;
  o.gpus_per_domain = s.NetworkGpusPerDomain(k);
  return perf::MakePerfContext(*in.model, *in.systems.For(int(k)), s.JobGpus(k), network, k, o);
}

}  // namespace

ReportStudy RunReportStudy(const ReportInputs& in) {
  ReportStudy r;
  const spec::Scenario& sc = in.scenario;
  // Seven steps counted as equal shares; compare, the longest, reports
  // its own progress inside its share.
  constexpr double kSteps = 7;
  int steps_started = -1;
  std::string current;
  auto step = [&](const std::string& label) {
    ++steps_started;
    current = label;
    if (in.progress) in.progress(current, steps_started / kSteps);
  };
  std::function<void(double)> compare_progress;
  if (in.progress) {
    compare_progress = [&](double f) { in.progress(current, (steps_started + f) / kSteps); };
  }
  step("compare");
  r.compare = RunCompare(sc, in.port_class, in.model ? &*in.model : nullptr, in.systems,
                         in.threads, {}, in.moe_model ? &*in.moe_model : nullptr, compare_progress);
  const bool training = in.model && in.systems.fallback && !sc.global_batch_sizes.empty();
  if (training) {
    r.batch = sc.global_batch_sizes.front();
    step("iteration time against HB domain size");
    for (int64_t k : HbSizes(sc)) {
      HbSweepPoint p;
      p.hb_domain_size = k;
      p.rail_optimized_s = BestTime(
          JobContext(in, comm::NetworkKind::kRailOptimized, k), r.batch,
          in.threads);
      p.rail_only_s = BestTime(JobContext(in, comm::NetworkKind::kRailOnly, k), r.batch, in.threads);
      r.hb_sweep.push_back(p);
    }
    step("Rail-only against ideal over global batch");
    for (int k : sc.hb_domain_sizes) {
      perf::PerfContext only = JobContext(in, comm::NetworkKind::kRailOnly, k);
      perf::PerfContext ideal = JobContext(in, comm::NetworkKind::kIdeal, k);
      for (int64_t batch = 64; batch <= 16384; batch *= 2) {
        BatchSweepPoint p;
        p.hb_domain_size = k;
        p.global_batch = batch;
        p.rail_only_s = BestTime(only, batch, in.threads);
        p.ideal_s = BestTime(ideal, batch, in.threads);
        r.batch_sweep.push_back(p);
      }
    }
    step("network cost against iteration time");
    for (const NetworkCase& nc : r.compare.network) {
      for (const DesignResult& d : nc.designs) {
        ParetoPoint p;
        p.design = d.params.design;
        p.hb_domain_size = nc.params.hb_domain_size;
        p.radix = nc.params.radix;
        p.cost_usd = d.bom.cost_usd;
        p.power_w = d.bom.power_w;
        // A system's own HB domain is its server's (DGX H100: 8 GPUs).
        const spec::SystemSpec& system = *in.systems.For(int(p.hb_domain_size));
        p.hb_fabric = EstimateHbFabricCost(nc.params.gpus, p.hb_domain_size, system.hb_domain_size,
                                           system.hb_bw_Bps, in.hb_port_class);
        perf::NetworkOptions o;
        o.radix = nc.params.radix;
        o.oversubscription = nc.params.oversubscription;
        perf::PerfContext c = JobContext(in, NetworkKindOf(p.design), p.hb_domain_size, o);
        if (p.design == net::Design::kFatTree) c.fabrics.rail_leaves = false;
        p.iteration_s = BestTime(c, r.batch, in.threads);
        r.pareto.push_back(p);
      }
    }
    step("traffic");
    const int64_t k = sc.hb_domain_sizes.front();
    perf::PerfContext only = JobContext(in, comm::NetworkKind::kRailOnly, k);
    if (sc.BuiltGpus(k) <= net::kMaxBuildGpus) {
      if (std::optional<search::RankedStrategy> best = Best(only, r.batch, in.threads)) {
        r.traffic_strategy = best->strategy;
        r.traffic_context = only;
        for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly}) {
          perf::PerfContext c = JobContext(in, NetworkKindOf(d), k);
          TrafficOptions o;
          o.design = d;
          r.traffic.push_back(AnalyzeTraffic(c, best->strategy, o));
        }
      }
    }
  }
  step("all-to-all overhead against the bandwidth ratio");
  {
    // 8 HB domains of 8 GPUs (a uniform all-to-all across them), NVLink at
    // 450 GB/s and the NIC swept: what forwarding costs as NICs catch up.
    r.alltoall_domains = 8;
    r.alltoall_hb_domain_size = 8;
    const comm::GroupLayout g = comm::LayoutOf(64, 1, 8);
    for (double ratio : {0.02, 0.05, 0.1, 0.111, 0.2, 0.3, 0.5, 0.75, 1.0}) {
      comm::ClusterFabrics only, opt;
      only.network = comm::NetworkKind::kRailOnly;
      opt.network = comm::NetworkKind::kRailOptimized;
      for (comm::ClusterFabrics* f : {&only, &opt}) {
        f->hb_domain_size = 8;
        f->hb = {450e9, 1, 0};
        f->nic = {450e9 * ratio, 1, 0};
      }
      const double bytes = 64.0 * 1024 * 1024;
      const double direct = comm::AllToAllTime(bytes, g, opt, false);
      AllToAllPoint p;
      p.nic_over_hb = ratio;
      p.sequential_overhead = comm::AllToAllTime(bytes, g, only, false) / direct - 1;
      p.pipelined_overhead = comm::AllToAllTime(bytes, g, only, true) / direct - 1;
      r.alltoall.push_back(p);
    }
  }
  const int first_k = sc.hb_domain_sizes.front();
  if (in.systems.For(first_k) && sc.BuiltGpus(first_k) <= net::kMaxBuildGpus) {
    step("failures");
    ClusterSetup setup;
    setup.system = *in.systems.For(first_k);
    setup.gpus = sc.JobGpus(first_k);
    setup.hb_domain_size = first_k;
    setup.network.gpus_per_domain = sc.NetworkGpusPerDomain(first_k);
    setup.network.radix = sc.radixes.back();
    setup.network.oversubscription = sc.oversubscription;
    MonteCarloOptions o;
    o.trials = kFailureTrials;
    o.catalog = in.failure_catalog;
    r.failure_trials = o.trials;
    for (net::Design d : {net::Design::kRailOptimized, net::Design::kRailOnly, net::Design::kFatTree}) {
      DesignSetup design = SetUpDesign(setup, d);
      r.failures.push_back(
          RunMonteCarlo(design, ComponentEffects(setup, design, o.catalog, o.days), DefaultSparePolicy(d), o));
    }
  }
  return r;
}

}  // namespace railsim::study
