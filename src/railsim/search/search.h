// The parallelisation search: every valid strategy (tp, pp, dp, cp, ep and
// the expert tensor-parallel degree, micro-batch, virtual stages and their interleave group size (pp or 2 pp),
// recomputation, sequence parallelism,
// distributed optimizer, and on request data-parallel sharding and optimizer
// precision) for a model on a cluster, memory-infeasible ones
// discarded before timing, the rest timed and ranked by iteration time.
//
// Enumeration builds only valid strategies (divisors, never filters over a
// grid). Work is split over threads by (tp, cp, pp) units taken from a shared
// counter; each worker owns its counters and its best-k list, and the lists
// merge in a total order (time, then strategy fields), so the result is the
// same for any thread count. Layer costs are computed once per (tp, cp, pp,
// micro-batch, sp, ep, etp) and reused across vp, recomputation and optimizer
// choices.
//
// MoE models: the expert layers fold onto the attention's GPUs (Megatron-Core's
// MoE parallel folding), so ep ranges over the divisors of the experts with
// ep x etp dividing tp x cp x dp, for the expert tensor-parallel degrees
// SearchOptions::expert_tp names: by default tp (Megatron-Core's default) and
// 1 (experts whole on each GPU, the layout the folding paper recommends for
// fine-grained experts).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/strategy.h"

namespace railsim::search {

/// SearchOptions::expert_tp: try etp = tp and etp = 1.
constexpr int kExpertTpAny = -1;

struct SearchOptions {
  int64_t global_batch = 0;
  int top_k = 10;
  int threads = 1;
  /// Tensor parallelism stays inside one HB domain: tp divides K.
  bool tp_within_hb_domain = true;
  /// Largest context-parallel degree tried (powers of two).
  int max_cp = 16;
  spec::Attention attention = spec::Attention::kFlash;
  std::optional<spec::CudaGraphImpl> cuda_graph_impl;  ///< every strategy's (spec::Strategy)
  /// Sequence-parallel strategies run with TP-communication overlap (off for
  /// frameworks without it).
  bool tp_comm_overlap = true;
  /// GEMM precisions tried (fp8 only where the GPU has an FP8 peak).
  std::vector<spec::Precision> precisions = {spec::Precision::kBf16};
  /// Also try every data-parallel sharding (ZeRO-0 to 3) and optimizer
  /// precision (--explore-optimizer); otherwise only the distributed
  /// optimizer on and off, everything in fp32.
  bool explore_optimizer = false;
  /// MoE dispatch settings every strategy runs with (moe_alltoall,
  /// moe_overlap, moe_imbalance, moe_max_domains; the rest is ignored).
  spec::Strategy moe;
  /// Expert tensor-parallel degrees tried for MoE models: kExpertTpAny (tp
  /// and 1), 0 (tp only, Megatron-Core's default) or one degree.
  int expert_tp = kExpertTpAny;
  /// Called now and then from the calling thread with (units done, units total).
  std::function<void(int64_t, int64_t)> progress;
};

struct RankedStrategy {
  spec::Strategy strategy;
  perf::Estimate estimate;  ///< with memory filled in
  /// GPUs of each HB domain its job uses (the context's domain_use.used).
  int64_t gpus_per_domain = 0;
};

struct SearchResult {
  std::vector<RankedStrategy> results;  ///< best first, at most top_k
  int64_t candidates = 0;  ///< strategies enumerated
  int64_t evaluated = 0;   ///< timed (they fit in memory)
  int64_t pruned = 0;      ///< discarded for memory before timing
  double elapsed_s = 0;
  int threads = 1;
  int64_t global_batch = 0;  ///< the batch searched
  /// Layouts may leave up to this many of the context's GPUs idle (searched
  /// as smaller clusters; each result's strategy says how many it uses).
  int64_t idle_gpus_allowed = 0;
  /// The GPUs per HB domain searched when several were (search's
  /// --gpus-per-domain auto or a list; each result says its own); empty:
  /// the context's alone.
  std::vector<int64_t> gpus_per_domain_tried;
};

/// The options a search for a run on `stack` starts from: the stack's
/// attention kernel, and TP-communication overlap where the stack has it
/// (megatron-2021: classic attention, none).
SearchOptions OptionsForStack(spec::Stack stack);

/// Number of strategies Search() would enumerate, without timing any.
int64_t CountStrategies(const perf::PerfContext& c, const SearchOptions& options);

/// Runs the search. Requires options.global_batch >= 1, top_k >= 1,
/// threads >= 1. Throws only Interrupted (core/interrupt.h), when a stop was
/// asked for while it ran.
SearchResult Search(const perf::PerfContext& c, const SearchOptions& options);

/// The order results are ranked in: faster first, ties broken by the
/// strategy's fields, then more GPUs used per HB domain first, so that the
/// order is total and deterministic.
bool RanksBefore(const RankedStrategy& a, const RankedStrategy& b);

}  // namespace railsim::search
