#include "railsim/search/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <tuple>

#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"

namespace railsim::search {
namespace {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d) out.push_back(n / d);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One (tp, cp, pp) combination: the unit of parallel work.
struct Unit {
  int tp, cp, pp;
  int64_t dp;
};

std::vector<Unit> Units(const perf::PerfContext& c, const SearchOptions& o) {
  const spec::ModelSpec& m = c.model;
  const int64_t n = c.gpus;
  const int64_t k = c.fabrics.hb_domain_size;
  std::vector<Unit> units;
  for (int64_t tp : Divisors(m.num_attention_heads)) {
    if (m.num_query_groups % tp != 0 || m.ffn_hidden_size % tp != 0 || n % tp != 0) continue;
    if (o.tp_within_hb_domain && (tp > k || k % tp != 0)) continue;
    for (int64_t cp = 1; cp <= o.max_cp; cp *= 2) {
      if (m.seq_length % (2 * cp) != 0 && cp > 1) break;
      if (n % (tp * cp) != 0) break;
      // Every pipeline depth up to the layer count that divides the cluster;
      // uneven layer splits are allowed (as Llama 3's 126 layers on 16 stages).
      for (int64_t pp : Divisors(n / (tp * cp))) {
        if (pp > m.num_layers) break;
        int64_t dp = n / (tp * cp * pp);
        if (o.global_batch % dp != 0) continue;
        units.push_back({int(tp), int(cp), int(pp), dp});
      }
    }
  }
  return units;
}

// Virtual stages per rank tried: the divisors of the layers per stage when
// the split is even (Megatron's interleaving), else every count up to the
// smallest stage's layers (chunks then differ by a layer).
std::vector<int64_t> VirtualStages(const spec::ModelSpec& m, const Unit& u) {
  if (u.pp < 2) return {1};
  if (m.num_layers % u.pp == 0) return Divisors(m.num_layers / u.pp);
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= m.num_layers / u.pp; ++v) out.push_back(v);
  return out;
}

// Calls visit(strategy) for every strategy of `unit` with the same
// (micro-batch, sp, ep) grouped together, and on_costs(strategy) before each
// group so the caller can compute its layer costs once.
template <typename OnGroup, typename Visit>
void Enumerate(const perf::PerfContext& c, const SearchOptions& o, const Unit& u, OnGroup on_group,
               Visit visit) {
  const spec::ModelSpec& m = c.model;
  const std::vector<int64_t> vps = VirtualStages(m, u);
  std::vector<int64_t> eps = {1};
  if (m.is_moe()) {
    eps.clear();
    for (int64_t e : Divisors(m.num_experts)) {
      if (u.dp % e == 0) eps.push_back(e);
    }
  }
  for (int64_t b : Divisors(o.global_batch / u.dp)) {
    const int64_t microbatches = o.global_batch / (u.dp * b);
    for (int64_t e : eps) {
      for (int sp = 0; sp <= (u.tp > 1 ? 1 : 0); ++sp) {
        if (m.is_moe() && u.tp > 1 && !sp) continue;
        spec::Strategy s;
        s.tp = u.tp;
        s.cp = u.cp;
        s.pp = u.pp;
        s.dp = u.dp;
        s.ep = int(e);
        s.micro_batch = b;
        s.global_batch = o.global_batch;
        s.sequence_parallel = sp != 0;
        s.attention = o.attention;
        on_group(s);
        for (int64_t v : vps) {
          if (v > 1 && microbatches % u.pp != 0) continue;
          s.vp = int(v);
          for (spec::Recompute r : {spec::Recompute::kNone, spec::Recompute::kSelective, spec::Recompute::kFull}) {
            s.recompute = r;
            for (int dist = 0; dist <= (u.dp * u.cp > 1 ? 1 : 0); ++dist) {
              s.distributed_optimizer = dist != 0;
              visit(s);
            }
          }
        }
      }
    }
  }
}

auto Key(const spec::Strategy& s) {
  return std::make_tuple(s.tp, s.pp, s.dp, s.cp, s.ep, s.vp, s.micro_batch, int(s.recompute),
                         s.sequence_parallel, s.distributed_optimizer);
}

