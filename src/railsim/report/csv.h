// CsvTable: comma-separated output for commands whose rows repeat (`cost`,
// `search`, `presets`, `--format csv`), quoting fields as RFC 4180 asks.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace railsim::report {

class CsvTable {
 public:
  /// A row filled by column name; columns never set stay empty.
  class NamedRow {
   public:
    /// The cell of `column`; throws std::logic_error naming it when the
    /// table has no such column (a misspelt name fails its test at once).
    std::string& operator[](const std::string& column);

   private:
    friend class CsvTable;
    explicit NamedRow(const CsvTable* table) : table_(table), cells_(table->header_.size()) {}
    const CsvTable* table_;
    std::vector<std::string> cells_;
  };

  explicit CsvTable(std::vector<std::string> header);
  /// Requires one cell per header column.
  void AddRow(std::vector<std::string> cells);
  /// An empty row of this table's columns, for AddRow(NamedRow).
  NamedRow NewRow() const { return NamedRow(this); }
  void AddRow(NamedRow row) { AddRow(std::move(row.cells_)); }
  /// Header line, then one line per row, each ending in "\n".
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::map<std::string, size_t> column_;  ///< header name -> position
  std::vector<std::vector<std::string>> rows_;
};

/// A number in the shortest form that reads back exactly ("0.1", "1536");
/// an empty cell for NaN or infinity (undefined: nothing to average).
std::string CsvNumber(double value);

}  // namespace railsim::report
