// Reading a sweep's row files back, for `railsim sweep --resume` (the rows
// already in --out) and `--merge` (the shards' files): every line is a row
// SweepRowJson or SweepRowCsv wrote (sweep_report.h) or a CSV header, or the
// file is refused, so that a file is never half understood and then
// rewritten without what was not.
//
// Two things happen to files in real life and are forgiven with a note: a
// cut-off last line (a sweep killed mid-write; the point runs again) and a
// row repeated byte for byte (the same shard merged twice).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace railsim::report {

/// The rows of one or more files of one sweep. Not thread-safe.
class SweepRowReader {
 public:
  struct Row {
    int64_t index = 0;
    std::string line;  ///< as read, with its "\n"
  };

  /// `where` names the flag the files came from ("--resume", "--merge").
  explicit SweepRowReader(std::string where) : where_(std::move(where)) {}

  /// Reads the lines of `text`, the contents of the file `path`. Throws
  /// Error(where) naming PATH:LINE for a line that is neither a row nor a
  /// CSV header; a row whose index is outside [0, points) or whose point
  /// count differs from the rows read before; a CSV row among JSON Lines
  /// rows or the other way round; a CSV header other than one read before;
  /// a CSV row with another number of fields than its header; and two
  /// different rows of one index.
  void Read(const std::string& path, std::string_view text);

  /// Whether the rows (or a header) read are CSV; false with nothing read.
  bool csv() const { return format_ == Format::kCsv; }
  /// Whether any row or header was read.
  bool empty() const { return format_ == Format::kNone; }
  /// The CSV header line with its "\n", or "" (JSON Lines, or no header).
  const std::string& header() const { return header_; }
  /// The sweep's point count, or -1 before any row.
  int64_t points() const { return points_; }
  /// The rows in the order read, repeats left out.
  const std::vector<Row>& rows() const { return rows_; }
  /// One sentence per line forgiven: "part1.jsonl:7: ...".
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  enum class Format { kNone, kJsonLines, kCsv };
  struct Seen {
    size_t row;  ///< in rows_
    std::string at;  ///< "path:line"
  };

  void SetFormat(Format format, const std::string& at);
  void ReadLine(const std::string& at, std::string_view line);
  void AddRow(const std::string& at, int64_t index, int64_t points, std::string_view line);

  std::string where_;
  Format format_ = Format::kNone;
  std::string header_, header_at_;
  int64_t points_ = -1;
  std::string points_at_;
  std::vector<Row> rows_;
  std::map<int64_t, Seen> seen_;  ///< by index
  std::vector<std::string> notes_;
};

}  // namespace railsim::report
