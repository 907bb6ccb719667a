#include "railsim/report/csv.h"

#include <cassert>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace railsim::report {
namespace {

std::string Field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Line(const std::vector<std::string>& cells) {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += ',';
    line += Field(cells[i]);
  }
  return line + "\n";
}

}  // namespace

CsvTable::CsvTable(std::vector<std::string> header) : header_(std::move(header)) {
  for (size_t i = 0; i < header_.size(); ++i) column_[header_[i]] = i;
}

std::string& CsvTable::NamedRow::operator[](const std::string& column) {
  const auto at = table_->column_.find(column);
  if (at == table_->column_.end()) throw std::logic_error("CSV table has no column '" + column + "'");
  return cells_[at->second];
}

void CsvTable::AddRow(std::vector<std::string> cells) {
  assert(cells.size() == header_.size());
  rows_.push_back(std::move(cells));
}

std::string CsvTable::Render() const {
  std::string out = Line(header_);
  for (const auto& row : rows_) out += Line(row);
  return out;
}

std::string CsvNumber(double value) { return std::isfinite(value) ? fmt::format("{}", value) : ""; }

}  // namespace railsim::report
