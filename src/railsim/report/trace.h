// The modelled iteration as a timeline: `railsim estimate --trace FILE`
// (Chrome trace event JSON, opens in Perfetto and chrome://tracing) and
// `--trace-png FILE` (the same timeline drawn with Cairo).
//
// The estimate gives each component's exposed time over the iteration, not a
// schedule, so the timeline lays the totals out by one fixed convention: per
// stage track, the micro-batches' work in slices (compute, recompute, TP, CP,
// EP and PP communication, each component's share of a slice), the pipeline
// bubble (at the end on the first stage, waiting for gradients; at the start
// on the last, waiting for activations), then the exposed data-parallel
// communication and the optimizer step. Each track's spans of one component
// add up to that component of the breakdown, and each track to the
// iteration time. Communication hidden behind compute (the MoE dispatch with
// --moe-overlap) gets its own track beside the first stage.
#pragma once

#include <string>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/strategy.h"

namespace railsim::report {

struct TraceSpan {
  int track = 0;
  const char* key = "";    ///< the breakdown's JSON key (compute_s, ..., ep_comm_hidden_s)
  const char* label = "";  ///< what the span shows
  double start_s = 0, duration_s = 0;
};

struct IterationTrace {
  std::string title;                ///< model, system, GPUs
  std::string strategy;             ///< the strategy line
  std::vector<std::string> tracks;  ///< names, by track index
  std::vector<TraceSpan> spans;     ///< by track, then by start
  double iteration_time_s = 0;
  int64_t microbatches = 0, slices = 0;  ///< micro-batches, and the blocks they are drawn as
};

/// The timeline of `e`, the estimate of `s` in `c`.
IterationTrace BuildIterationTrace(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e);

/// Chrome trace event JSON: one thread per track (times in microseconds).
std::string TraceJson(const IterationTrace& t);

/// The timeline drawn as PNG bytes. Throws Error("--trace-png") if Cairo fails.
std::string TracePng(const IterationTrace& t);

}  // namespace railsim::report
