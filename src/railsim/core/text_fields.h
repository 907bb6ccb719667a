// Small pieces for reading line-oriented text files (CSV tables, tool logs):
// lines with their numbers, CSV cells, and numbers that must fill a whole
// field. They never throw: callers know the file and line, and say what was
// expected there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim {

/// `text` split at '\n' (a trailing '\r' dropped from each line). Line i of
/// the result is line i + 1 of the file. The views point into `text`, which
/// must outlive them.
std::vector<std::string_view> SplitLines(std::string_view text);

/// `text` without leading and trailing spaces and tabs (a view into it).
std::string_view Trim(std::string_view text);

/// The cells of one CSV line (RFC 4180: a cell may be "quoted", with ""
/// for a quote inside), each trimmed of surrounding spaces.
std::vector<std::string> SplitCsvLine(std::string_view line);

/// `text` split at runs of spaces and tabs (views into `text`).
std::vector<std::string_view> SplitWords(std::string_view text);

/// The finite number that is all of `text` ("1.5", "2e-3"); nullopt otherwise.
std::optional<double> ParseWholeDouble(std::string_view text);
/// The integer that is all of `text` ("-1", "4096"); nullopt otherwise.
std::optional<int64_t> ParseWholeInt(std::string_view text);

}  // namespace railsim
