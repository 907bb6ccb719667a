// Sweep rows as text: one JSON Lines record or one CSV line per point, as
// `railsim sweep` streams them, and the reading back that --resume and
// --merge need (a row's index and the sweep's point count).
//
// A JSON row: {"index":3,"points":12,"point":{"gpus":256,"pp":16},
// "results":{"iteration_time_s":1.5,...}} or, for a point the study
// rejected, "error":"..." in place of "results". A CSV file has a header
// (index, points, the config's parameters, the study's results, error).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/sweep_config.h"
#include "railsim/study/sweep.h"

namespace railsim::report {

/// One JSON Lines record, ending in "\n". Numbers print in the shortest form
/// that reads back exactly, so equal rows are equal bytes.
std::string SweepRowJson(const study::SweepRow& row, const spec::SweepConfig& config);

/// The CSV header line for `config`'s rows, ending in "\n".
std::string SweepCsvHeader(const spec::SweepConfig& config);
/// One CSV line, ending in "\n".
std::string SweepRowCsv(const study::SweepRow& row, const spec::SweepConfig& config);

/// A row's point index and the sweep's point count, read from the start of
/// a line SweepRowJson or SweepRowCsv wrote; nullopt for anything else (a
/// CSV header, a line cut short).
struct RowId {
  int64_t index = 0;
  int64_t points = 0;
};
std::optional<RowId> ReadRowId(std::string_view line);

}  // namespace railsim::report
