#include "railsim/calibrate/nccl_tests.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/text_fields.h"

namespace railsim::calibrate {
namespace {

struct CollectiveName {
  NcclCollective collective;
  const char* name;
};

constexpr CollectiveName kCollectives[] = {
    {NcclCollective::kAllReduce, "all_reduce"}, {NcclCollective::kAllGather, "all_gather"},
    {NcclCollective::kReduceScatter, "reduce_scatter"}, {NcclCollective::kAllToAll, "alltoall"},
    {NcclCollective::kSendRecv, "sendrecv"},   {NcclCollective::kBroadcast, "broadcast"},
};

// Lower case without '_', '-' and a trailing "perf": the spelling-free key.
std::string Squashed(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    out += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  }
  if (out.size() > 4 && out.compare(out.size() - 4, 4, "perf") == 0) out.resize(out.size() - 4);
  return out;
}

std::string CollectiveList() {
  std::string list;
  for (const CollectiveName& c : kCollectives) list += (list.empty() ? "" : ", ") + std::string(c.name) + "_perf";
  return list;
}

std::string Where(const std::string& file, int line) { return fmt::format("{}:{}", file, line); }

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// The word after `key` in `text`, if `key` occurs.
std::optional<std::string_view> WordAfter(std::string_view text, std::string_view key) {
  size_t at = text.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> words = SplitWords(text.substr(at + key.size()));
  if (words.empty()) return std::nullopt;
  return words.front();
}

// nccl-library=22707 -> "2.27.7" (NCCL_VERSION_CODE: major*10000 +
// minor*100 + patch since 2.9; major*1000 + minor*100 + patch before).
std::string VersionFromCode(int64_t code) {
  if (code >= 20900) return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

// State gathered from the text's header and log lines.
struct TextHeader {
  std::optional<NcclCollective> collective;
  int collective_line = 0;  ///< of its "Collective test starting" line
  std::map<int64_t, std::string> rank_hosts;
  std::string nccl_version, algo, proto;
};

// A `#` line: the ones that say something are read, the rest skipped.
void ReadCommentLine(std::string_view line, int number, const std::string& where, TextHeader* h) {
  std::vector<std::string_view> words = SplitWords(line.substr(1));
  if (words.size() >= 2 && words[0] == "Rank") {
    // "#  Rank %2d Group %2d Pid %6d on %10s device %2d [...] NAME"
    std::optional<int64_t> rank = ParseWholeInt(words[1]);
    auto on = std::find(words.begin(), words.end(), std::string_view("on"));
    if (!rank || *rank < 0 || *rank >= (int64_t{1} << 24) || on == words.end() || on + 1 == words.end()) {
      throw Error(where, fmt::format("expected '#  Rank R Group G Pid P on HOST device D ...' with a rank in "
                                     "[0, 16777215], got {}", Quoted(Printable(line))));
    }
    if (h->rank_hosts.count(*rank)) throw Error(where, fmt::format("rank {} is listed twice", *rank));
    h->rank_hosts[*rank] = std::string(*(on + 1));
  } else if (words.size() >= 4 && words[0] == "Collective" && words[1] == "test" && words[2] == "starting:") {
    std::string_view binary = words[3];
    if (size_t slash = binary.rfind('/'); slash != std::string_view::npos) binary.remove_prefix(slash + 1);
    std::optional<NcclCollective> collective = ParseNcclCollective(binary);
    if (!collective) {
      throw Error(where, fmt::format("railsim reads {}; got {}", CollectiveList(), Quoted(Printable(binary))));
    }
    if (h->collective && *h->collective != *collective) {
      // The rows below would be timed as the first collective.
      throw Error(where, fmt::format("a second collective, {}_perf, after {}_perf at line {}: railsim reads one "
                                     "collective per file; split the file at its '# Collective test starting' lines",
                                     NcclCollectiveName(*collective), NcclCollectiveName(*h->collective),
                                     h->collective_line));
    }
    if (!h->collective) h->collective_line = number;
    h->collective = collective;
  } else if (words.size() >= 2 && words[0] == "nccl-tests" && words[1] == "version") {
    if (std::optional<std::string_view> code = WordAfter(line, "nccl-library=")) {
      std::optional<int64_t> c = ParseWholeInt(*code);
      if (!c || *c < 1000 || *c > 999999) {
        throw Error(where, fmt::format("expected nccl-library=NNNNN (NCCL_VERSION_CODE), got {}", Quoted(*code)));
      }
      h->nccl_version = VersionFromCode(*c);
    }
  } else if (words.size() >= 2 && words[0] == "nThread") {
    std::optional<int64_t> threads = ParseWholeInt(words[1]);
    if (!threads || *threads < 1) {
      throw Error(where, fmt::format("expected '# nThread T nGpus G ...' with T >= 1, got {}", Quoted(Printable(line))));
    }
  }
}

// NCCL's own log ("host:pid:tid [0] NCCL INFO ...") and environment dumps.
bool ReadLogLine(std::string_view line, TextHeader* h) {
  // NCCL_DEBUG=VERSION (and WARN) print the version alone on its line.
  if (StartsWith(line, "NCCL version ")) {
    if (auto v = WordAfter(line, "NCCL version ")) h->nccl_version = std::string(v->substr(0, v->find('+')));
    return true;
  }
  bool nccl_log = line.find("NCCL INFO") != std::string_view::npos ||
                  line.find("NCCL WARN") != std::string_view::npos;
  if (nccl_log) {
    if (auto v = WordAfter(line, "NCCL version ")) h->nccl_version = std::string(v->substr(0, v->find('+')));
    if (auto a = WordAfter(line, "NCCL_ALGO set by environment to ")) h->algo = std::string(*a);
    if (auto p = WordAfter(line, "NCCL_PROTO set by environment to ")) h->proto = std::string(*p);
    return true;
  }
  // An environment variable (NAME=value), as `env` prints it.
  size_t eq = line.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  for (char c : line.substr(0, eq)) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  if (StartsWith(line, "NCCL_ALGO=")) h->algo = std::string(Trim(line.substr(eq + 1)));
  if (StartsWith(line, "NCCL_PROTO=")) h->proto = std::string(Trim(line.substr(eq + 1)));
  return true;
}

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

double Number(std::string_view word, const std::string& field, double min, double max, const std::string& where) {
  std::optional<double> v = ParseWholeDouble(word);
  if (!v || *v < min || *v > max) {
    const std::string range = std::isinf(max) ? fmt::format(">= {:g}", min) : fmt::format("in [{:g}, {:g}]", min, max);
    throw Error(where, fmt::format("{}: expected a number {}, got {}", field, range, Quoted(Printable(word))));
  }
  return *v;
}

// Bytes per element of nccl-tests' type names; 0 for a name it does not print.
int TypeBytes(std::string_view type) {
  for (std::string_view t : {"int8", "uint8", "char", "f8e4m3", "f8e5m2"}) {
    if (type == t) return 1;
  }
  for (std::string_view t : {"half", "bfloat16", "float16"}) {
    if (type == t) return 2;
  }
  for (std::string_view t : {"int32", "uint32", "int", "float", "float32"}) {
    if (type == t) return 4;
  }
  for (std::string_view t : {"int64", "uint64", "double", "float64"}) {
    if (type == t) return 8;
  }
  return 0;
}

// "size count type redop root | time algbw busbw #wrong [i_min i_max i_p99
// i_cv%] | the same in-place [| date time]".
NcclTestsRow ReadRow(const std::vector<std::string_view>& w, int line, const std::string& where) {
  const size_t n = w.size();
  const bool per_iter = n == 21 || n == 23;
  if (!(n == 13 || n == 15 || per_iter)) {
    throw Error(where, fmt::format("expected a result row of 13 fields (size count type redop root, then time "
                                   "algbw busbw #wrong out-of-place and in-place), got {}{}",
                                   n, n < 13 ? " (truncated?)" : ""));
  }
  NcclTestsRow r;
  r.line = line;
  std::optional<int64_t> size = ParseWholeInt(w[0]), count = ParseWholeInt(w[1]), root = ParseWholeInt(w[4]);
  if (!size || *size < 1 || double(*size) > kMaxSizeBytes) {
    throw Error(where, fmt::format("size: expected bytes in [1, {:g}], got {}", kMaxSizeBytes, Quoted(w[0])));
  }
  if (!count || *count < 0) throw Error(where, fmt::format("count: expected elements >= 0, got {}", Quoted(w[1])));
  if (!root || *root < -1 || *root >= (int64_t{1} << 24)) {
    throw Error(where, fmt::format("root: expected -1 or a rank, got {}", Quoted(w[4])));
  }
  r.size_bytes = double(*size);
  r.count = *count;
  r.type = std::string(w[2]);
  r.redop = std::string(w[3]);
  r.root = int(*root);
  const size_t stride = per_iter ? 8 : 4;
  for (int part = 0; part < 2; ++part) {
    const size_t at = 5 + part * stride;
    const char* which = part == 0 ? "out-of-place" : "in-place";
    double time = Number(w[at], fmt::format("time ({}, us)", which), kMinTimeUs, kMaxTimeUs, where);
    double algbw = Number(w[at + 1], fmt::format("algbw ({}, GB/s)", which), 0, kMaxBandwidthGBps, where);
    double busbw = Number(w[at + 2], fmt::format("busbw ({}, GB/s)", which), 0, kMaxBandwidthGBps, where);
    // "N/A" when nccl-tests ran without checking (-c 0).
    if (w[at + 3] != "N/A") {
      std::optional<int64_t> wrong = ParseWholeInt(w[at + 3]);
      if (!wrong || *wrong < 0) {
        throw Error(where, fmt::format("#wrong ({}): expected 0 or N/A, got {}", which, Quoted(Printable(w[at + 3]))));
      }
      if (*wrong > 0) {
        throw Error(where, fmt::format("#wrong ({}): expected 0, got {}: nccl-tests found corrupted data, so the row "
                                       "does not time a working collective",
                                       which, *wrong));
      }
    }
    (part == 0 ? r.oop_time_us : r.inplace_time_us) = time;
    (part == 0 ? r.oop_algbw_GBps : r.inplace_algbw_GBps) = algbw;
    (part == 0 ? r.oop_busbw_GBps : r.inplace_busbw_GBps) = busbw;
  }
  return r;
}

// "2 lines skipped (...), the first at line 3: '...'".
std::string SkippedLines(const NcclTestsRun& run) {
  return fmt::format("{} line{} skipped (neither results nor headers), the first at line {}: {}", run.skipped,
                     run.skipped == 1 ? "" : "s", run.first_skipped_line, Quoted(Printable(run.first_skipped)));
}

// Refuses what the rows of a whole run contradict: a count that does not
// give the size (nccl-tests prints max(send, receive) bytes and the count a
// rank passes, per peer for all_gather, reduce_scatter and alltoall), and
// one size of one type, op and root timed twice differently.
void CheckRows(const NcclTestsRun& run) {
  const bool per_peer = run.collective == NcclCollective::kAllGather ||
                        run.collective == NcclCollective::kReduceScatter ||
                        run.collective == NcclCollective::kAllToAll;
  std::map<std::tuple<double, std::string, std::string, int>, const NcclTestsRow*> seen;
  for (const NcclTestsRow& r : run.rows) {
    const std::string where = Where(run.file, r.line);
    const int bytes = TypeBytes(r.type);
    if (r.count > 0 && bytes > 0) {
      const double expected = double(r.count) * bytes * (per_peer ? double(run.ranks) : 1.0);
      if (expected != r.size_bytes) {
        throw Error(where, fmt::format("count: {} {} elements of {} bytes{} make {:.0f} bytes, but the size is {:.0f}",
                                       r.count, r.type, bytes,
                                       per_peer ? fmt::format(" from each of {} ranks", run.ranks) : "", expected,
                                       r.size_bytes));
      }
    }
    auto [it, fresh] = seen.emplace(std::make_tuple(r.size_bytes, r.type, r.redop, r.root), &r);
    if (!fresh && it->second->oop_time_us != r.oop_time_us) {
      throw Error(where, fmt::format("size {:.0f} bytes appears twice with different times: {:g} us at line {}, "
                                     "{:g} us here; give each run in its own file",
                                     r.size_bytes, it->second->oop_time_us, it->second->line, r.oop_time_us));
    }
  }
}

}  // namespace

std::string SkippedLinesNote(const NcclTestsRun& run) {
  if (run.skipped == 0) return "";
  return fmt::format("{}: {}", run.file, SkippedLines(run));
}

const char* NcclCollectiveName(NcclCollective c) {
  for (const CollectiveName& n : kCollectives) {
    if (n.collective == c) return n.name;
  }
  return "?";
}

std::optional<NcclCollective> ParseNcclCollective(std::string_view text) {
  std::string key = Squashed(text);
  for (const CollectiveName& n : kCollectives) {
    if (Squashed(n.name) == key) return n.collective;
  }
  return std::nullopt;
}

NcclTestsRun ParseNcclTestsText(std::string_view text, const std::string& file) {
  TextHeader h;
  NcclTestsRun run;
  run.file = file;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int number = int(i) + 1;
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    if (line.front() == '#') {
      ReadCommentLine(line, number, Where(file, number), &h);
      continue;
    }
    if (ReadLogLine(line, &h)) continue;
    std::vector<std::string_view> words = SplitWords(line);
    // A result row starts with its size and count; a row cut short is
    // still one (and refused), anything else is a launcher's line.
    if (words.size() < 2 || !ParseWholeInt(words[0]) || !ParseWholeInt(words[1])) {
      if (run.skipped++ == 0) {
        run.first_skipped_line = number;
        run.first_skipped = std::string(line.substr(0, 200));
      }
      continue;
    }
    run.rows.push_back(ReadRow(words, number, Where(file, number)));
  }
  if (run.rows.empty()) {
    throw Error(file, fmt::format("no result rows: expected the table an nccl-tests binary prints (size count type "
                                  "redop root time algbw busbw #wrong ...){}",
                                  run.skipped > 0 ? "; " + SkippedLines(run) : ""));
  }
  if (h.rank_hosts.empty()) {
    throw Error(file, "no '#  Rank R Group G Pid P on HOST device D' lines: cannot tell how many GPUs ran");
  }
  if (h.rank_hosts.rbegin()->first + 1 != int64_t(h.rank_hosts.size())) {
    throw Error(file, fmt::format("the '#  Rank' lines list {} ranks but the largest rank is {}: a rank is missing",
                                  h.rank_hosts.size(), h.rank_hosts.rbegin()->first));
  }
  if (!h.collective) {
    std::string_view base = file;
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos) base.remove_prefix(slash + 1);
    std::string key = Squashed(base);
    for (const CollectiveName& n : kCollectives) {
      if (key.find(Squashed(n.name)) != std::string::npos) h.collective = n.collective;
    }
    if (!h.collective) {
      throw Error(file, fmt::format("cannot tell which collective ran: expected a '# Collective test starting: "
                                    "NAME' line or one of {} in the file name", CollectiveList()));
    }
  }
  std::set<std::string> hosts;
  for (const auto& [rank, host] : h.rank_hosts) hosts.insert(host);
  run.collective = *h.collective;
  run.ranks = int64_t(h.rank_hosts.size());
  run.nodes = int64_t(hosts.size());
  run.nccl_version = h.nccl_version;
  run.algo = h.algo;
  run.proto = h.proto;
  CheckRows(run);
  return run;
}

