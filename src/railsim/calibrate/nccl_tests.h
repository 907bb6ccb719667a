// Readers of nccl-tests results (github.com/NVIDIA/nccl-tests): the text the
// *_perf binaries print, and a CSV of the same rows. What `railsim calibrate`
// fits the system's communication parameters to (calibrate/calibrate.h).
//
// Text: the `# nThread ... nGpus ...` header, one `#  Rank R Group G Pid P
// on HOST device D [...] NAME` line per rank (ranks and hosts), the
// `# nccl-tests version ... nccl-library=NNNNN` or NCCL's own `NCCL version
// X` log line, `NCCL_ALGO` / `NCCL_PROTO` in the environment (`NCCL_ALGO=Ring`
// or NCCL's `NCCL_ALGO set by environment to Ring`), `# Collective test
// starting: all_reduce_perf`, and the table: size (B), count (elements),
// type, redop, root, then time (us), algbw (GB/s), busbw (GB/s), #wrong for
// out-of-place and again for in-place (plus per-iteration columns and a
// timestamp when nccl-tests was asked for them). NCCL's log lines ("NCCL
// INFO", "NCCL WARN", a bare "NCCL version X") and other `#` lines are read
// for what they say. Any other line that does not start with two integers
// (size and count) is neither a result nor a header: a launcher's banner, an
// ssh warning. Such lines are skipped and counted (NcclTestsRun::skipped),
// and a file is refused only when it holds no result row. Which collective
// ran comes from the "Collective test starting" line, else from the binary's
// name in the file name.
//
// What would mislead a fit is refused: a row whose #wrong is above 0
// (nccl-tests found corrupted data), a count that contradicts the size and
// type (size = count x bytes per element, x ranks for all_gather,
// reduce_scatter and alltoall, whose count is per rank), one size (of one
// type, op and root) twice with different times, a second "Collective test
// starting" block of another collective, and values that would become 0 or
// infinite once converted: times outside [kMinTimeUs, kMaxTimeUs], sizes
// above kMaxSizeBytes, bandwidths above kMaxBandwidthGBps.
//
// CSV (docs/calibrate.md): `#` comment lines, a header, one row per size:
// op, nodes, gpus, size_bytes or size_mib, oop_time_us or oop_algbw_GBps, and
// optionally count, type, oop_busbw_GBps, inplace_time_us, inplace_algbw_GBps,
// inplace_busbw_GBps, algo, proto, nccl_version.
//
// Errors are railsim::Error with `where` = "FILE:LINE" (or "FILE" for the
// whole file) and a message saying what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::calibrate {

/// Plausible ranges of an nccl-tests row: one collective from 1 ns to about
/// 3 hours, buffers up to 1 PB, bandwidths up to 1 PB/s. Beyond them a value
/// is garbage, and turns into 0 or infinity once converted to seconds.
constexpr double kMinTimeUs = 1e-3, kMaxTimeUs = 1e10;
constexpr double kMaxSizeBytes = 1e15;
constexpr double kMaxBandwidthGBps = 1e6;

enum class NcclCollective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kSendRecv, kBroadcast };

/// The nccl-tests binary's name without "_perf": "all_reduce", "alltoall"...
const char* NcclCollectiveName(NcclCollective c);
/// Reads "all_reduce_perf", "all_reduce", "all-reduce", "allreduce" (any
/// case) and the like; nullopt for anything else.
std::optional<NcclCollective> ParseNcclCollective(std::string_view text);

/// One table row: one message size, out-of-place and in-place.
struct NcclTestsRow {
  int line = 0;            ///< 1-based line in its file
  double size_bytes = 0;   ///< nccl-tests' size column
  int64_t count = 0;       ///< elements (0 when a CSV leaves it out)
  std::string type, redop;
  int root = -1;
  double oop_time_us = 0, oop_algbw_GBps = 0, oop_busbw_GBps = 0;
  double inplace_time_us = 0, inplace_algbw_GBps = 0, inplace_busbw_GBps = 0;  ///< 0 = not given
};

/// One nccl-tests run: one collective on one set of ranks.
struct NcclTestsRun {
  std::string file;
  NcclCollective collective = NcclCollective::kAllReduce;
  int64_t ranks = 0;  ///< GPUs in the communicator
  int64_t nodes = 0;  ///< distinct hosts
  std::string nccl_version;  ///< "2.27.7", or empty when the file does not say
  std::string algo, proto;   ///< NCCL_ALGO / NCCL_PROTO when set, else empty
  std::vector<NcclTestsRow> rows;
  /// Text lines that were neither results, headers nor NCCL log lines, and
  /// the first of them (its 1-based line and text).
  int skipped = 0;
  int first_skipped_line = 0;
  std::string first_skipped;
};

/// "FILE: 2 lines skipped (neither results nor headers), the first at line 3:
/// 'Warning: Permanently added ...'", or "" when none was.
std::string SkippedLinesNote(const NcclTestsRun& run);

/// Parses the text nccl-tests prints. `file` names the source in errors and
/// in the result (and, without a "Collective test starting" line, tells the
/// collective). Throws Error("FILE:LINE", ...) for a malformed or refused row
/// or header and Error("FILE", ...) when no row, no rank line or no
/// collective is found.
NcclTestsRun ParseNcclTestsText(std::string_view text, const std::string& file);

/// Parses the CSV form; one run per (op, nodes, gpus) in order of first
/// appearance. Throws Error("FILE:LINE", ...) for a bad header or cell, and
/// for the rows the text form refuses.
std::vector<NcclTestsRun> ParseNcclTestsCsv(std::string_view text, const std::string& file);

/// Reads `path` (CSV when it ends in ".csv", text otherwise). Throws Error
/// naming `flag` when the file cannot be read, and as the parsers do.
std::vector<NcclTestsRun> ReadNcclTests(const std::string& path, const std::string& flag);

}  // namespace railsim::calibrate
