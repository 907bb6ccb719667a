// The command line's edge: output formats, progress lines, stdout and stderr.
// The flag value parsers are study/flag_values.h's.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "railsim/study/flag_values.h"

namespace railsim::cli {

// The value parsers live in study/ (the Python module validates with them too).
using study::DefaultThreads;
using study::ParseBandwidthFlag;
using study::ParseBytesFlag;
using study::ParseChoiceFlag;
using study::ParseDpFlag;
using study::ParseDurationFlag;
using study::ParseIntFlag;
using study::ParseNumberFlag;

/// Output formats a command can print.
enum class Format { kTable, kJson, kCsv };
/// Parses --format against the formats the command offers.
Format ParseFormatFlag(const std::string& text, bool csv_allowed);

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

/// Writes the command's report `text` to stdout (or, after
/// MoveReportToStderr(), to stderr); throws Error if the write fails (a
/// closed pipe, a full disk).
void PrintStdout(const std::string& text);

/// An output file is standard output (`--out -`): from now on PrintStdout
/// writes to stderr, so that stdout carries that output alone, as GNU tar's
/// listing goes to stderr when its archive goes to stdout.
void MoveReportToStderr();

}  // namespace railsim::cli
