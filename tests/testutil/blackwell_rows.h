// Test helper: the rows of tests/data/blackwell-megatron-bridge.csv (NVIDIA's
// Megatron-Bridge performance tables) as railsim expresses them, or why not;
// and which of them the Blackwell presets are fitted on.
#pragma once

#include <string>
#include <vector>

#include "railsim/perf/estimate.h"
#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"

namespace railsim::testutil {

/// The container the Blackwell presets stand for: the newest with dense and
/// MoE rows on all four Blackwell systems. Rows of other containers are
/// the same configurations under other software: their error is the
/// software's drift as much as the model's.
constexpr const char* kBlackwellFitContainer = "26.04.01";

struct BlackwellRow {
  std::string id;       ///< "mb-26.04.01-LLAMA3_70B-GB300-64-fp4"
  std::string version;  ///< the container
  std::string system;   ///< railsim's preset
  int line = 0;         ///< in the CSV
  double step_time_s = 0;  ///< GBS x sequence / (tokens/s/GPU x GPUs)
  std::string why_not;  ///< empty when expressed
  spec::ModelSpec model;
  spec::SystemSpec system_spec;  ///< the preset, its HB domain the job's rack share (NVL72: the GPUs used)
  spec::Strategy strategy;
  int64_t gpus = 0;
};

/// Every row of the file; a row with two figures (FP8-CS and, in brackets,
/// FP8-MX) becomes two.
std::vector<BlackwellRow> ReadBlackwellRows();

/// Rows of the Blackwell presets' fit: the kBlackwellFitContainer rows on
/// Blackwell systems, and the 8-GPU Llama 3 8B rows (25.11, the only
/// container with them), which run inside one NVLink domain and so tell the
/// chip from the network.
bool IsBlackwellFitRow(const BlackwellRow& r);

/// Predicted step time with the row's system replaced by `system` (same HB
/// domain as the row's).
double PredictBlackwellRow(const BlackwellRow& r, const spec::SystemSpec& system);

}  // namespace railsim::testutil
