// Sweep rows as text: one JSON Lines record or one CSV line per point, as
// `railsim sweep` streams them (sweep_rows.h reads them back for --resume
// and --merge).
//
// A JSON row: {"index":3,"points":12,"point":{"gpus":256,"pp":16},
// "results":{"iteration_time_s":1.5,...}} or, for a point the study
// rejected, "error":"..." in place of "results". A CSV file has a header
// (index, points, the config's parameters, the study's results, error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "railsim/spec/sweep_config.h"
#include "railsim/sweep/sweep.h"

namespace railsim::report {

/// One JSON Lines record, ending in "\n". Numbers print in the shortest form
/// that reads back exactly, so equal rows are equal bytes.
std::string SweepRowJson(const sweep::SweepRow& row, const spec::SweepConfig& config);

/// The CSV header line for `config`'s rows, ending in "\n".
std::string SweepCsvHeader(const spec::SweepConfig& config);
/// One CSV line, ending in "\n".
std::string SweepRowCsv(const sweep::SweepRow& row, const spec::SweepConfig& config);

}  // namespace railsim::report