namespace {

const std::vector<std::string> kCsvColumns = {
    "op", "nodes", "gpus", "size_bytes", "size_mib", "count", "type", "oop_time_us", "oop_algbw_GBps",
    "oop_busbw_GBps", "inplace_time_us", "inplace_algbw_GBps", "inplace_busbw_GBps", "algo", "proto",
    "nccl_version"};

// Column name -> index, checked: known names, no repeats, the required ones.
std::map<std::string, size_t> CsvHeader(const std::vector<std::string>& cells, const std::string& where) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (std::find(kCsvColumns.begin(), kCsvColumns.end(), cells[i]) == kCsvColumns.end()) {
      throw Error(where, fmt::format("unknown column {}{}; expected {}", Quoted(Printable(cells[i])),
                                     DidYouMean(cells[i], kCsvColumns), fmt::join(kCsvColumns, ", ")));
    }
    if (!index.emplace(cells[i], i).second) throw Error(where, fmt::format("column '{}' appears twice", cells[i]));
  }
  for (const char* need : {"op", "nodes", "gpus"}) {
    if (!index.count(need)) throw Error(where, fmt::format("missing column '{}'", need));
  }
  if (!index.count("size_bytes") && !index.count("size_mib")) {
    throw Error(where, "missing column 'size_bytes' or 'size_mib'");
  }
  if (!index.count("oop_time_us") && !index.count("oop_algbw_GBps")) {
    throw Error(where, "missing column 'oop_time_us' or 'oop_algbw_GBps'");
  }
  return index;
}

}  // namespace

