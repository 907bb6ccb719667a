#include "railsim/report/sweep_report.h"

#include <cmath>

#include <fmt/format.h>

#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"

namespace railsim::report {
namespace {

Json ValueJson(const spec::SweepValue& v) {
  switch (v.kind) {
    case spec::SweepValue::Kind::kInt:
      return v.int_value;
    case spec::SweepValue::Kind::kNumber:
      return v.number;
    case spec::SweepValue::Kind::kString:
      return v.text;
    case spec::SweepValue::Kind::kBool:
      return v.flag;
  }
  return nullptr;
}

// Whole numbers (counts, bytes, dollars that happen to be whole) print as
// integers, the rest in the shortest form that reads back exactly.
Json NumberJson(double x) {
  if (std::floor(x) == x && std::fabs(x) < 9e15) return int64_t(x);
  return x;
}

std::string ValueText(const spec::SweepValue& v) {
  switch (v.kind) {
    case spec::SweepValue::Kind::kInt:
      return std::to_string(v.int_value);
    case spec::SweepValue::Kind::kNumber:
      return CsvNumber(v.number);
    case spec::SweepValue::Kind::kString:
      return v.text;
    case spec::SweepValue::Kind::kBool:
      return v.flag ? "true" : "false";
  }
  return "";
}

// The parameters every row of `config` carries, in row order.
std::vector<std::string> ParamColumns(const spec::SweepConfig& config) {
  std::vector<std::string> columns;
  for (const spec::SweepParam& p : config.Point(0)) columns.push_back(p.key);
  return columns;
}

std::vector<std::string> Header(const spec::SweepConfig& config) {
  std::vector<std::string> header = {"index", "points"};
  for (const std::string& key : ParamColumns(config)) header.push_back(key);
  for (const std::string& key : sweep::SweepResultKeys(config.study)) header.push_back(key);
  header.push_back("error");
  return header;
}

}  // namespace

std::string SweepRowJson(const sweep::SweepRow& row, const spec::SweepConfig& config) {
  Json j;
  j["index"] = row.index;
  j["points"] = config.points;
  Json point = Json::object();
  for (const spec::SweepParam& p : row.point) point[p.key] = ValueJson(p.value);
  j["point"] = point;
  if (!row.error.empty()) {
    j["error"] = row.error;
  } else {
    Json results = Json::object();
    const std::vector<std::string> keys = sweep::SweepResultKeys(config.study);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!std::isnan(row.results[i])) results[keys[i]] = NumberJson(row.results[i]);  // NaN: not computed
    }
    j["results"] = results;
  }
  return j.dump() + "\n";
}

std::string SweepCsvHeader(const spec::SweepConfig& config) { return CsvTable(Header(config)).Render(); }

std::string SweepRowCsv(const sweep::SweepRow& row, const spec::SweepConfig& config) {
  std::vector<std::string> cells = {std::to_string(row.index), std::to_string(config.points)};
  for (const spec::SweepParam& p : row.point) cells.push_back(ValueText(p.value));
  const size_t results = sweep::SweepResultKeys(config.study).size();
  for (size_t i = 0; i < results; ++i) {
    cells.push_back(row.error.empty() && !std::isnan(row.results[i]) ? CsvNumber(row.results[i]) : "");
  }
  cells.push_back(row.error);
  CsvTable table(Header(config));
  table.AddRow(std::move(cells));
  const std::string text = table.Render();
  return text.substr(text.find('\n') + 1);
}

}  // namespace railsim::report
