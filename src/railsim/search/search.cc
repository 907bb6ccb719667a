#include "railsim/search/search.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
#include <tuple>

#include "railsim/core/interrupt.h"
#include "railsim/core/divisors.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"
#include "railsim/perf/stage_load.h"

namespace railsim::search {
namespace {

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
// the split is even (Megatron's interleaving), else the divisors of the
// smallest stage's layers (floor(layers / pp)): its virtual stages stay
// equal, the larger stages' differ by a layer. Every count up to it would
// also be valid, but tried 30 counts for DeepSeek-V3's 61 layers on 2
// stages and tripled the comparison's search for layouts that only add
// chunks to the same stages.
std::vector<int64_t> VirtualStages(const spec::ModelSpec& m, const Unit& u) {
  if (u.pp < 2) return {1};
  return Divisors(m.num_layers / u.pp);
}

// The expert layouts tried: (ep, Strategy::etp) with ep a divisor of the
// experts, the expert tensor-parallel degree one the options name that
// divides the experts' hidden size, and ep x etp dividing tp x cp x dp
// (Megatron-Core's folding rule, spec::ExpertFoldingProblem).
struct ExpertLayout {
  int ep = 1;
  int etp = 0;  ///< as Strategy::etp: 0 = tp
};

std::vector<ExpertLayout> ExpertLayouts(const spec::ModelSpec& m, const SearchOptions& o, const Unit& u) {
  if (!m.is_moe()) return {ExpertLayout{}};
  std::vector<int> etps = {0};
  if (o.expert_tp == kExpertTpAny && u.tp > 1) etps.push_back(1);
  if (o.expert_tp > 0 && o.expert_tp != u.tp) etps = {o.expert_tp};
  const int64_t ranks = int64_t{u.tp} * u.cp * u.dp;
  std::vector<ExpertLayout> out;
  for (int etp : etps) {
    const int64_t degree = etp > 0 ? etp : u.tp;
    if (m.moe_ffn_hidden_size % degree != 0) continue;
    for (int64_t e : Divisors(m.num_experts)) {
      if (ranks % (e * degree) == 0) out.push_back({int(e), etp});
    }
  }
  return out;
}

// What the per-layer costs depend on besides the degrees and micro-batch:
// sequence parallelism (only with tp > 1, where MoE models require it), TP
// communication overlap (with sequence parallelism, unless the options rule
// it out: it never makes a strategy slower, since the model charges at most
// the communication it hides, and it needs no memory, so the strategy without
// it need not be timed too) and the GEMM precision (those asked for that the
// GPU has).
struct LayerChoice {
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  spec::Precision precision = spec::Precision::kBf16;
};

std::vector<LayerChoice> LayerChoices(const perf::PerfContext& c, const SearchOptions& o, const Unit& u) {
  std::vector<bool> sps = u.tp == 1 ? std::vector<bool>{false}
                          : c.model.is_moe() ? std::vector<bool>{true} : std::vector<bool>{false, true};
  std::vector<LayerChoice> out;
  for (spec::Precision p : o.precisions) {
    if (!c.gpu.Supports(p)) continue;
    for (bool sp : sps) out.push_back({sp, sp && o.tp_comm_overlap, p});
  }
  return out;
}

// The optimizer settings tried: without --explore-optimizer the distributed
// optimizer on and off, with it every data-parallel sharding (ZeRO-0 to 3)
// crossed with the main-gradient, master-weight and moment dtypes (both
// moments share one dtype: the memory and time depend only on their sum).
// Sharding only matters with data-parallel ranks to shard over.
struct OptimizerChoice {
  spec::DpSharding sharding = spec::DpSharding::kNone;
  spec::MainGradsDtype grads = spec::MainGradsDtype::kFp32;
  spec::MainParamsDtype master = spec::MainParamsDtype::kFp32;
  spec::MomentDtype moments = spec::MomentDtype::kFp32;
};

std::vector<OptimizerChoice> OptimizerChoices(const perf::PerfContext& c, const SearchOptions& o, const Unit& u) {
  const bool shards = u.dp * u.cp > 1;
  std::vector<OptimizerChoice> out;
  if (!o.explore_optimizer) {
    // The stack's dtypes; no sharding, the distributed optimizer, and the
    // stack's own sharding when it is another (FSDP's full).
    const spec::StackProfile& p = spec::StackProfileOf(c.stack);
    const OptimizerChoice base{spec::DpSharding::kNone, p.main_grads_dtype, p.main_params_dtype, p.exp_avg_dtype};
    out.push_back(base);
    if (!shards) return out;
    out.push_back(base);
    out.back().sharding = spec::DpSharding::kOptimizer;
    if (p.dp_sharding != spec::DpSharding::kNone && p.dp_sharding != spec::DpSharding::kOptimizer) {
      out.push_back(base);
      out.back().sharding = p.dp_sharding;
    }
    return out;
  }
  for (spec::DpSharding sharding : {spec::DpSharding::kNone, spec::DpSharding::kOptimizer,
                                    spec::DpSharding::kGradients, spec::DpSharding::kFull}) {
    if (!shards && sharding != spec::DpSharding::kNone) continue;
    for (spec::MainGradsDtype grads : {spec::MainGradsDtype::kFp32, spec::MainGradsDtype::kBf16}) {
      for (spec::MainParamsDtype master : {spec::MainParamsDtype::kFp32, spec::MainParamsDtype::kFp16,
                                           spec::MainParamsDtype::kNone}) {
        for (spec::MomentDtype moments : {spec::MomentDtype::kFp32, spec::MomentDtype::kBf16}) {
          out.push_back({sharding, grads, master, moments});
        }
      }
    }
  }
  return out;
}

// Interleaving needs the micro-batches to be a multiple of pp; otherwise only
// vp = 1 (the first of `vps`) is usable.
size_t UsableVirtualStages(const std::vector<int64_t>& vps, int64_t microbatches, int pp) {
  return microbatches % pp == 0 ? vps.size() : 1;
}

// Interleave group sizes tried with vp > 1: Megatron-Core's default pp, and
// 2 pp where there are that many micro-batches (it hides the wrap-around
// sends behind pp more chunks at the cost of (vp - 1) pp more in flight;
// larger N only adds memory once the sends are hidden). Both leave a last
// group of 0 or pp micro-batches, as Megatron-Core requires. 0 stands for pp.
int GroupSizeCount(int vp, int64_t microbatches, int pp) { return vp > 1 && microbatches >= 2 * pp ? 2 : 1; }

constexpr spec::Recompute kRecomputeModes[] = {spec::Recompute::kNone, spec::Recompute::kSelective,
                                               spec::Recompute::kFull};

// Calls visit(strategy, r, o) for every strategy of `unit` with the same
// (micro-batch, sp, ep, etp) grouped together, on_group(strategy) before each
// group so the caller can compute its layer costs once, and
// on_layout(strategy) before each (vp, group size) layout of a group, whose
// strategies differ only in o, an index of the unit's OptimizerChoices, and
// r, an index of kRecomputeModes (the inner loop). The order does not change
// the result: TopK keeps the best k in RanksBefore's total order.
template <typename OnGroup, typename OnLayout, typename Visit>
void Enumerate(const perf::PerfContext& c, const SearchOptions& o, const Unit& u, OnGroup on_group,
               OnLayout on_layout, Visit visit) {
  const spec::ModelSpec& m = c.model;
  const std::vector<int64_t> vps = VirtualStages(m, u);
  const std::vector<ExpertLayout> experts = ExpertLayouts(m, o, u);
  const std::vector<LayerChoice> choices = LayerChoices(c, o, u);
  const std::vector<OptimizerChoice> optimizers = OptimizerChoices(c, o, u);
  const spec::StackProfile& stack = spec::StackProfileOf(c.stack);
  for (int64_t b : Divisors(o.global_batch / u.dp)) {
    const size_t usable_vps = UsableVirtualStages(vps, o.global_batch / (u.dp * b), u.pp);
    for (const ExpertLayout& expert : experts) {
      for (const LayerChoice& choice : choices) {
        spec::Strategy s;
        s.tp = u.tp;
        s.cp = u.cp;
        s.pp = u.pp;
        s.dp = u.dp;
        s.ep = expert.ep;
        s.etp = expert.etp;
        s.micro_batch = b;
        s.global_batch = o.global_batch;
        s.sequence_parallel = choice.sequence_parallel;
        s.tp_comm_overlap = choice.tp_comm_overlap;
        s.precision = choice.precision;
        s.attention = o.attention;
        s.cuda_graph_impl = o.cuda_graph_impl;
        s.moe_alltoall = o.moe.moe_alltoall;
        s.moe_overlap = o.moe.moe_overlap;
        s.moe_imbalance = o.moe.moe_imbalance;
        s.moe_max_domains = o.moe.moe_max_domains;
        s.moe_dispatch_precision = o.moe.moe_dispatch_precision;
        s.overlap_dp_comm = stack.overlap_dp_comm;
        s.overlap_p2p_comm = stack.overlap_p2p_comm;
        s.grad_reduce_16bit = stack.grad_reduce_16bit;
        on_group(s);
        const int64_t microbatches = o.global_batch / (u.dp * b);
        for (size_t i = 0; i < usable_vps; ++i) {
          s.vp = int(vps[i]);
          for (int g = 0; g < GroupSizeCount(s.vp, microbatches, u.pp); ++g) {
            s.microbatch_group_size_per_vp_stage = g == 0 ? 0 : 2 * int64_t{u.pp};
            on_layout(s);
            // Recomputation innermost: strategies that differ only in it
            // follow each other, and their data-parallel and pipeline
            // collectives are the same calls.
            for (size_t i_opt = 0; i_opt < optimizers.size(); ++i_opt) {
              const OptimizerChoice& opt = optimizers[i_opt];
              s.dp_sharding = opt.sharding;
              s.main_grads_dtype = opt.grads;
              s.main_params_dtype = opt.master;
              s.exp_avg_dtype = s.exp_avg_sq_dtype = opt.moments;
              for (size_t r = 0; r < std::size(kRecomputeModes); ++r) {
                s.recompute = kRecomputeModes[r];
                visit(s, r, i_opt);
              }
            }
          }
        }
      }
    }
  }
}

auto Key(const spec::Strategy& s) {
  return std::make_tuple(s.tp, s.pp, s.dp, s.cp, s.ep, s.expert_tp(), s.vp, s.group_size(), s.micro_batch,
                         int(s.recompute), s.sequence_parallel, int(s.dp_sharding), s.tp_comm_overlap, int(s.precision),
                         int(s.main_grads_dtype), int(s.main_params_dtype), int(s.exp_avg_dtype),
                         int(s.exp_avg_sq_dtype));
}

// A worker's best-k list: a max-heap on rank, so the worst is at the front.
struct TopK {
  explicit TopK(size_t k) : k(k) {}
  void Offer(const spec::Strategy& s, const perf::Estimate& e) {
    if (heap.size() == k && !(e.iteration_time_s <= heap.front().estimate.iteration_time_s)) return;
    RankedStrategy r{s, e, 0};
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
  if (Key(a.strategy) != Key(b.strategy)) return Key(a.strategy) < Key(b.strategy);
  return a.gpus_per_domain > b.gpus_per_domain;
}

SearchOptions OptionsForStack(spec::Stack stack) {
  const spec::StackProfile& p = spec::StackProfileOf(stack);
  SearchOptions o;
  o.attention = p.attention;
  o.tp_comm_overlap = p.has_tp_comm_overlap;
  return o;
}

int64_t CountStrategies(const perf::PerfContext& c, const SearchOptions& o) {
  // Counts groups, not strategies, so that even an enormous search is sized
  // in microseconds: each (micro-batch, sp, ep, etp) group holds
  // |usable vp| x |recompute modes| x |optimizer choices| strategies.
  int64_t count = 0;
  for (const Unit& u : Units(c, o)) {
    const std::vector<int64_t> vps = VirtualStages(c.model, u);
    const int64_t groups_per_b =
        int64_t(ExpertLayouts(c.model, o, u).size() * LayerChoices(c, o, u).size());
    for (int64_t b : Divisors(o.global_batch / u.dp)) {
      const int64_t microbatches = o.global_batch / (u.dp * b);
      const size_t usable_vps = UsableVirtualStages(vps, microbatches, u.pp);
      int64_t layouts = 0;  // (vp, group size) pairs
      for (size_t i = 0; i < usable_vps; ++i) layouts += GroupSizeCount(int(vps[i]), microbatches, u.pp);
      count += groups_per_b * layouts * int64_t(std::size(kRecomputeModes)) * int64_t(OptimizerChoices(c, o, u).size());
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
    // Strategies that differ only in tp, dp, cp, ep, the micro-batch size,
    // recomputation or the optimizer share their pipeline ranks' loads; a
    // key comes back in many units (the same pp and micro-batch count), so
    // each is computed once per worker.
    std::map<perf::StageLoadsKey, std::vector<perf::StageLoad>> loads_by_key;
    // The layout's loads: consecutive layouts mostly share them, so the map
    // is searched only when the key changes.
    auto current = loads_by_key.end();
    // Consecutive strategies that differ only in their recomputation repeat
    // their data-parallel and pipeline collectives.
    comm::CollectiveTimeMemo times(c.fabrics);
    // A group's timing costs are computed when its first strategy fits in
    // memory (most groups of a large search are pruned whole); its memory
    // quantities up front.
    bool timed_costs = false;
    // Most strategies fail on their first pipeline rank's memory. Of that
    // rank's bytes, the states depend on the optimizer choice and the rank's
    // layers, not on the recomputation or the micro-batches in flight; the
    // activations depend on the layout and the recomputation, not on the
    // optimizer. Each is computed once and the pruning test is their sum.
    const perf::MemoryLimit limit(c);
    struct FirstRankState {
      perf::StageLoad layers;  // the rank's layer counts it was computed for
      double bytes = -1;       // -1: not computed in this group
    };
    std::vector<FirstRankState> first_state;
    std::array<double, std::size(kRecomputeModes)> first_activations{};
    auto same_layers = [](const perf::StageLoad& a, const perf::StageLoad& b) {
      return a.stage == b.stage && a.layers == b.layers && a.moe_layers == b.moe_layers &&
             a.bf16_layers == b.bf16_layers && a.bf16_moe_layers == b.bf16_moe_layers;
    };
    for (int64_t i = next++; i < int64_t(units.size()) && !InterruptRequested(); i = next++) {
      Enumerate(
          c, o, units[i],
          [&](const spec::Strategy& s) {
            costs.memory = perf::ComputeLayerMemory(c, s);
            timed_costs = false;
            for (FirstRankState& f : first_state) f.bytes = -1;
          },
          [&](const spec::Strategy& s) {
            const perf::StageLoadsKey key = perf::StageLoadsKeyOf(s);
            if (current == loads_by_key.end() || key != current->first) {
              current = loads_by_key.find(key);
              if (current == loads_by_key.end()) {
                current = loads_by_key.emplace(key, perf::FoldedStageLoads(c.model, s)).first;
              }
            }
            first_activations.fill(-1);
          },
          [&](const spec::Strategy& s, size_t r, size_t i_opt) {
            if (InterruptRequested()) return;  // a large unit takes seconds
            ++w->candidates;
            const std::vector<perf::StageLoad>& loads = current->second;
            if (i_opt >= first_state.size()) first_state.resize(i_opt + 1);
            FirstRankState& state = first_state[i_opt];
            if (state.bytes < 0 || !same_layers(state.layers, loads[0])) {
              state = {loads[0], perf::StageStateBytes(c, s, costs.memory, loads[0])};
            }
            // Activations are never negative and rounding is monotonic: a
            // state over capacity on its own is over with any activations,
            // which then need not be computed.
            if (first_activations[r] < 0 && !limit.Over(state.bytes, 0)) {
              first_activations[r] = perf::StageActivationBytesRounded(s, costs.memory, loads[0]);
            }
            if (limit.Over(state.bytes, std::max(0.0, first_activations[r]))) {
              ++w->pruned;
              return;
            }
            std::optional<perf::MemoryBreakdown> memory = perf::MemoryIfFits(c, s, costs.memory, loads);
            if (!memory) {
              ++w->pruned;
              return;
            }
            // Another rank order moves the tensor- and context-parallel
            // groups with dp and pp: their costs are the strategy's own.
            if (!timed_costs || !c.placement.is_default()) {
              costs = perf::ComputeLayerCosts(c, s);
              timed_costs = true;
            }
            ++w->evaluated;
            perf::Estimate e = perf::ComposeIteration(c, s, costs, loads, &times);
            e.memory = *memory;
            w->top.Offer(s, e);
          });
      ++done;
    }
  };
  // Units are taken one at a time from `next`, so fewer threads than asked
  // (the system refused to create one) only make the search slower: the
  // answer is the same.
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work, &workers[t]);
    } catch (const std::system_error&) {
      break;
    }
  }
  std::optional<std::thread> reporter_work;
  if (o.progress) {
    // The calling thread reports progress while the pool works, then joins in.
    try {
      reporter_work.emplace(work, &workers[0]);
    } catch (const std::system_error&) {
    }
    while (reporter_work && done.load() < int64_t(units.size()) && !InterruptRequested()) {
      o.progress(done.load(), int64_t(units.size()));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (reporter_work) {
    reporter_work->join();
  } else {
    work(&workers[0]);
  }
  for (std::thread& t : pool) t.join();
  ThrowIfInterrupted();  // the workers stopped early: the result is incomplete
  if (o.progress) o.progress(int64_t(units.size()), int64_t(units.size()));

  SearchResult result;
  result.threads = int(pool.size()) + 1;
  for (Worker& w : workers) {
    result.candidates += w.candidates;
    result.evaluated += w.evaluated;
    result.pruned += w.pruned;
    result.results.insert(result.results.end(), w.top.heap.begin(), w.top.heap.end());
  }
  for (RankedStrategy& r : result.results) r.gpus_per_domain = c.domain_use.used;
  std::sort(result.results.begin(), result.results.end(), RanksBefore);
  if (result.results.size() > size_t(o.top_k)) result.results.resize(size_t(o.top_k));
  result.global_batch = o.global_batch;
  result.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace railsim::search
