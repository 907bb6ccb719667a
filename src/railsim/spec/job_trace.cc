#include "railsim/spec/job_trace.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/text_fields.h"

namespace railsim::spec {
namespace {

enum Column { kSubmit, kDuration, kGpus, kModel, kState, kGpusPerServer, kGpuMilli, kQueue, kType, kGpuSpec };
const char* const kColumnNames[] = {"submit_s",   "duration_s", "gpus",    "model", "state",
                                    "gpus_per_server", "gpu_milli", "queue_s", "type",  "gpu_spec"};
constexpr int kColumns = 10;
constexpr size_t kMaxCellChars = 200;

std::string At(const std::string& where, size_t line, std::string_view column) {
  return where + ": line " + std::to_string(line) + (column.empty() ? "" : ", column '" + std::string(column) + "'");
}

// The header's columns: index per Column (-1 when absent).
std::vector<int> ReadHeader(std::string_view line, const std::string& where, std::vector<int>* column_at) {
  std::vector<std::string> cells = SplitCsvLine(line);
  std::vector<int> index(kColumns, -1);
  column_at->clear();
  for (size_t i = 0; i < cells.size(); ++i) {
    int found = -1;
    for (int c = 0; c < kColumns; ++c) {
      if (cells[i] == kColumnNames[c]) found = c;
    }
    if (found < 0) {
      throw Error(At(where, 1, ""), "unknown column " + Quoted(cells[i]) + DidYouMean(cells[i], TraceColumns()) +
                                        " (columns: submit_s, duration_s, gpus; optional: model, state, "
                                        "gpus_per_server, gpu_milli, queue_s, type, gpu_spec)");
    }
    if (index[size_t(found)] >= 0) throw Error(At(where, 1, cells[i]), "column appears twice");
    index[size_t(found)] = static_cast<int>(i);
    column_at->push_back(found);
  }
  for (int c : {kSubmit, kDuration, kGpus}) {
    if (index[size_t(c)] < 0) throw Error(At(where, 1, ""), std::string("missing required column '") + kColumnNames[c] + "'");
  }
  return index;
}

double ReadSeconds(const std::string& cell, const std::string& at) {
  std::optional<double> v = ParseWholeDouble(cell);
  if (!v || *v < 0 || *v > kMaxTraceSeconds) {
    throw Error(at, "expected seconds in [0, 315360000], got " + Quoted(cell));
  }
  return *v;
}

int64_t ReadCount(const std::string& cell, const std::string& at, int64_t low, int64_t high) {
  std::optional<int64_t> v = ParseWholeInt(cell);
  if (!v || *v < low || *v > high) {
    throw Error(at, "expected an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "], got " +
                        Quoted(cell));
  }
  return *v;
}

// "8+8": GPUs per server, summing to the job's GPUs.
void CheckGpusPerServer(const std::string& cell, int64_t gpus, const std::string& at) {
  int64_t sum = 0;
  size_t start = 0;
  while (start <= cell.size()) {
    size_t plus = cell.find('+', start);
    std::string part = cell.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    sum += ReadCount(part, at, 1, kMaxJobGpus);
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  if (sum != gpus) {
    throw Error(at, "GPUs per server " + Quoted(cell) + " add up to " + std::to_string(sum) + ", not the job's " +
                        std::to_string(gpus));
  }
}

void ReadCell(int column, const std::string& cell, const std::string& at, TraceJob* job) {
  if (cell.size() > kMaxCellChars) throw Error(at, "cell longer than 200 characters");
  switch (column) {
    case kSubmit: job->submit_s = ReadSeconds(cell, at); break;
    case kDuration: job->duration_s = ReadSeconds(cell, at); break;
    case kGpus: job->gpus = ReadCount(cell, at, 1, kMaxJobGpus); break;
    case kModel: job->model = cell; break;
    case kState: job->state = cell; break;
    case kQueue: if (!cell.empty()) ReadSeconds(cell, at); break;
    case kGpuMilli: if (!cell.empty()) ReadCount(cell, at, 0, 1000); break;
    default: break;  // gpus_per_server (checked after the row), type, gpu_spec: text
  }
}

// Box-Muller over a splitmix64 stream: the same numbers on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double Uniform() {  // (0, 1)
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;
  }
  double Normal() { return std::sqrt(-2 * std::log(Uniform())) * std::cos(6.283185307179586 * Uniform()); }

 private:
  uint64_t state_;
};

}  // namespace

