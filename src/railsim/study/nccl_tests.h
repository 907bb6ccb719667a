// Readers of nccl-tests results (github.com/NVIDIA/nccl-tests): the text the
// *_perf binaries print, and a CSV of the same rows. What `railsim calibrate`
// fits the system's communication parameters to (study/calibrate.h).
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
// INFO", "NCCL WARN") and other `#` lines are skipped; any other line is an
// error. Which collective ran comes from the "Collective test starting" line,
// else from the binary's name in the file name.
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

namespace railsim::study {

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
};

/// Parses the text nccl-tests prints. `file` names the source in errors and
/// in the result (and, without a "Collective test starting" line, tells the
/// collective). Throws Error("FILE:LINE", ...) for a malformed line and
/// Error("FILE", ...) when no row, no rank line or no collective is found.
NcclTestsRun ParseNcclTestsText(std::string_view text, const std::string& file);

/// Parses the CSV form; one run per (op, nodes, gpus) in order of first
/// appearance. Throws Error("FILE:LINE", ...) for a bad header or cell.
std::vector<NcclTestsRun> ParseNcclTestsCsv(std::string_view text, const std::string& file);

/// Reads `path` (CSV when it ends in ".csv", text otherwise). Throws Error
/// naming `flag` when the file cannot be read, and as the parsers do.
std::vector<NcclTestsRun> ReadNcclTests(const std::string& path, const std::string& flag);

}  // namespace railsim::study
