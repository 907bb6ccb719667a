// CsvTable: comma-separated output for commands whose rows repeat (`cost`,
// `search`, `presets`, `--format csv`), quoting fields as RFC 4180 asks.
#pragma once

#include <string>
#include <vector>

namespace railsim::report {

class CsvTable {
 public:
  explicit CsvTable(std::vector<std::string> header);
  /// Requires one cell per header column.
  void AddRow(std::vector<std::string> cells);
  /// Header line, then one line per row, each ending in "\n".
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

/// A number in the shortest form that reads back exactly ("0.1", "1536");
/// an empty cell for NaN or infinity (undefined: nothing to average).
std::string CsvNumber(double value);

}  // namespace railsim::report