// A worker's best-k list: a max-heap on rank, so the worst is at the front.
struct TopK {
  explicit TopK(size_t k) : k(k) {}
  void Offer(const spec::Strategy& s, const perf::Estimate& e) {
    if (heap.size() == k && !(e.iteration_time_s <= heap.front().estimate.iteration_time_s)) return;
    RankedStrategy r{s, e};
    if (heap.size() == k) {
      if (!RanksBefore(r, heap.front())) return;
      std::pop_heap(heap.begin(), heap.end(), RanksBefore);
      heap.pop_back();
    }
    heap.push_back(r);
    std::push_heap(heap.begin(), heap.end(), RanksBefore);
  }
  size_t k;
  std::vector<RankedStrategy> heap;
};

}  // namespace

bool RanksBefore(const RankedStrategy& a, const RankedStrategy& b) {
  if (a.estimate.iteration_time_s != b.estimate.iteration_time_s) {
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  }
  return Key(a.strategy) < Key(b.strategy);
}

int64_t CountStrategies(const perf::PerfContext& c, const SearchOptions& o) {
  // Counts groups, not strategies, so that even an enormous search is sized
  // in microseconds: each (micro-batch, sp, ep) group holds
  // |usable vp| x 3 recompute modes x |optimizer choices| strategies.
  int64_t count = 0;
  for (const Unit& u : Units(c, o)) {
    const int64_t optimizers = u.dp * u.cp > 1 ? 2 : 1;
    int64_t vps_all = int64_t(VirtualStages(c.model, u).size());
    int64_t groups_per_b = 0;
    int64_t eps = 1;
    if (c.model.is_moe()) {
      eps = 0;
      for (int64_t e : Divisors(c.model.num_experts)) eps += u.dp % e == 0 ? 1 : 0;
    }
    int64_t sps = (u.tp > 1 && !c.model.is_moe()) ? 2 : 1;
    groups_per_b = eps * sps;
    for (int64_t b : Divisors(o.global_batch / u.dp)) {
      int64_t microbatches = o.global_batch / (u.dp * b);
      int64_t vps = microbatches % u.pp == 0 ? vps_all : 1;
      count += groups_per_b * vps * 3 * optimizers;
    }
  }
  return count;
}

SearchResult Search(const perf::PerfContext& c, const SearchOptions& o) {
  auto start = std::chrono::steady_clock::now();
  const std::vector<Unit> units = Units(c, o);
  const int threads = std::max(1, std::min<int>(o.threads, int(std::max<size_t>(1, units.size()))));
  struct Worker {
    TopK top{1};
    int64_t candidates = 0, evaluated = 0, pruned = 0;
  };
  std::vector<Worker> workers(threads);
  for (Worker& w : workers) w.top = TopK(size_t(o.top_k));
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  auto work = [&](Worker* w) {
    perf::LayerCosts costs;
    for (int64_t i = next++; i < int64_t(units.size()); i = next++) {
      Enumerate(
          c, o, units[i], [&](const spec::Strategy& s) { costs = perf::ComputeLayerCosts(c, s); },
          [&](const spec::Strategy& s) {
            ++w->candidates;
            perf::MemoryBreakdown memory = perf::EstimateMemory(c, s, costs.memory);
            if (!memory.fits) {
              ++w->pruned;
              return;
            }
            ++w->evaluated;
            perf::Estimate e = perf::ComposeIteration(c, s, costs);
            e.memory = memory;
            w->top.Offer(s, e);
          });
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, &workers[t]);
  if (o.progress) {
    // The calling thread reports progress while the pool works, then joins in.
    std::thread last(work, &workers[0]);
    while (done.load() < int64_t(units.size())) {
      o.progress(done.load(), int64_t(units.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    last.join();
    o.progress(int64_t(units.size()), int64_t(units.size()));
  } else {
    work(&workers[0]);
  }
  for (std::thread& t : pool) t.join();

  SearchResult result;
  result.threads = threads;
  for (Worker& w : workers) {
    result.candidates += w.candidates;
    result.evaluated += w.evaluated;
    result.pruned += w.pruned;
    result.results.insert(result.results.end(), w.top.heap.begin(), w.top.heap.end());
  }
  std::sort(result.results.begin(), result.results.end(), RanksBefore);
  if (result.results.size() > size_t(o.top_k)) result.results.resize(size_t(o.top_k));
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace railsim::search
