// Calibration: fit a system's parameters to measurements from the user's own
// cluster (`railsim calibrate`, docs/calibrate.md).
//
// The communication parameters (the NIC efficiency of rings, trees and
// all-to-all, NVLink and in-switch efficiency, the net plugin's latency and
// the all-to-all's per-peer cost of NCCL's model, the older model's NIC and
// NVLink latencies) are fitted to nccl-tests rows (calibrate/nccl_tests.h), each
// timed with comm::'s collective times on the fabrics
// perf::MakeClusterNetwork builds from the system; then the compute
// parameters (GEMM, FP8 GEMM and attention efficiency, the fixed costs per
// iteration and per pipeline chunk, the TP-overlap cost) to measured step
// times (calibrate/step_times.h), each timed with perf::EstimateIteration on the
// system with the fitted communication. The fit goes through those public
// functions only, so it follows whatever model they implement.
//
// The fit: least squares on log(predicted / measured), a bounded
// Levenberg-Marquardt from the base system's values and from the middle of
// the bounds (the better end point kept), polished by coordinate sweeps,
// with a fixed iteration budget; when it does not beat the base values on
// the fitted rows, the base values stay. A parameter the fitted rows cannot
// move (less than 0.1% change in every prediction across its whole range,
// or across a fiftieth of it around the fitted value and from there to the
// base's, which it then takes), or can move only as
// they move one before it in the list (calibrate.cc's kParams), is left at
// its base value and reported as not fitted. So is one the rows see only
// weakly (a 10% change of it moves no row by more than 1%, between its
// fitted and base values) when the base's value fits the rows as well,
// within their noise (an F-test; calibrate.cc's kSignificance), the others
// refitted; the least significant goes first, one at a time. Such a
// parameter would otherwise soak up what the model lacks (a fixed cost per
// call, noise) and end far from both the base and the truth, where other
// node counts or sizes see it fully. A parameter whose cost grows
// with the node count (per network step of a ring or tree, per remote peer
// of an all-to-all) is fitted only when the rows that depend on it come
// from two or more node counts: rows of one count cannot tell such a cost
// from a fixed one, and a fit that took the fixed cost for it would carry
// it up with the node count. It keeps the base's value, unless the other
// parameters' fit still misses those rows by more than 10% (a base from
// another fabric); then it is fitted, said to hold near that count only.
// Each parameter says why it has its value
// (ParamStatus), and the notes name the ones at a bound or left at the base.
// Fitted values are rounded to four significant digits. With a held-out
// share, that share of each kind of row is
// chosen by a seeded shuffle and only reported. Deterministic: the same
// inputs give the same result, bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "railsim/spec/system.h"
#include "railsim/calibrate/nccl_tests.h"
#include "railsim/calibrate/step_times.h"