std::vector<NcclTestsRun> ParseNcclTestsCsv(std::string_view text, const std::string& file) {
  std::vector<NcclTestsRun> runs;
  std::map<std::string, size_t> index;
  bool header = false;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = Where(file, int(i) + 1);
    std::string_view line = Trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (!header) {
      index = CsvHeader(cells, where);
      header = true;
      continue;
    }
    if (cells.size() != index.size()) {
      throw Error(where, fmt::format("expected {} cells as in the header, got {}{}", index.size(), cells.size(),
                                     cells.size() < index.size() ? " (truncated?)" : ""));
    }
    auto cell = [&](const char* name) -> std::string_view {
      auto it = index.find(name);
      return it == index.end() ? std::string_view() : std::string_view(cells[it->second]);
    };
    auto number = [&](const char* name, double min, double max) {
      return Number(cell(name), name, min, max, where);
    };
    std::optional<NcclCollective> op = ParseNcclCollective(cell("op"));
    if (!op) {
      throw Error(where, fmt::format("op: railsim reads {}; got {}", CollectiveList(), Quoted(Printable(cell("op")))));
    }
    NcclTestsRow r;
    r.line = int(i) + 1;
    const double gpus = number("gpus", 1, kUnbounded), nodes = number("nodes", 1, kUnbounded);
    // Range first: converting a double beyond int64_t is undefined.
    if (gpus > (1 << 24) || nodes > gpus || gpus != std::floor(gpus) || nodes != std::floor(nodes)) {
      throw Error(where, fmt::format("gpus, nodes: expected whole numbers with 1 <= nodes <= gpus <= 16777216, got "
                                     "{} and {}", cell("gpus"), cell("nodes")));
    }
    r.size_bytes = index.count("size_bytes") ? number("size_bytes", 0, kMaxSizeBytes)
                                             : number("size_mib", 0, kMaxSizeBytes / (1 << 20)) * (1 << 20);
    if (r.size_bytes < 1) throw Error(where, "size: expected at least 1 byte");
    if (index.count("count") && !cell("count").empty()) {
      const double count = number("count", 0, kUnbounded);
      if (count > 1e18 || count != std::floor(count)) {
        throw Error(where, fmt::format("count: expected a whole number of elements, got {}", Quoted(cell("count"))));
      }
      r.count = int64_t(count);
    }
    r.type = std::string(cell("type"));
    const bool has_time = index.count("oop_time_us") && !cell("oop_time_us").empty();
    r.oop_algbw_GBps = index.count("oop_algbw_GBps") ? number("oop_algbw_GBps", 0, kMaxBandwidthGBps) : 0;
    if (has_time) {
      r.oop_time_us = number("oop_time_us", kMinTimeUs, kMaxTimeUs);
    } else if (r.oop_algbw_GBps > 0) {
      // algbw = size / time: a time outside its range once converted is refused as the time would be.
      r.oop_time_us = r.size_bytes / (r.oop_algbw_GBps * 1e3);
      if (!(r.oop_time_us >= kMinTimeUs && r.oop_time_us <= kMaxTimeUs)) {
        throw Error(where, fmt::format("oop_algbw_GBps: {:.0f} bytes at {} GB/s take {:g} us; expected a time in "
                                       "[{:g}, {:g}] us",
                                       r.size_bytes, cell("oop_algbw_GBps"), r.oop_time_us, kMinTimeUs, kMaxTimeUs));
      }
    }
    if (r.oop_time_us <= 0) throw Error(where, "expected a positive oop_time_us or oop_algbw_GBps");
    if (r.oop_algbw_GBps == 0) r.oop_algbw_GBps = r.size_bytes / (r.oop_time_us * 1e3);
    if (index.count("oop_busbw_GBps")) r.oop_busbw_GBps = number("oop_busbw_GBps", 0, kMaxBandwidthGBps);
    if (index.count("inplace_algbw_GBps")) r.inplace_algbw_GBps = number("inplace_algbw_GBps", 0, kMaxBandwidthGBps);
    if (index.count("inplace_busbw_GBps")) r.inplace_busbw_GBps = number("inplace_busbw_GBps", 0, kMaxBandwidthGBps);
    if (index.count("inplace_time_us")) {
      r.inplace_time_us = number("inplace_time_us", 0, kMaxTimeUs);
    } else if (r.inplace_algbw_GBps > 0) {
      r.inplace_time_us = std::min(kMaxTimeUs, r.size_bytes / (r.inplace_algbw_GBps * 1e3));
    }
    auto same = [&](const NcclTestsRun& run) {
      return run.collective == *op && run.ranks == int64_t(gpus) && run.nodes == int64_t(nodes);
    };
    auto it = std::find_if(runs.begin(), runs.end(), same);
    if (it == runs.end()) {
      NcclTestsRun run;
      run.file = file;
      run.collective = *op;
      run.ranks = int64_t(gpus);
      run.nodes = int64_t(nodes);
      run.algo = std::string(cell("algo"));
      run.proto = std::string(cell("proto"));
      run.nccl_version = std::string(cell("nccl_version"));
      runs.push_back(run);
      it = runs.end() - 1;
    }
    it->rows.push_back(r);
  }
  if (runs.empty()) throw Error(file, header ? "no data rows below the header" : "no header row (op,nodes,gpus,...)");
  for (const NcclTestsRun& run : runs) CheckRows(run);
  return runs;
}

std::vector<NcclTestsRun> ReadNcclTests(const std::string& path, const std::string& flag) {
  std::string text = ReadTextFile(path, flag);
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (csv) return ParseNcclTestsCsv(text, path);
  return {ParseNcclTestsText(text, path)};
}

}  // namespace railsim::calibrate
