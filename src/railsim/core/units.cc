#include "railsim/core/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "railsim/core/error.h"

namespace railsim::units {
namespace {

struct Suffix {
  std::string text;
  double multiplier;
};

struct Prefix {
  const char* text;
  double multiplier;
};

// Decimal prefixes; both 'k' and 'K' mean 1e3 because both are common in
// vendor data sheets.
constexpr std::array<Prefix, 7> kDecimal = {{{"", 1.0},
                                             {"k", 1e3},
                                             {"K", 1e3},
                                             {"M", 1e6},
                                             {"G", 1e9},
                                             {"T", 1e12},
                                             {"P", 1e15}}};
constexpr std::array<Prefix, 5> kBinary = {{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0}}};

std::vector<Suffix> BandwidthSuffixes() {
  std::vector<Suffix> s;
  for (const Prefix& p : kDecimal) {
    s.push_back({std::string(p.text) + "bps", p.multiplier / 8});
    s.push_back({std::string(p.text) + "b/s", p.multiplier / 8});
    s.push_back({std::string(p.text) + "Bps", p.multiplier});
    s.push_back({std::string(p.text) + "B/s", p.multiplier});
  }
  for (const Prefix& p : kBinary) {
    s.push_back({std::string(p.text) + "B/s", p.multiplier});
    s.push_back({std::string(p.text) + "Bps", p.multiplier});
  }
  return s;
}

std::vector<Suffix> ByteSuffixes() {
  std::vector<Suffix> s;
  for (const Prefix& p : kDecimal) s.push_back({std::string(p.text) + "B", p.multiplier});
  for (const Prefix& p : kBinary) s.push_back({std::string(p.text) + "B", p.multiplier});
  return s;
}

std::vector<Suffix> FlopSuffixes() {
  std::vector<Suffix> s;
  for (const Prefix& p : kDecimal) {
    s.push_back({std::string(p.text) + "FLOPS", p.multiplier});
    s.push_back({std::string(p.text) + "FLOP/s", p.multiplier});
  }
  s.push_back({"EFLOPS", 1e18});
  s.push_back({"EFLOP/s", 1e18});
  return s;
}

std::vector<Suffix> DurationSuffixes() {
  return {{"s", 1.0},      {"ms", 1e-3},     {"us", 1e-6}, {"\xC2\xB5s", 1e-6},
          {"ns", 1e-9},     {"min", 60.0},    {"h", 3600.0}, {"d", 86400.0}};
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

double Parse(std::string_view text, const std::vector<Suffix>& suffixes, const std::string& where,
             const char* expected) {
  std::string_view trimmed = Trim(text);
  const char* begin = trimmed.data();
  const char* end = trimmed.data() + trimmed.size();
  if (begin != end && *begin == '+') ++begin;  // from_chars rejects a leading '+'
  double value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range) {
    throw Error(where, fmt::format("expected a finite number, got {}", Quoted(text)));
  }
  if (ec != std::errc() || ptr == begin) {
    throw Error(where, fmt::format("expected {}, got {}", expected, Quoted(text)));
  }
  if (!std::isfinite(value)) {
    throw Error(where, fmt::format("expected a finite number, got {}", Quoted(text)));
  }
  std::string_view suffix = Trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  if (suffix.empty()) return value;
  for (const Suffix& s : suffixes) {
    if (suffix == s.text) return value * s.multiplier;
  }
  throw Error(where, fmt::format("expected {}, got {} (unknown unit {})", expected, Quoted(text),
                                 Quoted(suffix)));
}

// Prints `value / multiplier` with the largest prefix that keeps it >= 1.
std::string FormatScaled(double value, const std::vector<Prefix>& prefixes, const char* unit) {
  const Prefix* best = &prefixes.front();
  for (const Prefix& p : prefixes) {
    if (std::fabs(value) >= p.multiplier) best = &p;
  }
  return fmt::format("{:.15g}{}{}", value / best->multiplier, best->text, unit);
}

const std::vector<Prefix> kFormatDecimal = {
    {"", 1.0}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}};

}  // namespace

double ParseBandwidth(std::string_view text, const std::string& where) {
  static const std::vector<Suffix> kSuffixes = BandwidthSuffixes();
  return Parse(text, kSuffixes, where, "a bandwidth such as \"400Gbps\" or \"50GB/s\"");
}

double ParseBytes(std::string_view text, const std::string& where) {
  static const std::vector<Suffix> kSuffixes = ByteSuffixes();
  return Parse(text, kSuffixes, where, "a size such as \"80GiB\" or \"1MiB\"");
}

double ParseFlopRate(std::string_view text, const std::string& where) {
  static const std::vector<Suffix> kSuffixes = FlopSuffixes();
  return Parse(text, kSuffixes, where, "a FLOP rate such as \"989TFLOPS\"");
}

double ParseDuration(std::string_view text, const std::string& where) {
  static const std::vector<Suffix> kSuffixes = DurationSuffixes();
  return Parse(text, kSuffixes, where, "a duration such as \"5us\", \"1.5ms\" or \"30min\"");
}

double ParseNumber(std::string_view text, const std::string& where) {
  static const std::vector<Suffix> kNone;
  return Parse(text, kNone, where, "a number");
}

std::string FormatBitRate(double bytes_per_s) {
  return FormatScaled(bytes_per_s * 8, kFormatDecimal, "bps");
}

std::string FormatByteRate(double bytes_per_s) {
  return FormatScaled(bytes_per_s, kFormatDecimal, "B/s");
}

std::string FormatBytes(double bytes) {
  // The largest prefix, binary or decimal, that gives a whole number (80GiB,
  // 96GB), so that presets written in either style print back unchanged.
  const Prefix* best = nullptr;
  auto consider = [&](const Prefix& p) {
    double scaled = bytes / p.multiplier;
    if (std::fabs(bytes) >= p.multiplier && scaled == std::floor(scaled) &&
        (!best || p.multiplier >= best->multiplier)) {
      best = &p;
    }
  };
  for (const Prefix& p : kFormatDecimal) consider(p);
  for (const Prefix& p : kBinary) consider(p);
  if (!best) return FormatScaled(bytes, kFormatDecimal, "B");
  return fmt::format("{:.15g}{}B", bytes / best->multiplier, best->text);
}

std::string FormatFlopRate(double flop_per_s) {
  return FormatScaled(flop_per_s, kFormatDecimal, "FLOPS");
}

std::string FormatDuration(double seconds) {
  static const std::vector<Prefix> kTime = {{"n", 1e-9}, {"u", 1e-6}, {"m", 1e-3}, {"", 1.0}};
  if (seconds == 0) return "0s";
  return FormatScaled(seconds, kTime, "s");
}

std::string Grouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  if (value < 0) out.insert(out.begin(), '-');
  return out;
}

}  // namespace railsim::units
