// Reader of measured training step times (`railsim calibrate --steps`): a
// CSV whose columns are named after `railsim estimate`'s flags, one measured
// run per row. What calibrate fits the system's compute parameters to
// (calibrate/calibrate.h).
//
// Columns (header row required, any order, `#` lines are comments):
//   required: model (preset or JSON file; a relative path is read from the
//             CSV's directory), gpus, global-batch-size, tp, pp,
//             micro-batch-size, step_time_s (measured seconds per iteration)
//   optional: id, dp (default gpus / (tp x pp x cp)), cp, ep, vp, recompute,
//             attention, precision, network, sequence-parallel,
//             distributed-optimizer, no-dp-overlap, grad-reduce-in-bf16,
//             tp-comm-overlap, no-overlap-p2p-communication, moe-alltoall,
//             moe-imbalance, moe-max-domains, moe-overlap
// Values are spelled as the flags take them; switches are true/false (or
// 1/0, empty = false). Each row's strategy is validated against its model as
// estimate validates it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/comm/collective.h"
#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"

namespace railsim::calibrate {

/// One measured training run.
struct StepRun {
  std::string file;
  int line = 0;             ///< 1-based line in its file
  std::string id;           ///< the id column, or "FILE:LINE"
  std::string model_name;   ///< as the model column gives it
  spec::ModelSpec model;
  int64_t gpus = 0;
  spec::Strategy strategy;
  comm::NetworkKind network = comm::NetworkKind::kRailOptimized;
  double step_time_s = 0;
};

/// Parses the CSV. Model files named by a relative path are read from
/// `model_dir` (empty: the working directory). Throws Error("FILE:LINE", ...)
/// naming the column for a bad header, cell, model or strategy, and
/// Error("FILE", ...) when there is no row.
std::vector<StepRun> ParseStepsCsv(std::string_view text, const std::string& file, const std::string& model_dir);

/// Reads and parses `path`. Throws Error naming `flag` when it cannot be read.
std::vector<StepRun> ReadSteps(const std::string& path, const std::string& flag);

}  // namespace railsim::calibrate
