#include "railsim/report/sweep_rows.h"

#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/report/json_objects.h"

namespace railsim::report {
namespace {

// A decimal integer filling `text` (a sign allowed, so that a negative index
// is named as one), or nullopt.
std::optional<int64_t> WholeInt(std::string_view text) {
  int64_t value = 0;
  if (text.empty() || text.size() > 19) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The fields of one CSV line (RFC 4180 quoting, as CsvTable writes), without
// the quotes undone: only the first two are read, the rest counted. nullopt
// for a quote left open.
std::optional<std::vector<std::string_view>> CsvFields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;  // "" inside quotes toggles twice
    if (line[i] == ',' && !quoted) {
      fields.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  if (quoted) return std::nullopt;
  fields.push_back(line.substr(start));
  return fields;
}

// A row's index and point count from a JSON Lines record: an object with
// integer "index" and "points", a "point" object and "results" or "error".
std::optional<std::pair<int64_t, int64_t>> JsonRowId(std::string_view line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  auto integer = [&j](const char* key) -> std::optional<int64_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return it->get<int64_t>();
  };
  const std::optional<int64_t> index = integer("index"), points = integer("points");
  auto point = j.find("point"), results = j.find("results"), error = j.find("error");
  const bool outcome = (results != j.end() && results->is_object()) || (error != j.end() && error->is_string());
  if (!index || !points || point == j.end() || !point->is_object() || !outcome) return std::nullopt;
  return std::pair{*index, *points};
}

}  // namespace

void SweepRowReader::Read(const std::string& path, std::string_view text) {
  int64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    ++number;
    const std::string at = fmt::format("{}:{}", path, number);
    const size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      notes_.push_back(fmt::format("{}: the last line has no newline (a sweep stopped mid-write?): dropped, {} "
                                   "byte{}", at, text.size() - start, text.size() - start == 1 ? "" : "s"));
      return;
    }
    ReadLine(at, text.substr(start, end - start + 1));
    start = end + 1;
  }
}

void SweepRowReader::SetFormat(Format format, const std::string& at) {
  if (format_ == Format::kNone) format_ = format;
  if (format_ == format) return;
  throw Error(where_, fmt::format("{}: a {} among {} rows; the files of one sweep hold one format", at,
                                  format == Format::kCsv ? "CSV line" : "JSON Lines row",
                                  format_ == Format::kCsv ? "CSV" : "JSON Lines"));
}

void SweepRowReader::ReadLine(const std::string& at, std::string_view line) {
  const std::string_view content = line.substr(0, line.size() - 1);  // without "\n"
  if (content.starts_with("{")) {
    if (std::optional<std::pair<int64_t, int64_t>> id = JsonRowId(content)) {
      SetFormat(Format::kJsonLines, at);
      AddRow(at, id->first, id->second, line);
      return;
    }
  } else if (content.starts_with("index,points,")) {
    SetFormat(Format::kCsv, at);
    if (header_.empty()) {
      header_ = std::string(line);
      header_at_ = at;
    } else if (header_ != line) {
      throw Error(where_, fmt::format("{}: another CSV header than the one at {} (rows of another sweep)", at,
                                      header_at_));
    }
    return;
  } else if (std::optional<std::vector<std::string_view>> fields = CsvFields(content);
             fields && fields->size() >= 3) {
    const std::optional<int64_t> index = WholeInt((*fields)[0]), points = WholeInt((*fields)[1]);
    if (index && points) {
      SetFormat(Format::kCsv, at);
      if (!header_.empty()) {
        const size_t columns = CsvFields(std::string_view(header_).substr(0, header_.size() - 1))->size();
        if (fields->size() != columns) {
          throw Error(where_, fmt::format("{}: a CSV row of {} fields; the header at {} has {}", at, fields->size(),
                                          header_at_, columns));
        }
      }
      AddRow(at, *index, *points, line);
      return;
    }
  }
  throw Error(where_, fmt::format("{}: expected a row of railsim sweep (JSON Lines or CSV) or its CSV header, "
                                  "got {}", at, Quoted(content)));
}

void SweepRowReader::AddRow(const std::string& at, int64_t index, int64_t points, std::string_view line) {
  if (points < 1) throw Error(where_, fmt::format("{}: expected a point count of 1 or more, got {}", at, points));
  if (points_ < 0) {
    points_ = points;
    points_at_ = at;
  } else if (points != points_) {
    throw Error(where_, fmt::format("{}: a row of a sweep of {} points; the row at {} is of {} points", at, points,
                                    points_at_, points_));
  }
  if (index < 0 || index >= points) {
    throw Error(where_, fmt::format("{}: point index {} is outside 0 to {} (the sweep has {} points)", at, index,
                                    points - 1, points));
  }
  auto [it, first] = seen_.emplace(index, Seen{rows_.size(), at});
  if (first) {
    rows_.push_back({index, std::string(line)});
    return;
  }
  if (rows_[it->second.row].line != line) {
    throw Error(where_, fmt::format("{}: point {} differs from its row at {}; keep one of them", at, index,
                                    it->second.at));
  }
  notes_.push_back(fmt::format("{}: point {} repeats the row at {}: dropped", at, index, it->second.at));
}

}  // namespace railsim::report
