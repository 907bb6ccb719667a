#include "railsim/study/compare.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/error.h"
#include "railsim/core/interrupt.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/spec/job_trace.h"
#include "railsim/spec/presets.h"
#include "railsim/study/cluster_fabric.h"
#include "railsim/study/collective_study.h"
#include "railsim/study/precisions.h"

namespace railsim::study {
namespace {

std::vector<net::TopologyParams> Cases(const spec::Scenario& s) {
  std::vector<net::TopologyParams> cases;
  for (int k : s.hb_domain_sizes) {
    for (int radix : s.radixes) {
      net::TopologyParams p;
      p.gpus = s.BuiltGpus(k);
      p.hb_domain_size = k;
      p.radix = radix;
      p.port_speed_Bps = s.port_speed_Bps;
      p.oversubscription = s.oversubscription;
      cases.push_back(p);
    }
  }
  return cases;
}

// The NIC network the jobs on domains of `k` are timed on: `timed` with the
// GPUs of each domain the scenario's jobs use.
perf::NetworkOptions JobNetwork(const spec::Scenario& s, int64_t k, perf::NetworkOptions timed) {
  timed.gpus_per_domain = s.NetworkGpusPerDomain(k);
  return timed;
}

}  // namespace

void ValidateScenarioNetworks(const spec::Scenario& scenario) {
  for (const net::TopologyParams& p : Cases(scenario)) {
    try {
      net::ValidateAllDesigns(p);
    } catch (const Error& e) {
      throw Error(fmt::format("scenario '{}' (hb_domain_size {}, radix {})", scenario.name,
                              p.hb_domain_size, p.radix),
                  e.message());
    }
  }
}

namespace {

// A search's outcome into `out`: its fastest strategy, or why none fits.
void Keep(const search::SearchResult& r, BestStrategy* out) {
  out->fits = !r.results.empty();
  if (out->fits) {
    out->best = r.results[0];
  } else {
    out->why = WhyNothingFits(r);
  }
}

std::vector<MoeSweepPoint> MoeSweep(const spec::Scenario& scenario, const spec::ModelSpec& model,
                                   const spec::SystemSpec& system, int64_t k, const perf::NetworkOptions& timed) {
  comm::MoeDispatch d;
  d.tokens = model.seq_length;
  d.bytes_per_token = 2.0 * model.hidden_size;
  d.experts = model.num_experts;
  d.topk = model.moe_router_topk;
  d.max_domains = scenario.moe_max_domains;
  // The job's GPUs, in domains of the GPUs it uses of each.
  const int64_t gpus = scenario.JobGpus(k), kj = scenario.GpusPerDomain(k);
  const perf::NetworkOptions job = JobNetwork(scenario, k, timed);
  const comm::ClusterFabrics fabrics[2] = {
      perf::MakeClusterNetwork(system, gpus, comm::NetworkKind::kRailOptimized, k, job).fabrics,
      perf::MakeClusterNetwork(system, gpus, comm::NetworkKind::kRailOnly, k, job).fabrics};
  std::vector<MoeSweepPoint> out;
  // Within one domain (the largest EP that fits), then 2, 4, ... domains.
  int64_t ep = 1;
  while (ep * 2 <= kj && model.num_experts % (ep * 2) == 0) ep *= 2;
  for (; ep <= model.num_experts && ep <= gpus && model.num_experts % ep == 0 && gpus % ep == 0; ep *= 2) {
    MoeSweepPoint p;
    p.ep = ep;
    const comm::GroupLayout g = comm::LayoutOf(ep, 1, kj);
    p.domains = g.domains;
    for (DispatchTimes* times : {&p.rail_optimized, &p.rail_only}) {
      const comm::ClusterFabrics& f = fabrics[times == &p.rail_optimized ? 0 : 1];
      times->forwarded_s = comm::MoeDispatchTime(d, comm::MoeAllToAll::kForwarded, g, f);
      times->direct_s = comm::MoeDispatchTime(d, comm::MoeAllToAll::kDirect, g, f);
    }
    out.push_back(p);
  }
  return out;
}

// The searches of a comparison, run in one pass so that progress can count
// strategies rather than searches: one MoE search enumerates hundreds of
// times the strategies of a dense one, and counted as equals the line sat
// at 45% for most of the run, then jumped to 100%.
class SearchQueue {
 public:
  using Store = std::function<void(const search::SearchResult&)>;
  void Add(perf::PerfContext c, search::SearchOptions o, Store store) {
    o.top_k = 1;
    jobs_.push_back({std::move(c), std::move(o), std::move(store)});
  }
  void Run(int threads, int64_t idle_gpus, const std::function<void(double)>& progress) {
    std::vector<double> weights;
    double total = 0;
    for (const Job& j : jobs_) {
      // At least 1, so that a search with no layout still moves the line.
      weights.push_back(double(std::max<int64_t>(1, progress ? search::CountStrategies(j.context, j.options) : 1)));
      total += weights.back();
    }
    double done = 0;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      ThrowIfInterrupted();
      search::SearchOptions o = jobs_[i].options;
      o.threads = threads;
      if (progress) {
        o.progress = [&, i](int64_t units, int64_t of) {
          if (of > 0) progress((done + weights[i] * double(units) / double(of)) / total);
        };
      }
      jobs_[i].store(SearchAllowingIdle(jobs_[i].context, o, idle_gpus));
      done += weights[i];
      if (progress) progress(done / total);
    }
    jobs_.clear();
  }

