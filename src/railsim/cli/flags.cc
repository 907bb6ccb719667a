#include "railsim/cli/flags.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <charconv>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/spec/strategy.h"

namespace railsim::cli {
Format ParseFormatFlag(const std::string& text, bool csv_allowed) {
  std::vector<std::string> allowed = {"table", "json"};
  if (csv_allowed) allowed.push_back("csv");
  std::string choice = ParseChoiceFlag("--format", text, allowed);
  if (choice == "json") return Format::kJson;
  if (choice == "csv") return Format::kCsv;
  return Format::kTable;
}

namespace {
bool g_quiet = false;
bool g_report_to_stderr = false;
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
  std::FILE* stream = g_report_to_stderr ? stderr : stdout;
  if (std::fwrite(text.data(), 1, text.size(), stream) != text.size() || std::fflush(stream) != 0) {
    throw Error(g_report_to_stderr ? "stderr" : "stdout", fmt::format("write failed: {}", std::strerror(errno)));
  }
}

void MoveReportToStderr() { g_report_to_stderr = true; }

}  // namespace railsim::cli