std::vector<std::string> TraceColumns() { return {std::begin(kColumnNames), std::end(kColumnNames)}; }

// A spreadsheet's UTF-8 byte-order mark is not part of the first column's name.
std::string_view WithoutBom(std::string_view text) {
  return text.substr(0, 3) == "\xEF\xBB\xBF" ? text.substr(3) : text;
}

JobTrace ParseJobTrace(std::string_view text, const std::string& where) {
  std::vector<std::string_view> lines = SplitLines(WithoutBom(text));
  while (!lines.empty() && Trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) throw Error(where, "empty trace: expected a header line with submit_s, duration_s, gpus");
  std::vector<int> column_at;
  std::vector<int> index = ReadHeader(lines[0], where, &column_at);
  if (static_cast<int64_t>(lines.size()) - 1 > kMaxTraceJobs) {
    throw Error(where, "more than 1,000,000 jobs (" + std::to_string(lines.size() - 1) + " lines)");
  }
  JobTrace trace;
  trace.source = where;
  trace.jobs.reserve(lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    if (Trim(lines[i]).empty()) throw Error(At(where, i + 1, ""), "empty line");
    std::vector<std::string> cells = SplitCsvLine(lines[i]);
    if (cells.size() != column_at.size()) {
      throw Error(At(where, i + 1, ""), "expected " + std::to_string(column_at.size()) + " cells, found " +
                                            std::to_string(cells.size()));
    }
    TraceJob job;
    for (size_t c = 0; c < cells.size(); ++c) {
      ReadCell(column_at[c], cells[c], At(where, i + 1, kColumnNames[column_at[c]]), &job);
    }
    if (index[kGpusPerServer] >= 0 && !cells[size_t(index[kGpusPerServer])].empty()) {
      CheckGpusPerServer(cells[size_t(index[kGpusPerServer])], job.gpus, At(where, i + 1, "gpus_per_server"));
    }
    trace.jobs.push_back(std::move(job));
  }
  if (trace.jobs.empty()) throw Error(where, "no jobs after the header line");
  return trace;
}

JobTrace LoadJobTrace(const std::string& path, const std::string& where) {
  JobTrace trace = ParseJobTrace(ReadTextFile(path, where), where + " " + Quoted(path));
  trace.source = path;  // as the user wrote it, for tables and JSON
  return trace;
}

void ValidateSyntheticOptions(const SyntheticTraceOptions& o) {
  if (o.jobs < 1 || o.jobs > kMaxTraceJobs) throw Error("--jobs", "expected [1, 1,000,000] jobs");
  if (!(o.arrivals_per_hour > 0) || o.arrivals_per_hour > 1e6) {
    throw Error("--arrivals-per-hour", "expected a rate in (0, 1,000,000] jobs per hour");
  }
  if (o.size_buckets.empty() || o.size_buckets.size() != o.size_shares.size() || o.size_buckets.size() > 64) {
    throw Error("--size-mix", "expected 1 to 64 GPUs:share pairs");
  }
  double total = 0;
  for (size_t i = 0; i < o.size_buckets.size(); ++i) {
    if (o.size_buckets[i] < 1 || o.size_buckets[i] > kMaxJobGpus) throw Error("--size-mix", "sizes must be in [1, 1,048,576] GPUs");
    if (!(o.size_shares[i] >= 0) || !std::isfinite(o.size_shares[i])) throw Error("--size-mix", "shares must be >= 0");
    total += o.size_shares[i];
  }
  if (!(total > 0)) throw Error("--size-mix", "the shares add up to 0");
  if (!(o.duration_median_s > 0) || o.duration_median_s > kMaxTraceSeconds) {
    throw Error("--duration-median", "expected seconds in (0, 315360000]");
  }
  if (!(o.duration_p90_s > o.duration_median_s) || o.duration_p90_s > kMaxTraceSeconds) {
    throw Error("--duration-p90", "expected seconds above --duration-median and at most 315360000");
  }
}

JobTrace MakeSyntheticTrace(const SyntheticTraceOptions& o) {
  ValidateSyntheticOptions(o);
  JobTrace trace;
  trace.source = "synthetic";
  Rng rng(o.seed);
  double total = 0;
  for (double s : o.size_shares) total += s;
  const double mu = std::log(o.duration_median_s);
  const double sigma = std::log(o.duration_p90_s / o.duration_median_s) / 1.2815515655446004;  // z of 0.9
  double t = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    TraceJob job;
    job.submit_s = std::round(t);
    double pick = rng.Uniform() * total;
    size_t b = 0;
    while (b + 1 < o.size_shares.size() && pick >= o.size_shares[b]) pick -= o.size_shares[b++];
    job.gpus = o.size_buckets[b];
    job.duration_s = std::round(std::min(kMaxTraceSeconds, std::exp(mu + sigma * rng.Normal())));
    trace.jobs.push_back(job);
    t += -std::log(rng.Uniform()) * 3600.0 / o.arrivals_per_hour;
  }
  return trace;
}