 private:
  struct Job {
    perf::PerfContext context;
    search::SearchOptions options;
    Store store;
  };
  std::vector<Job> jobs_;
};

// The MoE side: per HB domain size, a search on each network with each
// dispatch algorithm (one on the ideal network, where both are the same).
void QueueMoe(const spec::Scenario& scenario, const spec::ModelSpec& model, const ScenarioSystems& systems,
              const perf::NetworkOptions& timed, SearchQueue* queue, CompareResult* result) {
  result->moe_model_name = model.name;
  result->moe_seq_length = model.seq_length;
  result->moe_experts = model.num_experts;
  result->moe.resize(scenario.hb_domain_sizes.size());
  const spec::Stack stack = spec::ParseStack(scenario.moe_stack, "/moe_stack");
  for (size_t ki = 0; ki < scenario.hb_domain_sizes.size(); ++ki) {
    const int k = scenario.hb_domain_sizes[ki];
    MoeCase& m = result->moe[ki];
    if (!systems.For(k)) continue;
    const spec::SystemSpec& system = *systems.For(k);
    m.hb_domain_size = k;
    m.global_batch = scenario.moe_global_batch_size;
    auto options = [&](spec::MoeAllToAll algorithm) {
      search::SearchOptions o = search::OptionsForStack(stack);
      o.global_batch = scenario.moe_global_batch_size;
      o.moe.moe_alltoall = algorithm;
      o.moe.moe_max_domains = scenario.moe_max_domains;
      o.moe.moe_overlap = scenario.moe_overlap;
      return o;
    };
    // `result->moe` is sized above and not resized again, so `m` stays put
    // until the queue runs.
    const int64_t gpus = scenario.JobGpus(k), kj = scenario.GpusPerDomain(k);
    const perf::NetworkOptions job = JobNetwork(scenario, k, timed);
    for (comm::NetworkKind network : {comm::NetworkKind::kRailOptimized, comm::NetworkKind::kRailOnly}) {
      perf::PerfContext c = perf::MakePerfContext(model, system, gpus, network, k, job);
      perf::ApplyStack(stack, &c, scenario.moe_iteration_overhead_s);
      MoeOnNetwork& on = network == comm::NetworkKind::kRailOptimized ? m.rail_optimized : m.rail_only;
      for (spec::MoeAllToAll a : kMoeAlgorithms) {
        search::SearchOptions o = options(a);
        o.precisions = ParseSearchPrecisions(scenario.moe_precision, c, "/moe_precision");
        queue->Add(c, o, [out = &on.of(a)](const search::SearchResult& r) { Keep(r, out); });
      }
    }
    perf::PerfContext ideal = perf::MakePerfContext(model, system, gpus, comm::NetworkKind::kIdeal, k, job);
    perf::ApplyStack(stack, &ideal, scenario.moe_iteration_overhead_s);
    search::SearchOptions o = options(spec::MoeAllToAll::kForwarded);
    o.precisions = ParseSearchPrecisions(scenario.moe_precision, ideal, "/moe_precision");
    queue->Add(ideal, o, [&m](const search::SearchResult& r) { Keep(r, &m.ideal); });
    m.ep_sweep = MoeSweep(scenario, model, system, k, timed);
    // One expert per GPU over max(E, K) GPUs, when the cluster has them (K:
    // the GPUs the jobs use of each domain).
    if ((model.num_experts % kj == 0 || kj % model.num_experts == 0) &&
        std::max<int64_t>(model.num_experts, kj) <= gpus) {
      m.alltoall_gpus = std::max<int64_t>(model.num_experts, kj);
      m.alltoall_bytes_per_pair = double(model.seq_length) * model.moe_router_topk * 2.0 * model.hidden_size /
                                  double(m.alltoall_gpus);
      auto time = [&](comm::NetworkKind network, bool pipelined) {
        CollectiveRequest r;
        r.system = system;
        r.gpus = m.alltoall_gpus;
        r.hb_domain_size = k;
        r.network = network;
        r.network_options = job;
        r.op = comm::Op::kAllToAll;
        r.group = {r.gpus, 1};
        r.bytes = m.alltoall_bytes_per_pair * double(r.gpus);
        r.plan_options.pipelined = pipelined;
        return RunCollective(r).analytic_s;
      };
      m.alltoall_rail_optimized_s = time(comm::NetworkKind::kRailOptimized, false);
      m.alltoall_sequential_s = time(comm::NetworkKind::kRailOnly, false);
      m.alltoall_pipelined_s = time(comm::NetworkKind::kRailOnly, true);
      m.alltoall_ideal_s = time(comm::NetworkKind::kIdeal, false);
    }
  }
}

// The scenario's job trace replayed as `railsim cluster` replays one: on
// the cluster of the first HB domain size and radix, every design, the
// scenario's policies, and otherwise the command's defaults (ClusterOptions',
// SyntheticTraceOptions').
ClusterResult RunSharedCluster(const spec::Scenario& scenario, int threads) {
  const int k = scenario.hb_domain_sizes.front();
  const spec::SystemSpec system =
      spec::LoadSystem(scenario.SystemFor(k).empty() ? "dgx-h100" : scenario.SystemFor(k), "/system");
  const spec::JobTrace trace = scenario.job_trace == "synthetic" ? spec::MakeSyntheticTrace({})
                                                                  : spec::LoadJobTrace(scenario.job_trace, "/job_trace");
  net::TopologyParams p;
  p.gpus = scenario.BuiltGpus(k);
  p.hb_domain_size = k;
  p.port_speed_Bps = scenario.port_speed_Bps;
  p.hb_bw_Bps = system.hb_bw_Bps;
  p.radix = scenario.radixes.front();
  p.oversubscription = scenario.oversubscription;
  const std::vector<std::shared_ptr<const ClusterFabric>> fabrics =
      BuildDesignFabrics(p, {net::Design::kRailOnly, net::Design::kRailOptimized, net::Design::kFatTree});
  ClusterOptions o;
  o.policies.clear();
  const bool all = scenario.job_trace_policies == std::vector<std::string>{"all"};
  for (const std::string& name : all ? PolicyNames() : scenario.job_trace_policies) {
    o.policies.push_back(ParsePolicy(name, "/job_trace_policies"));
  }
  o.threads = std::max(1, threads);
  o.comm_shares = EstimateCommShares(system, nullptr);
  return RunCluster(trace, fabrics, o);
}

// Refuses a bad trace or policy name before any search runs, naming the
// scenario's key.
void CheckSharedCluster(const spec::Scenario& scenario) {
  if (scenario.job_trace.empty()) return;
  const std::vector<std::string>& names = scenario.job_trace_policies;
  if (names != std::vector<std::string>{"all"}) {
    std::vector<SchedulerPolicy> seen;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string where = "/job_trace_policies/" + std::to_string(i);
      const SchedulerPolicy p = ParsePolicy(names[i], where);
      if (std::find(seen.begin(), seen.end(), p) != seen.end()) {
        throw Error(where, "policy '" + names[i] + "' is listed twice");
      }
      seen.push_back(p);
    }
  }
  if (scenario.job_trace != "synthetic") spec::LoadJobTrace(scenario.job_trace, "/job_trace");
}

