// Parsing of flag values, wherever they enter: the command line's flags and
// the Python module's keyword arguments (named as the flags). Every parser
// throws Error whose `where` is the flag ("--gpus") and whose message says
// what was expected and what was given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace railsim::study {

/// The entries of a comma-separated list ("8,256"), each as written (an
/// empty entry stays: its parser refuses it); more than `max_entries` throws.
std::vector<std::string> SplitFlagList(const std::string& flag, const std::string& text, size_t max_entries = 16);

/// A decimal integer in [min, max] ("32768"; no sign games, no suffixes).
int64_t ParseIntFlag(const std::string& flag, const std::string& text, int64_t min, int64_t max);

/// A finite number in [min, max].
double ParseNumberFlag(const std::string& flag, const std::string& text, double min, double max);

/// A size with its unit ("64KiB", "1MB", "512B"), or a whole number of bytes
/// ("1048576", as nccl-tests prints sizes), in [1 byte, max_bytes].
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

/// A duration with its unit ("20min", "5s") in [min_s, max_s].
double ParseDurationFlag(const std::string& flag, const std::string& text, double min_s, double max_s);

/// Most worker threads any command takes (search, sweep, the simulation of
/// alltoall and collective): one limit, so a value one command takes no
/// other refuses.
constexpr int kMaxThreads = 1024;

/// --threads: an integer in [1, kMaxThreads].
int ParseThreadsFlag(const std::string& text);

/// Worker threads when the user gives none: every hardware thread, at least
/// one and at most kMaxThreads.
int DefaultThreads();

}  // namespace railsim::study
