// The fit behind Calibrate (calibrate.h): the system parameters it may
// move with their bounds (parameter_fit.cc's kParams), the least-squares fit
// of one kind of rows, and why each parameter ends with its value
// (ParamStatus), with the notes that name those not simply fitted.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "railsim/calibrate/calibrate.h"
#include "railsim/spec/system.h"

namespace railsim::calibrate {

/// The measured rows of one kind, and how to predict each on a system.
struct RowSet {
  std::vector<CalibrationRow*> rows;
  std::vector<std::function<double(const spec::SystemSpec&)>> predict;
  std::map<const CalibrationRow*, int64_t> nodes;  ///< a collective row's node count
};

/// The parameters that are not simply fitted, by status, as the notes name
/// them: "nccl.p2p_peer_latency_us (8 nodes)".
using NamedByStatus = std::map<ParamStatus, std::vector<std::string>>;

/// Fits the parameters of `kind` on the fitted rows of `set`, writing the
/// values into `system`, their records into `out` and, when `set` has rows,
/// those not fitted into `named`.
void FitGroup(RowKind kind, const RowSet& set, const CalibrationOptions& o, spec::SystemSpec* system,
              std::vector<FittedParameter>* out, NamedByStatus* named);

/// One note per status that needs saying, naming its parameters.
void AddParameterNotes(const NamedByStatus& named, std::vector<std::string>* notes);

/// The kind of rows the parameter `key` (FittedParameter::key) is fitted to,
/// or nullopt for a key calibrate does not fit.
std::optional<RowKind> ParameterKind(const std::string& key);

}  // namespace railsim::calibrate