// TrainingOnNetwork::usd_per_pflops_day of `on` (rail-optimized or
// Rail-only) in training case `t`, from the priced designs.
double UsdPerPflopsDay(const CompareResult& result, const TrainingCase& t, const TrainingOnNetwork& on) {
  if (!on.fits || on.kind == comm::NetworkKind::kIdeal) return 0;
  const net::Design design =
      on.kind == comm::NetworkKind::kRailOptimized ? net::Design::kRailOptimized : net::Design::kRailOnly;
  const perf::Estimate& e = on.best.estimate;
  if (!(e.iteration_time_s > 0)) return 0;
  for (const NetworkCase& c : result.network) {
    if (c.params.hb_domain_size != t.hb_domain_size || c.params.radix != on.shape.radix) continue;
    for (const DesignResult& d : c.designs) {
      if (d.params.design != design || !d.cluster) continue;
      const double per_day = ClusterCostPerDay(*d.cluster, result.operating);
      return CostPerPflopsDay(per_day, e.model_flops_per_iteration / e.iteration_time_s);
    }
  }
  return 0;
}

}  // namespace

spec::MoeAllToAll MoeOnNetwork::faster() const {
  if (!forwarded.fits) return direct.fits ? spec::MoeAllToAll::kDirect : spec::MoeAllToAll::kAuto;
  return direct.fits && direct.time_s() < forwarded.time_s() ? spec::MoeAllToAll::kDirect
                                                              : spec::MoeAllToAll::kForwarded;
}

