// The iteration-time model: one training iteration of a strategy on a
// cluster, composed from per-layer costs (perf/layer_cost.h), the pipeline
// schedule, data-parallel gradient reduction and the optimizer step, with the
// memory check (perf/memory.h).
//
// Iteration time = m x (per-micro-batch time of the slowest stage)
//   + pipeline bubble ((sum of stage times - slowest) / vp, 1F1B or
//     interleaved) + exposed point-to-point + exposed data-parallel
//     communication + optimizer step,
// where the per-micro-batch time is forward, backward, recomputation and the
// tensor-, context- and expert-parallel communication that is not overlapped.
// The breakdown's exposed times add up to the iteration time.
#pragma once

#include <array>

#include "railsim/comm/collective.h"
#include "railsim/perf/context.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/perf/memory.h"
#include "railsim/spec/strategy.h"

namespace railsim::perf {

struct TimeBreakdown {
  double compute_s = 0;
  double recompute_s = 0;
  double tp_comm_s = 0;
  double cp_comm_s = 0;
  double ep_comm_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;
  double bubble_s = 0;
  double optimizer_s = 0;
  double overhead_s = 0;  ///< fixed per-iteration and per-pipeline-chunk costs
  /// The per-iteration part of overhead_s (the run's --iteration-overhead,
  /// or its stack's or system's); the rest is per pipeline chunk.
  double iteration_overhead_s = 0;
  /// The wait for the slowest data-parallel replica at the step's end
  /// (perf/straggler.h): the GPU's straggler_jitter x sqrt(the rest of the
  /// step) x the expected maximum of dp standard normals.
  double straggler_s = 0;
  /// Expert-parallel dispatch and combine hidden behind compute (with
  /// --moe-overlap); not part of the iteration time.
  double ep_comm_hidden_s = 0;
  /// The exposed times in one fixed order, with a JSON key and a label each;
  /// reports list them from here so none can be forgotten.
  struct Component {
    const char* key;
    const char* label;
    double seconds;
  };
  std::array<Component, 11> components() const {
    return {{{"compute_s", "compute", compute_s},
             {"recompute_s", "recompute", recompute_s},
             {"tp_comm_s", "tensor-parallel comm", tp_comm_s},
             {"cp_comm_s", "context-parallel comm", cp_comm_s},
             {"ep_comm_s", "expert-parallel comm", ep_comm_s},
             {"pp_comm_s", "pipeline comm", pp_comm_s},
             {"dp_comm_s", "data-parallel comm", dp_comm_s},
             {"bubble_s", "pipeline bubble", bubble_s},
             {"optimizer_s", "optimizer", optimizer_s},
             {"overhead_s", "fixed overheads", overhead_s},
             {"straggler_s", "straggler wait", straggler_s}}};
  }
  double total() const {
    double sum = 0;
    for (const Component& c : components()) sum += c.seconds;
    return sum;
  }
};

/// One MoE dispatch (or combine) as the estimate timed it (ep > 1).
struct MoeDispatchSummary {
  bool timed = false;
  comm::MoeAllToAll algorithm = comm::MoeAllToAll::kDirect;  ///< what auto resolved to
  double dispatch_s = 0;          ///< one dispatch of one micro-batch in one layer
  double combine_s = 0;           ///< one combine (bf16; == dispatch_s with a bf16 dispatch)
  int64_t domains = 1;            ///< HB domains an EP group spans
  double reach_probability = 1;   ///< that a token reaches a given domain
  int moe_layers = 0;
};

struct Estimate {
  double iteration_time_s = 0;
  /// FLOPs of one iteration, model (MFU's) and hardware (HFU's): see perf/model_stats.h.
  double model_flops_per_iteration = 0;
  double hardware_flops_per_iteration = 0;
  /// The dense peak of the format the transformer layers' GEMMs run in
  /// (BF16, FP8 or FP4): what MFU and HFU are shares of. No kernel runs
  /// faster, so MFU <= HFU <= 1 and tflops_per_gpu <= peak_flops / 1e12.
  double peak_flops = 0;
  double mfu = 0;             ///< model FLOPs / (time x GPUs x peak_flops)
  double hfu = 0;             ///< hardware FLOPs (with recomputation) / (time x GPUs x peak_flops)
  double tflops_per_gpu = 0;  ///< hardware FLOP/s per GPU / 1e12
  double tokens_per_s = 0;
  int64_t microbatches = 0;
  TimeBreakdown breakdown;
  MemoryBreakdown memory;
  MoeDispatchSummary moe;
};

/// Bytes per parameter of the gradient reduction (fp32, or 16-bit).
double GradientBytesPerParam(const spec::Strategy& s);
/// The tied word-embedding gradient all-reduced between first and last stage.
double EmbeddingSyncBytes(const PerfContext& c, const spec::Strategy& s);

/// Estimates one iteration. Requires spec::ValidateStrategy(c.model, c.gpus, s).
Estimate EstimateIteration(const PerfContext& c, const spec::Strategy& s);

/// The same from precomputed layer costs (the search's fast path); `costs`
/// must come from ComputeLayerCosts with the same tp, cp, micro-batch,
/// sequence parallelism, attention and ep, and `folded` from
/// FoldedStageLoads(c.model, s). Does not fill `memory`. With `times` (made
/// for c.fabrics), the data-parallel and pipeline collectives are read from
/// it: the search keeps one per worker, as consecutive strategies repeat them.
Estimate ComposeIteration(const PerfContext& c, const spec::Strategy& s, const LayerCosts& costs,
                          const std::vector<StageLoad>& folded, comm::CollectiveTimeMemo* times = nullptr);

}  // namespace railsim::perf
