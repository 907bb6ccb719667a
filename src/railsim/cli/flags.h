// Parsing of flag values at the command-line edge. Every parser throws
// Error whose `where` is the flag ("--gpus") and whose message says what was
// expected and what was given.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace railsim::cli {

/// A decimal integer in [min, max] ("32768"; no sign games, no suffixes).
int64_t ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max);

/// A finite number in [min, max].
double ParseNumberFlag(const std::string& flag, const std::string& text, double min, double max);

/// A size with its unit ("64KiB", "1MB", "512B") in [1 byte, max_bytes].
double ParseBytesFlag(const std::string& flag, const std::string& text, double max_bytes);

/// A positive bandwidth with its unit, such as "400Gbps" or "50GB/s" (a bare
/// number is refused: it would mean bytes per second).
double ParseBandwidthFlag(const std::string& flag, const std::string& text);

/// One of `allowed` (with "did you mean").
std::string ParseChoiceFlag(const std::string& flag, const std::string& text,
                            const std::vector<std::string>& allowed);

/// Data-parallel degree: --dp when given, else gpus / (tp x pp x cp), which
/// must divide (Error("--dp") otherwise).
int64_t ParseDpFlag(const std::string& text, int tp, int pp, int cp, int64_t gpus);

/// Output formats a command can print.
enum class Format { kTable, kJson, kCsv };
/// Parses --format against the formats the command offers.
Format ParseFormatFlag(const std::string& text, bool csv_allowed);

/// Worker threads when the user gives none: every hardware thread, at least one.
int DefaultThreads();

/// Records every subcommand's --quiet (app.cc calls it once after parsing).
void SetQuiet(bool quiet);
/// Progress lines are wanted: stderr is a terminal and --quiet was not given.
bool ProgressAllowed();

/// A progress callback printing "\r<label>: 42% <what> done, 3.1 s (<step>)"
/// on stderr once a second has passed, only when ProgressAllowed() (else
/// empty). `step`, if given, is read at every print (the caller updates it).
/// Sets *shown when it printed, so the caller ends the line.
std::function<void(double)> ProgressLine(std::string label, std::string what, bool* shown,
                                         const std::string* step = nullptr);

/// Writes `text` to stderr; never throws (stderr may be closed or full).
void PrintStderr(const std::string& text) noexcept;

/// Writes `text` to stdout; throws Error if the write fails (a closed pipe).
void PrintStdout(const std::string& text);

}  // namespace railsim::cli