void ParseSizeMix(std::string_view text, const std::string& where, SyntheticTraceOptions* o) {
  o->size_buckets.clear();
  o->size_shares.clear();
  std::string s(text);
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t colon = item.find(':');
    std::optional<int64_t> gpus = colon == std::string::npos ? std::nullopt : ParseWholeInt(Trim(item.substr(0, colon)));
    std::optional<double> share = colon == std::string::npos ? std::nullopt : ParseWholeDouble(Trim(item.substr(colon + 1)));
    if (!gpus || !share) throw Error(where, "expected GPUs:share pairs such as 8:0.5,64:0.5, got " + Quoted(item));
    o->size_buckets.push_back(*gpus);
    o->size_shares.push_back(*share);
    if (o->size_buckets.size() > 64) throw Error(where, "more than 64 sizes");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

SwitchMap ParseSwitchMap(std::string_view text, const std::string& where) {
  std::vector<std::string_view> lines = SplitLines(WithoutBom(text));
  while (!lines.empty() && Trim(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) throw Error(where, "empty switch map: expected a header line host,asw,psw,dsw");
  std::vector<std::string> header = SplitCsvLine(lines[0]);
  const std::vector<std::string> names = {"host", "asw", "psw", "dsw"};
  int col[4] = {-1, -1, -1, -1};
  for (size_t i = 0; i < header.size(); ++i) {
    auto it = std::find(names.begin(), names.end(), header[i]);
    if (it == names.end()) throw Error(At(where, 1, ""), "unknown column " + Quoted(header[i]) + DidYouMean(header[i], names));
    col[it - names.begin()] = static_cast<int>(i);
  }
  for (int c = 0; c < 3; ++c) {
    if (col[c] < 0) throw Error(At(where, 1, ""), "missing column '" + names[size_t(c)] + "'");
  }
  SwitchMap map;
  std::map<std::string, int32_t> host_id, tor_id, psw_id;
  auto id_of = [](std::map<std::string, int32_t>& ids, std::vector<std::string>& list, const std::string& name) {
    auto [it, added] = ids.emplace(name, static_cast<int32_t>(list.size()));
    if (added) list.push_back(name);
    return it->second;
  };
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> cells = SplitCsvLine(lines[i]);
    if (cells.size() != header.size()) throw Error(At(where, i + 1, ""), "expected " + std::to_string(header.size()) + " cells");
    for (int c = 0; c < 3; ++c) {
      const std::string& cell = cells[size_t(col[c])];
      if (cell.empty() || cell.size() > kMaxCellChars) throw Error(At(where, i + 1, names[size_t(c)]), "expected a name of 1 to 200 characters");
    }
    int32_t host = id_of(host_id, map.host_names, cells[size_t(col[0])]);
    int32_t tor = id_of(tor_id, map.tor_names, cells[size_t(col[1])]);
    int32_t psw = id_of(psw_id, map.psw_names, cells[size_t(col[2])]);
    if (map.hosts() > kMaxSwitchMapHosts) throw Error(where, "more than 262,144 hosts");
    if (static_cast<size_t>(host) == map.tor_of.size()) map.tor_of.push_back(tor);
    if (map.tor_of[size_t(host)] != tor) {
      throw Error(At(where, i + 1, "asw"), "host " + Quoted(cells[size_t(col[0])]) + " is under two ToR switches");
    }
    if (map.tor_psws.size() <= size_t(tor)) map.tor_psws.resize(size_t(tor) + 1);
    std::vector<int32_t>& up = map.tor_psws[size_t(tor)];
    if (std::find(up.begin(), up.end(), psw) == up.end()) {
      up.insert(std::upper_bound(up.begin(), up.end(), psw), psw);
    }
  }
  if (map.host_names.empty()) throw Error(where, "no hosts after the header line");
  return map;
}

SwitchMap LoadSwitchMap(const std::string& path, const std::string& where) {
  return ParseSwitchMap(ReadTextFile(path, where), where + " " + Quoted(path));
}

}  // namespace railsim::spec
