#include "railsim/report/table.h"

#include <cassert>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace railsim::report {
namespace {

// Display width in terminal columns: counts UTF-8 lead bytes only.
size_t Width(const std::string& s) {
  size_t w = 0;
  for (unsigned char c : s) w += (c & 0xC0) != 0x80 ? 1 : 0;
  return w;
}

}  // namespace

void TextTable::AddColumn(std::string header, Align align) {
  headers_.push_back(std::move(header));
  aligns_.push_back(align);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  assert(cells.size() == headers_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) widths[c] = Width(headers_[c]);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], Width(row[c]));
  }
  auto render_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(widths[c] - Width(cells[c]), ' ');
      if (c > 0) line += "  ";
      line += aligns_[c] == Align::kRight ? pad + cells[c] : cells[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = render_row(headers_);
  size_t total = 0;
  for (size_t w : widths) total += w;
  total += headers_.empty() ? 0 : 2 * (headers_.size() - 1);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += render_row(row);
  return out;
}

std::string Wrap(const std::string& text, size_t width, const std::string& indent) {
  std::string out, line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    } else if (!line.empty() && line != indent) {
      line += ' ';
    }
    line += word;
  }
  return out + line + "\n";
}

std::string Dollars(double usd) {
  const int64_t rounded = static_cast<int64_t>(std::llround(usd));
  return (rounded < 0 ? "-$" : "$") + Grouped(rounded < 0 ? -rounded : rounded);
}

std::string PrimeFactors(int64_t n) {
  if (n < 2) return std::to_string(n);
  std::vector<std::string> parts;
  for (int64_t p = 2; p * p <= n; ++p) {
    int power = 0;
    while (n % p == 0) {
      n /= p;
      ++power;
    }
    if (power == 1) parts.push_back(std::to_string(p));
    if (power > 1) parts.push_back(fmt::format("{}^{}", p, power));
  }
  if (n > 1) parts.push_back(std::to_string(n));
  return fmt::format("{}", fmt::join(parts, " x "));
}

std::string Watts(double w) {
  if (std::fabs(w) >= 1e6) return fmt::format("{:.2f} MW", w / 1e6);
  if (std::fabs(w) >= 1e3) return fmt::format("{:.1f} kW", w / 1e3);
  return fmt::format("{:.0f} W", w);
}

std::string Percent(double fraction, int decimals) {
  return fmt::format("{:.{}f}%", fraction * 100, decimals);
}

std::string Seconds(double s) {
  if (s >= 1 || s == 0) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

std::string BinaryBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (std::fabs(bytes) >= 1024 && i < 5) {
    bytes /= 1024;
    ++i;
  }
  return i == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[i]);
}

std::string DecimalBytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  int i = 0;
  while (std::fabs(bytes) >= 1000 && i < 6) {
    bytes /= 1000;
    ++i;
  }
  if (i == 0) return fmt::format("{:.0f} B", bytes);
  const int decimals = std::fabs(bytes) < 10 ? 2 : std::fabs(bytes) < 100 ? 1 : 0;
  return fmt::format("{:.{}f} {}", bytes, decimals, units[i]);
}

}  // namespace railsim::report
