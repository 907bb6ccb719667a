// How `railsim calibrate` prints a calibration (calibrate/calibrate.h): the
// fitted parameters with their provenance, predicted against measured for
// every row, the errors and the sentence on how far to trust the fit.
#pragma once

#include <string>

#include "railsim/calibrate/calibrate.h"

namespace railsim::report {

/// The terminal form.
std::string CalibrateTable(const calibrate::CalibrationResult& r);

/// One JSON document: "system" (the calibrated system file's content),
/// "parameters", "rows", "errors", "holdout", "seed", "notes", "trust".
std::string CalibrateJson(const calibrate::CalibrationResult& r);

}  // namespace railsim::report
