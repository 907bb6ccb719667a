// Formatting the `railsim compare` study: one side-by-side table per HB
// domain size (rail-optimized, Rail-only, ideal), the verdict in sentences,
// or one JSON document.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "railsim/study/compare.h"

namespace railsim::report {

/// One HB domain size's designs side by side: sections ("network at radix
/// 64", "megatron-1t at global batch 256", ...) of labelled rows with one cell
/// per column; what the text table and the report's page both show.
struct SideBySideTable {
  struct Row {
    bool section = false;  ///< a heading; cells empty
    std::string label;
    std::array<std::string, 3> cells;
  };
  std::string title;
  std::array<std::string, 3> columns = {"rail-optimized", "Rail-only", "ideal (K = N)"};
  std::vector<Row> rows;
  /// Each best strategy as the `railsim estimate` command that times it
  /// ("rail-optimized, gpt3-175b at batch 1,536: railsim estimate ..."): the
  /// rows show degrees and settings, these every flag the answer needs.
  std::vector<std::string> commands;
};

SideBySideTable CompareSideBySide(const study::CompareResult& result, int64_t k);

/// Every HB domain size's side-by-side table, notes and the verdict.
std::string CompareTable(const study::CompareResult& result);

/// The side-by-side tables as one CSV: hb_domain_size, section, row,
/// rail_optimized, rail_only, ideal (cells as the table prints them).
std::string CompareCsv(const study::CompareResult& result);

/// Every number of the comparison as plain numbers (`compare --format csv`),
/// one row per design and radix ("network"), per job and network
/// ("training", "moe" with its dispatch) and per all-to-all schedule
/// ("alltoall"); units in the column names, cells blank where they do not
/// apply.
std::string CompareNumbersCsv(const study::CompareResult& result);

/// {"scenario": name, "network": [{"gpus", "hb_domain_size", "radix",
/// "designs": [...]}, ...], "training": [...], "moe": {...}, "verdict": [...]}
std::string CompareJson(const study::CompareResult& result);

/// The verdict in plain sentences with their numbers: what Rail-only saves
/// per HB domain size, what it costs in iteration time, what the HB domain
/// buys against the ideal network, and where Rail-only is the wrong choice.
std::vector<std::string> CompareVerdict(const study::CompareResult& result);

}  // namespace railsim::report
