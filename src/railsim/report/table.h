// TextTable: the aligned plain-text tables railsim prints by default, and the
// number formats they use ("32,768", "$152,829,952", "4.55 MW", "37.4%").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "railsim/core/units.h"

namespace railsim::report {

class TextTable {
 public:
  enum class Align { kLeft, kRight };

  /// Adds a column; numbers are usually right-aligned.
  void AddColumn(std::string header, Align align = Align::kRight);
  /// Adds a row; requires one cell per column.
  void AddRow(std::vector<std::string> cells);
  /// Renders with two spaces between columns and a rule under the header.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Breaks `text` at spaces into lines of at most `width` characters (longer
/// words stay whole), each but the first starting with `indent`; every line
/// ends in "\n".
std::string Wrap(const std::string& text, size_t width, const std::string& indent);

/// "32,768" (core/units.h).
using units::Grouped;
/// 152829952.0 -> "$152,829,952", -4263936 -> "-$4,263,936" (rounded to the dollar).
std::string Dollars(double usd);
/// 30000 -> "2^4 x 3 x 5^4": why a cluster size has few layouts.
std::string PrimeFactors(int64_t n);
/// Watts with a prefix: 4548608 -> "4.55 MW", 950 -> "950 W".
std::string Watts(double w);
/// 0.3829 -> "38.3%".
std::string Percent(double fraction, int decimals = 1);
/// Seconds with a fitting unit: "1.23 s", "45.6 ms", "7.8 us".
std::string Seconds(double s);
/// Bytes with a binary prefix: "61.2 GiB".
std::string BinaryBytes(double bytes);
/// Bytes with a decimal prefix, three significant digits: "3.57 PB", "10 kB".
std::string DecimalBytes(double bytes);

}  // namespace railsim::report