const search::RankedStrategy* MoeOnNetwork::found() const {
  const spec::MoeAllToAll a = faster();
  return a == spec::MoeAllToAll::kAuto ? nullptr : &of(a).best;
}

CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class,
                         const spec::ModelSpec* model, const ScenarioSystems& systems, int threads,
                         const perf::NetworkOptions& timed, const spec::ModelSpec* moe_model,
                         const std::function<void(double)>& progress, const ComparePricing& pricing) {
  CheckSharedCluster(scenario);
  CompareResult result;
  result.scenario = scenario;
  result.timed = timed;
  result.server = pricing.server;
  result.hb_servers = pricing.hb_servers;
  result.hb_port_class = pricing.hb_port_class;
  result.operating = pricing.operating;
  for (net::TopologyParams p : Cases(scenario)) {
    // The HB fabric of domains larger than a server carries the system's
    // NVLink bandwidth (WholeClusterCost).
    if (const spec::SystemSpec* system = systems.For(p.hb_domain_size)) p.hb_bw_Bps = system->hb_bw_Bps;
    NetworkCase c{p, CompareDesigns(p, port_class)};
    if (const spec::ServerClass* server = result.ServerFor(int(p.hb_domain_size))) {
      for (DesignResult& d : c.designs) d.cluster = WholeClusterCost(d, *server, result.hb_port_class);
    }
    result.network.push_back(std::move(c));
  }
  std::vector<std::string> names;
  for (int k : scenario.hb_domain_sizes) {
    const spec::SystemSpec* system = systems.For(k);
    if (!system) continue;
    result.system_names[k] = system->name;
    if (std::find(names.begin(), names.end(), system->name) == names.end()) names.push_back(system->name);
  }
  result.system_name = fmt::format("{}", fmt::join(names, " and "));
  SearchQueue queue;
  if (moe_model) QueueMoe(scenario, *moe_model, systems, timed, &queue, &result);
  if (model) {
    result.model_name = model->name;
    result.seq_length = model->seq_length;
    const spec::Stack stack = spec::ParseStack(scenario.stack, "/stack");
    // Sized once: the queued searches hold references into it.
    result.training.resize(scenario.hb_domain_sizes.size() * scenario.global_batch_sizes.size());
    size_t i = 0;
    for (int k : scenario.hb_domain_sizes) {
      for (int64_t batch : scenario.global_batch_sizes) {
        TrainingCase& t = result.training[i++];
        t.hb_domain_size = k;
        t.global_batch = batch;
        search::SearchOptions o = search::OptionsForStack(stack);
        o.global_batch = batch;
        const spec::SystemSpec* system = systems.For(k);
        if (!system) continue;
        for (TrainingOnNetwork* on : {&t.rail_optimized, &t.rail_only, &t.ideal}) {
          perf::PerfContext c = perf::MakePerfContext(*model, *system, scenario.JobGpus(k), on->kind, k,
                                                      JobNetwork(scenario, k, timed));
          perf::ApplyStack(stack, &c, scenario.iteration_overhead_s);
          if (on->kind != comm::NetworkKind::kIdeal) on->shape = c.shape;
          o.precisions = ParseSearchPrecisions(scenario.precision, c, "/precision");
          queue.Add(c, o, [&t, on, c, o](const search::SearchResult& r) {
            Keep(r, on);
            if (!on->fits && on->why == NoFit::kNoLayout && t.nearby.below == 0 && t.nearby.above == 0) {
              t.nearby = NearestUsableGpus(c, o);
            }
            t.feasible = t.rail_optimized.fits && t.rail_only.fits && t.ideal.fits;
          });
        }
      }
    }
  }
  queue.Run(threads, scenario.allow_idle_gpus, progress);
  for (TrainingCase& t : result.training) {
    for (TrainingOnNetwork* on : {&t.rail_optimized, &t.rail_only}) {
      on->usd_per_pflops_day = UsdPerPflopsDay(result, t, *on);
    }
  }
  if (!scenario.job_trace.empty()) result.shared_cluster = RunSharedCluster(scenario, threads);
  return result;
}

}  // namespace railsim::study