namespace railsim::calibrate {

/// Seed of the held-out split (printed with every result).
constexpr uint64_t kCalibrationSeed = 23;
/// Largest --holdout: at least a tenth of the rows must stay in the fit.
constexpr double kMaxHoldout = 0.9;

struct CalibrationOptions {
  double holdout = 0;  ///< share of rows kept out of the fit, in [0, kMaxHoldout]
  uint64_t seed = kCalibrationSeed;
  /// Keys (FittedParameter::key, e.g. "gpu.flash_attention_efficiency") held
  /// at the base system's value: known from elsewhere (kernel benchmarks),
  /// or ones the rows trade against another and cannot pin down. Requires
  /// known keys.
  std::vector<std::string> keep;
  /// Fit the parameters whose cost grows with the node count even when
  /// their rows come from one node count: how aws-p5's latencies were
  /// fitted (on its 8-node rows), for reproducing such a fit; the result
  /// holds near that node count only.
  bool fit_scale_at_one_node_count = false;
};

/// Why a parameter has its value after the fit.
enum class ParamStatus {
  kFitted,          ///< fitted to the rows, away from its bounds
  kAtBound,         ///< free in the fit, and ends at (within kBoundShare of) a bound
  kNotConstrained,  ///< no fitted row's prediction moves with it (near its value)
  kOneNodeCount,    ///< its cost grows with the node count; its rows come from one
  kFittedAtOneNodeCount,  ///< as kOneNodeCount, but the base's value missed the rows: fitted
  kTied,            ///< the rows see it only as they see an earlier parameter
  kBaseFitsBest,    ///< free, but the fit found nothing better than the base values
  kWithinNoise,     ///< seen only weakly, and the base's value fits as well, within the noise
  kKept,            ///< CalibrationOptions::keep
};

/// The status as calibrate prints it: "fitted", "at bound", "not constrained
/// by the data", "left at the base: one node count in the data", "left at
/// the base: seen only with another", "left at the base: fits best", "left at
/// the base: within the noise", "kept", "fitted at one node count".
const char* ParamStatusName(ParamStatus s);

/// A value within this share of its range from a bound is at that bound.
constexpr double kBoundShare = 1e-3;

/// One system parameter the fit may move.
struct FittedParameter {
  /// its JSON name: "nic_efficiency", "gpu.gemm_efficiency", "nccl.p2p_peer_latency_us"
  std::string key;
  bool seconds = false;  ///< a time, in seconds here (the system file may keep it in us)
  double before = 0, after = 0;
  double lo = 0, hi = 0;  ///< bounds of the fit
  bool fitted = false;    ///< status is kFitted or kFittedAtOneNodeCount (else `status` says why not)
  ParamStatus status = ParamStatus::kNotConstrained;
  bool at_bound = false;  ///< `after` within kBoundShare of a bound, whatever the status
  int rows = 0;           ///< fitted rows whose prediction depends on it
  std::string provenance; ///< where the value came from (also in the system's sources)
};

enum class RowKind { kCollective, kStep };

/// One measurement and what railsim predicts for it.
struct CalibrationRow {
  RowKind kind = RowKind::kCollective;
  std::string source;  ///< "FILE:LINE"
  std::string label;   ///< "all_reduce 64 GPUs 8 nodes 32MiB", or the step run's id
  bool held_out = false;
  double measured_s = 0;
  double before_s = 0;     ///< predicted with the base system
  double predicted_s = 0;  ///< predicted with the calibrated system
  double error() const { return predicted_s / measured_s - 1; }
};

/// Mean and worst absolute relative error of some rows.
struct ErrorSummary {
  int rows = 0;
  double mean_abs = 0, worst = 0;
};

struct CalibrationResult {
  spec::SystemSpec system;  ///< the base with fitted values and their sources
  std::vector<FittedParameter> parameters;
  std::vector<CalibrationRow> rows;  ///< collectives, then steps, in input order
  ErrorSummary comm_fit, comm_held_out, step_fit, step_held_out;
  double holdout = 0;
  uint64_t seed = 0;
  /// Rows left out and why, lines skipped, layout remarks; the parameters at
  /// a bound, not constrained by the rows or left at the base, and the
  /// constants the fit cannot move (NCCL's tables), each named once.
  std::vector<std::string> notes;
  /// A kind of rows no more numerous than the parameters fitted to them:
  /// such a fit can meet every row whatever the parameters' true values.
  std::vector<std::string> warnings;
  /// One sentence on how far to trust the fit; empty when there is a warning.
  std::string trust;
  int held_out_rows() const;
};

/// Fits `base` to `runs` and `steps`. Requires holdout in [0, kMaxHoldout]
/// (rounded to whole rows of each kind, always leaving one in the fit).
/// Throws Error("FILE:LINE", ...) for a row the base system cannot time (a
/// step's GPUs not a multiple of the HB domain, FP8 without an FP8 peak), and
/// Error("--nccl-tests", ...) when no row at all can be fitted.
CalibrationResult Calibrate(const spec::SystemSpec& base, const std::vector<NcclTestsRun>& runs,
                            const std::vector<StepRun>& steps, const CalibrationOptions& options);

/// The predicted time of one nccl-tests row on `system` (seconds), or a
/// negative number for a collective railsim has no model of (broadcast).
double PredictCollective(const spec::SystemSpec& system, const NcclTestsRun& run, const NcclTestsRow& row);

/// The predicted step time of one measured run on `system` (seconds).
double PredictStep(const spec::SystemSpec& system, const StepRun& step);

}  // namespace railsim::calibrate
