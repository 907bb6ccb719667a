#include "railsim/study/compare.h"

#include <algorithm>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/study/collective_study.h"

namespace railsim::study {
namespace {

std::vector<net::TopologyParams> Cases(const spec::Scenario& s) {
  std::vector<net::TopologyParams> cases;
  for (int k : s.hb_domain_sizes) {
    for (int radix : s.radixes) {
      net::TopologyParams p;
      p.gpus = s.gpus;
      p.hb_domain_size = k;
      p.radix = radix;
      p.port_speed_Bps = s.port_speed_Bps;
      p.oversubscription = s.oversubscription;
      cases.push_back(p);
    }
  }
  return cases;
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

int BestOf(const std::array<search::RankedStrategy, 2>& r, const std::array<bool, 2>& fits) {
  int best = -1;
  for (int i = 0; i < 2; ++i) {
    if (fits[size_t(i)] && (best < 0 || r[size_t(i)].estimate.iteration_time_s <
                                            r[size_t(best)].estimate.iteration_time_s)) {
      best = i;
    }
  }
  return best;
}

std::vector<MoeSweepPoint> MoeSweep(const spec::Scenario& scenario, const spec::ModelSpec& model,
                                   const spec::SystemSpec& system, int64_t k, const perf::NetworkOptions& timed) {
  comm::MoeDispatch d;
  d.tokens = model.seq_length;
  d.bytes_per_token = 2.0 * model.hidden_size;
  d.experts = model.num_experts;
  d.topk = model.moe_router_topk;
  d.max_domains = scenario.moe_max_domains;
  const comm::ClusterFabrics fabrics[2] = {
      perf::MakeClusterNetwork(system, scenario.gpus, comm::NetworkKind::kRailOptimized, k, timed).fabrics,
      perf::MakeClusterNetwork(system, scenario.gpus, comm::NetworkKind::kRailOnly, k, timed).fabrics};
  std::vector<MoeSweepPoint> out;
  // Within one domain (the largest EP that fits), then 2, 4, ... domains.
  int64_t ep = 1;
  while (ep * 2 <= k && model.num_experts % (ep * 2) == 0) ep *= 2;
  for (; ep <= model.num_experts && ep <= scenario.gpus && model.num_experts % ep == 0 && scenario.gpus % ep == 0;
       ep *= 2) {
    MoeSweepPoint p;
    p.ep = ep;
    const comm::GroupLayout g = comm::LayoutOf(ep, 1, k);
    p.domains = g.domains;
    for (int n = 0; n < 2; ++n) {
      p.time_s[n][0] = comm::MoeDispatchTime(d, comm::MoeAllToAll::kForwarded, g, fabrics[n]);
      p.time_s[n][1] = comm::MoeDispatchTime(d, comm::MoeAllToAll::kDirect, g, fabrics[n]);
    }
    out.push_back(p);
  }
  return out;
}

// Counts finished searches for the progress callback.
class SearchCounter {
 public:
  SearchCounter(int64_t total, const std::function<void(double)>& progress) : total_(total), progress_(progress) {}
  void Done() {
    if (progress_) progress_(double(++done_) / double(total_));
  }

 private:
  int64_t total_, done_ = 0;
  const std::function<void(double)>& progress_;
};

search::SearchResult BestOne(const perf::PerfContext& c, search::SearchOptions o, int threads, int64_t idle_gpus,
                             SearchCounter* counter) {
  o.top_k = 1;
  o.threads = threads;
  search::SearchResult r = SearchAllowingIdle(c, o, idle_gpus);
  counter->Done();
  return r;
}

// The MoE side: per HB domain size, a search on each network with each
// dispatch algorithm (one on the ideal network, where both are the same).
void RunMoe(const spec::Scenario& scenario, const spec::ModelSpec& model, const spec::SystemSpec& system,
            int threads, const perf::NetworkOptions& timed, SearchCounter* counter, CompareResult* result) {
  result->moe_model_name = model.name;
  result->moe_experts = model.num_experts;
  for (int k : scenario.hb_domain_sizes) {
    MoeCase m;
    m.hb_domain_size = k;
    m.global_batch = scenario.moe_global_batch_size;
    auto options = [&](spec::MoeAllToAll algorithm) {
      search::SearchOptions o;
      o.global_batch = scenario.moe_global_batch_size;
      o.moe.moe_alltoall = algorithm;
      o.moe.moe_max_domains = scenario.moe_max_domains;
      o.moe.moe_overlap = scenario.moe_overlap;
      return o;
    };
    for (comm::NetworkKind network : {comm::NetworkKind::kRailOptimized, comm::NetworkKind::kRailOnly}) {
      perf::PerfContext c = perf::MakePerfContext(model, system, scenario.gpus, network, k, timed);
      for (int a = 0; a < 2; ++a) {
        search::SearchResult r = BestOne(c, options(a == 0 ? spec::MoeAllToAll::kForwarded : spec::MoeAllToAll::kDirect), threads,
                                         scenario.allow_idle_gpus, counter);
        const bool optimized = network == comm::NetworkKind::kRailOptimized;
        auto& best = optimized ? m.rail_optimized : m.rail_only;
        auto& fits = optimized ? m.rail_optimized_fits : m.rail_only_fits;
        fits[size_t(a)] = !r.results.empty();
        if (fits[size_t(a)]) best[size_t(a)] = r.results[0];
      }
    }
    {
      perf::PerfContext c = perf::MakePerfContext(model, system, scenario.gpus, comm::NetworkKind::kIdeal, k, timed);
      search::SearchResult r =
          BestOne(c, options(spec::MoeAllToAll::kForwarded), threads, scenario.allow_idle_gpus, counter);
      m.ideal_fits = !r.results.empty();
      if (m.ideal_fits) m.ideal = r.results[0];
    }
    m.ep_sweep = MoeSweep(scenario, model, system, k, timed);
    // One expert per GPU over max(E, K) GPUs, when the cluster has them.
    if ((model.num_experts % k == 0 || k % model.num_experts == 0) &&
        std::max<int64_t>(model.num_experts, k) <= scenario.gpus) {
      m.alltoall_gpus = std::max<int64_t>(model.num_experts, k);
      m.alltoall_bytes_per_pair = double(model.seq_length) * model.moe_router_topk * 2.0 * model.hidden_size /
                                  double(m.alltoall_gpus);
      auto time = [&](comm::NetworkKind network, bool pipelined) {
        CollectiveRequest r;
        r.system = system;
        r.gpus = m.alltoall_gpus;
        r.hb_domain_size = k;
        r.network = network;
        r.network_options = timed;
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
    result->moe.push_back(m);
  }
}

}  // namespace

int MoeCase::best_rail_optimized() const { return BestOf(rail_optimized, rail_optimized_fits); }
int MoeCase::best_rail_only() const { return BestOf(rail_only, rail_only_fits); }

CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class,
                         const spec::ModelSpec* model, const spec::SystemSpec* system, int threads,
                         const perf::NetworkOptions& timed, const spec::ModelSpec* moe_model,
                         const std::function<void(double)>& progress) {
  CompareResult result;
  result.scenario = scenario;
  for (const net::TopologyParams& p : Cases(scenario)) {
    result.network.push_back({p, CompareDesigns(p, port_class)});
  }
  if (system) result.system_name = system->name;
  const int64_t k_sizes = int64_t(scenario.hb_domain_sizes.size());
  const int64_t searches = (model && system ? k_sizes * int64_t(scenario.global_batch_sizes.size()) * 3 : 0) +
                           (moe_model && system ? k_sizes * 5 : 0);
  SearchCounter counter(searches, progress);
  if (moe_model && system) RunMoe(scenario, *moe_model, *system, threads, timed, &counter, &result);
  if (!model || !system) return result;
  result.model_name = model->name;
  result.system_name = system->name;
  for (int k : scenario.hb_domain_sizes) {
    for (int64_t batch : scenario.global_batch_sizes) {
      TrainingCase t;
      t.hb_domain_size = k;
      t.global_batch = batch;
      auto best = [&](comm::NetworkKind network, search::RankedStrategy* out) {
        perf::PerfContext c = perf::MakePerfContext(*model, *system, scenario.gpus, network, k, timed);
        if (network == comm::NetworkKind::kRailOptimized) t.rail_optimized_network = c.shape;
        if (network == comm::NetworkKind::kRailOnly) t.rail_only_network = c.shape;
        search::SearchOptions o;
        o.global_batch = batch;
        search::SearchResult r = BestOne(c, o, threads, scenario.allow_idle_gpus, &counter);
        const size_t i = size_t(network == comm::NetworkKind::kRailOptimized ? 0
                                : network == comm::NetworkKind::kRailOnly    ? 1
                                                                             : 2);
        t.fits[i] = !r.results.empty();
        if (t.fits[i]) {
          *out = r.results[0];
        } else {
          t.why[i] = WhyNothingFits(r);
          if (t.why[i] == NoFit::kNoLayout && t.nearby.below == 0 && t.nearby.above == 0) {
            t.nearby = NearestUsableGpus(c, o);
          }
        }
      };
      best(comm::NetworkKind::kRailOptimized, &t.rail_optimized);
      best(comm::NetworkKind::kRailOnly, &t.rail_only);
      best(comm::NetworkKind::kIdeal, &t.ideal);
      t.feasible = t.fits[0] && t.fits[1] && t.fits[2];
      result.training.push_back(t);
    }
  }
  return result;
}

}  // namespace railsim::study
