// Test helper: the rows of tests/data/step-times-public.csv, and each row as
// railsim expresses it (model, system, strategy), or why it cannot.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "railsim/spec/model.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"

namespace railsim::testutil {

/// The cells of one row, by the file's column names.
struct PublicRow {
  std::string id, gpu, gpus, stack, layers, hidden, heads, kv_groups, ffn, vocab, seq, mlp, moe;
  std::string tp, pp, cp, ep, vp, dp, micro_batch, global_batch, recompute, precision, overlap_flags;
  double step_time_s = 0;  ///< 0 when the row has none
  std::string notes;
};

std::vector<PublicRow> ReadPublicRows();

struct Expressed {
  std::string why_not;  ///< empty when the row is expressed
  /// The stack profile the row runs with: nemo (NeMo, Megatron-Bridge and
  /// dgxc-benchmarking recipes), megatron-core (Megatron-LM's functional
  /// tests), fsdp (llm-foundry, NeMo AutoModel).
  spec::Stack stack = spec::Stack::kMegatronCore;
  /// The run's own per-iteration cost (--iteration-overhead), when it pays
  /// one: Megatron-LM's functional tests, kFunctionalTestIterationOverheadS
  /// (and, with the same value, the llm-foundry and AutoModel benchmarks).
  std::optional<double> iteration_overhead_s;
  /// A Megatron/NeMo row (nemo or megatron-core): what the held-out check covers.
  bool megatron() const { return stack == spec::Stack::kNemo || stack == spec::Stack::kMegatronCore; }
  spec::ModelSpec model;
  spec::SystemSpec system;
  spec::Strategy strategy;
  int64_t gpus = 0;
};

/// Megatron-LM's functional tests' fixed cost per iteration (they log every
/// iteration with timers on): fitted on the two H100 rows IsFitRow names,
/// only this parameter free (H100RefitTest.StepTimeParameters prints it):
/// +3.0% and -2.6%. Production runs at scale pay none (the presets' 0).
constexpr double kFunctionalTestIterationOverheadS = 0.2271;

/// The row as a railsim estimate's inputs: its stack profile's defaults
/// (spec::ApplyStackDefaults), sequence parallelism where tp > 1 on
/// Megatron/NeMo rows (none on FSDP rows), and the distributed optimizer on
/// Megatron-LM's functional tests (their flags set it).
Expressed Express(const PublicRow& r);

/// The Megatron/NeMo rows the fixed costs were fitted on (with the H100
/// calibration rows); every other row is held out.
bool IsFitRow(const std::string& id);

/// What PublicStepTimesTest asserts on the held-out Megatron/NeMo rows: the
/// 5.1% reached (the target is 6%). What remains: the newer NeMo
/// containers of dgxc-benchmarking v25.04 run the calibration's layouts up
/// to 6% faster, the FP8 rows of NeMo 24.07 / Megatron-Bridge spread +/-11%,
/// and the GB200 functional tests take the H100 fit.
constexpr double kHeldOutBound = 0.052;

}  // namespace railsim::testutil
