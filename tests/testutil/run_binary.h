// Test helper: runs the real railsim binary with arguments and captures its
// exit status, stdout and stderr (end-to-end tests, as ninja's output_test).
#pragma once

#include <string>
#include <vector>

namespace railsim::testutil {

struct RunResult {
  int status = -1;  ///< exit status; 128 + signal if killed; -1 if it could not start
  std::string out;
  std::string err;
};

/// Runs RAILSIM_BINARY with `args` (no shell), killing it after
/// `timeout_s` seconds (status then 128 + SIGKILL).
RunResult RunRailsim(const std::vector<std::string>& args, int timeout_s = 120);

/// Runs every argument list as RunRailsim does, as many at once as there are
/// hardware threads (at least two); results in the order of `runs`.
std::vector<RunResult> RunRailsimMany(const std::vector<std::vector<std::string>>& runs, int timeout_s = 120);

/// Runs `program` (searched on PATH) with `args` the same way; its whole
/// process group is killed at the timeout.
RunResult RunProgram(const std::string& program, const std::vector<std::string>& args, int timeout_s = 120);

/// RunRailsim with stderr on a pseudo-terminal (stdout still a file), as a
/// user at a terminal sees it: `err` holds what the terminal received.
RunResult RunRailsimAtTerminal(const std::vector<std::string>& args, int timeout_s = 120);

/// A fresh empty directory under the test temp dir.
std::string MakeTempDir();

/// The whole file at `path` ("" when it cannot be read).
std::string Slurp(const std::string& path);

/// Counts '\n' in `text`.
int LineCount(const std::string& text);

}  // namespace railsim::testutil
