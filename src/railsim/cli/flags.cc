#include "railsim/cli/flags.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <thread>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/spec/strategy.h"

namespace railsim::cli {
int64_t ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max) {
  std::string expected = max == INT64_MAX ? fmt::format("an integer >= {}", min)
                                          : fmt::format("an integer in [{}, {}]", min, max);
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) {
    throw Error(flag, fmt::format("expected {}, got {} (out of range)", expected, Quoted(text)));
  }
  if (ec != std::errc() || ptr != end || text.empty()) {
    throw Error(flag, fmt::format("expected {}, got {}", expected, Quoted(text)));
  }
  if (value < min || value > max) throw Error(flag, fmt::format("expected {}, got {}", expected, value));
  return value;
}

double ParseNumberFlag(const std::string& flag, const std::string& text, double min, double max) {
  double value = units::ParseNumber(text, flag);
  if (!(value >= min && value <= max)) {
    throw Error(flag, fmt::format("expected a number in [{}, {}], got {}", min, max, Quoted(text)));
  }
  return value;
}

namespace {

// A flag's quantity must carry its unit: a bare "300" would silently mean
// 300 B/s (or 300 bytes), which no one means.
void RequireUnit(const std::string& flag, const std::string& text, const char* examples) {
  const bool has_letter = std::any_of(text.begin(), text.end(), [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) && c != 'e' && c != 'E';
  });
  if (!has_letter) {
    throw Error(flag, fmt::format("expected a value with its unit, such as {}, got {}", examples, Quoted(text)));
  }
}

}  // namespace

double ParseBytesFlag(const std::string& flag, const std::string& text, double max_bytes) {
  RequireUnit(flag, text, "64KiB, 1MB or 512B");
  double value = units::ParseBytes(text, flag);
  if (!(value >= 1) || value > max_bytes) {
    throw Error(flag, fmt::format("expected a size in [1B, {}], got {}", units::FormatBytes(max_bytes), Quoted(text)));
  }
  return value;
}

double ParseBandwidthFlag(const std::string& flag, const std::string& text) {
  RequireUnit(flag, text, "400Gbps or 50GB/s");
  double value = units::ParseBandwidth(text, flag);
  // 1 kb/s to 8 Pb/s: anything outside is a typo, and would make times infinite.
  if (!(value >= 125) || value > 1e15) {
    throw Error(flag, fmt::format("expected a positive bandwidth such as 400Gbps (at most 8Pbps), got {}",
                                  Quoted(text)));
  }
  return value;
}

std::string ParseChoiceFlag(const std::string& flag, const std::string& text,
                            const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (text == a) return text;
  }
  throw Error(flag, fmt::format("expected one of {}, got {}{}", fmt::join(allowed, ", "), Quoted(text),
                                DidYouMean(text, allowed)));
}

Format ParseFormatFlag(const std::string& text, bool csv_allowed) {
  std::vector<std::string> allowed = {"table", "json"};
  if (csv_allowed) allowed.push_back("csv");
  std::string choice = ParseChoiceFlag("--format", text, allowed);
  if (choice == "json") return Format::kJson;
  if (choice == "csv") return Format::kCsv;
  return Format::kTable;
}

int DefaultThreads() { return int(std::max(1u, std::thread::hardware_concurrency())); }

namespace {
bool g_quiet = false;
}  // namespace

void SetQuiet(bool quiet) { g_quiet = quiet; }

bool ProgressAllowed() { return !g_quiet && isatty(STDERR_FILENO) != 0; }

std::function<void(double)> ProgressLine(std::string label, std::string what, bool* shown, const std::string* step) {
  if (!ProgressAllowed()) return {};
  auto start = std::chrono::steady_clock::now();
  return [start, shown, step, last = -1.0, width = size_t{0}, label = std::move(label),
          what = std::move(what)](double fraction) mutable {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Nothing for short work; then at most ten lines a second, and the end.
    if (elapsed < 1.0 || (elapsed - last < 0.1 && fraction < 1)) return;
    last = elapsed;
    *shown = true;
    std::string line = fmt::format("{}: {:.0f}%{}{} done, {:.1f} s", label, 100 * fraction, what.empty() ? "" : " ",
                                   what, elapsed);
    if (step && !step->empty()) line += " (" + *step + ")";
    // Blank out what a longer previous line left behind.
    const size_t length = line.size();
    if (line.size() < width) line.append(width - line.size(), ' ');
    width = length;
    PrintStderr("\r" + line);
  };
}

void PrintStderr(const std::string& text) noexcept {
  (void)std::fwrite(text.data(), 1, text.size(), stderr);
  (void)std::fflush(stderr);
}

void PrintStdout(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    throw Error("stdout", "write failed");
  }
}

int64_t ParseDpFlag(const std::string& text, int tp, int pp, int cp, int64_t gpus) {
  if (!text.empty()) return ParseIntFlag("--dp", text, 1, spec::kMaxModelGpus);
  int64_t others = int64_t{tp} * pp * cp;
  if (others > gpus || gpus % others != 0) {
    throw Error("--dp", fmt::format("tp x pp x cp = {} x {} x {} = {} does not divide --gpus {}", tp, pp, cp, others,
                                    gpus));
  }
  return gpus / others;
}

}  // namespace railsim::cli
