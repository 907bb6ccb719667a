// `railsim sweep`: one study at every point of a grid, on all cores, on a
// shard of the points (Slurm job arrays), resumable; and `--merge`, which
// joins the shards' files and names the points still missing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/mpi_ranks.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/report/sweep_report.h"
#include "railsim/report/sweep_rows.h"
#include "railsim/spec/sweep_config.h"
#include "railsim/sweep/sweep.h"
#include "railsim/sweep/sweep_mpi.h"

namespace railsim::cli {
namespace {

struct SweepFlags {
  std::string config, out, threads, shard = "0/1", format = "jsonl";
  bool resume = false;
  std::vector<std::string> merge;
};

struct Shard {
  int index = 0, count = 1;
};

Shard ParseShard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) {
    throw Error("--shard", fmt::format("expected I/N (shard I of N, 0 <= I < N), got {}", Quoted(text)));
  }
  Shard s;
  s.count = int(ParseIntFlag("--shard", text.substr(slash + 1), 1, 1 << 20));
  s.index = int(ParseIntFlag("--shard", text.substr(0, slash), 0, s.count - 1));
  return s;
}

// Notes of a SweepRowReader on stderr, one line each.
void PrintNotes(const report::SweepRowReader& reader) {
  for (const std::string& note : reader.notes()) PrintStderr(fmt::format("railsim: warning: {}\n", note));
}

// Reads the rows already in `path` for --resume: their indices, and the
// text to start the file again with (the CSV header and the rows; a cut-off
// last line and repeated rows are dropped with a note). A file of another
// sweep or format, or with lines that are not rows, is refused.
std::string ResumeFrom(const std::string& path, const spec::SweepConfig& config, bool csv,
                       std::vector<int64_t>* done) {
  const std::string header = report::SweepCsvHeader(config);
  if (!PathExists(path)) return csv ? header : "";
  report::SweepRowReader reader("--resume");
  reader.Read(path, ReadTextFile(path, "--out"));
  if (reader.points() >= 0 && reader.points() != config.points) {
    throw Error("--resume", fmt::format("{} holds rows of a sweep of {} points, not this config's {}", path,
                                        reader.points(), config.points));
  }
  if (!reader.empty() && reader.csv() != csv) {
    throw Error("--resume", fmt::format("{} holds {} rows; resume it with --format {}", path,
                                        reader.csv() ? "CSV" : "JSON Lines", reader.csv() ? "csv" : "jsonl"));
  }
  if (csv && !reader.empty() && reader.header() != header) {
    throw Error("--resume", fmt::format("{} does not start with this sweep's CSV header", path));
  }
  PrintNotes(reader);
  std::string kept = csv ? header : "";
  for (const report::SweepRowReader::Row& row : reader.rows()) {
    done->push_back(row.index);
    kept += row.line;
  }
  return kept;
}

// Writes the rows to --out, one flushed line each, so that a killed sweep
// leaves at most a partial last line. The file is replaced by `start` (the
// CSV header, the rows --resume keeps) at the first row, or at the end when
// no row comes: a sweep that fails before its first row, on any rank,
// leaves the file as it found it.
class RowFile {
 public:
  RowFile(std::string path, std::string start) : path_(std::move(path)), start_(std::move(start)) {
    CheckOutputPath(path_, "--out");
  }

  void Append(const std::string& line) {
    Open();
    file_->Write(line);
    file_->Flush();
  }
  /// Writes `start` if no row came.
  void Finish() { Open(); }

 private:
  void Open() {
    if (file_) return;
    file_.emplace(path_, "--out");
    file_->Write(start_);
    file_->Commit();
  }
  std::string path_, start_;
  std::optional<OutputFile> file_;
};

// "\rsweep: 120/500 points (24%), 3 errors, 12.3 s, ETA 39 s" once a second
// has passed, at most twice a second, when progress lines are allowed.
class SweepProgress {
 public:
  explicit SweepProgress(int64_t total) : total_(total), enabled_(ProgressAllowed()) {}
  void Row(bool error) {
    ++done_;
    errors_ += error ? 1 : 0;
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (elapsed < 1.0 || (elapsed - last_ < 0.5 && done_ < total_)) return;
    last_ = elapsed;
    const double eta = elapsed / double(done_) * double(total_ - done_);
    fmt::print(stderr, "\rsweep: {}/{} points ({:.0f}%), {} errors, {:.1f} s, ETA {:.0f} s ", done_, total_,
               100.0 * double(done_) / double(std::max<int64_t>(total_, 1)), errors_, elapsed, eta);
    std::fflush(stderr);
    shown_ = true;
  }
  ~SweepProgress() {
    if (shown_) fmt::print(stderr, "\n");
  }

 private:
  int64_t total_, done_ = 0, errors_ = 0;
  bool enabled_, shown_ = false;
  double last_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

spec::SweepConfig LoadConfig(const std::string& path) {
  const std::string text = ReadTextFile(path, "--config");
  try {
    return spec::ParseSweepConfigJson(text);
  } catch (const Error& e) {
    throw e.WithContext("--config " + path);
  }
}

struct SweepSetup {
  spec::SweepConfig config;
  sweep::SweepSpecs specs;
  bool csv = false;
  int threads = 1;
};

// Everything every rank needs: validated flags, the config, its specs.
SweepSetup LoadSweep(const SweepFlags& f) {
  if (f.config.empty()) throw Error("--config", "expected the sweep's JSON config (or --merge FILES)");
  if (f.out.empty()) throw Error("--out", "expected the file the rows go to");
  SweepSetup s;
  s.csv = ParseChoiceFlag("--format", f.format, {"jsonl", "csv"}) == "csv";
  s.threads = f.threads.empty() ? DefaultThreads() : study::ParseThreadsFlag(f.threads);
  s.config = LoadConfig(f.config);
  try {
    s.specs = sweep::LoadSweepSpecs(s.config);
  } catch (const Error& e) {
    throw e.WithContext("--config " + f.config);
  }
  return s;
}

// Runs the sweep's points of this shard not yet in --out, here or, when
// `mpi` is given, on its worker ranks (this is rank 0).
void RunPoints(const SweepFlags& f, const SweepSetup& s, const mpi::MpiSession* mpi) {
  const Shard shard = ParseShard(f.shard);
  if (f.resume && CheckOutputPath(f.out, "--out").kind == OutputKind::kStdout) {
    throw Error("--resume", fmt::format("expected a file to resume, got {} (standard output)", Quoted(f.out)));
  }
  std::vector<int64_t> done;
  const std::string start =
      f.resume ? ResumeFrom(f.out, s.config, s.csv, &done) : (s.csv ? report::SweepCsvHeader(s.config) : "");
  const std::vector<int64_t> indices = sweep::ShardPoints(s.config.points, shard.index, shard.count, done);
  RowFile out(f.out, start);
  SweepProgress progress(int64_t(indices.size()));
  auto write = [&](const sweep::SweepRow& row) {
    out.Append(s.csv ? report::SweepRowCsv(row, s.config) : report::SweepRowJson(row, s.config));
    progress.Row(!row.error.empty());
  };
  if (!mpi) {
    sweep::RunSweepPoints(s.config, s.specs, indices, s.threads, write);
    out.Finish();
    return;
  }
  std::vector<int64_t> per_rank(size_t(mpi->size()), 0);
  sweep::RunSweepPointsMpi(*mpi, s.config, s.specs, indices, s.threads, [&](const sweep::SweepRow& row, int rank) {
    write(row);
    ++per_rank[size_t(rank)];
  });
  out.Finish();
  if (ProgressAllowed()) {
    std::vector<std::string> counts;
    for (size_t r = 1; r < per_rank.size(); ++r) counts.push_back(fmt::format("rank {}: {}", r, per_rank[r]));
    fmt::print(stderr, "sweep: points per rank: {}\n", fmt::join(counts, ", "));
  }
}

// Under mpirun (with MPI built in) every rank runs this: rank 0 reads and
// writes the files and hands out points; the other ranks run them. An
// error on any rank ends them all.
int RunSweepOverMpi(const mpi::MpiSession& mpi, const SweepFlags& f) {
  try {
    const SweepSetup s = LoadSweep(f);
    AgreeOnFilesRead(mpi);  // the models and systems the config names
    if (mpi.size() == 1) {
      RunPoints(f, s, nullptr);
    } else if (mpi.rank() == 0) {
      RunPoints(f, s, &mpi);
    } else {
      sweep::RunSweepPointsMpi(mpi, s.config, s.specs, {}, s.threads, {});
    }
  } catch (const Error& e) {
    EndRanks(mpi, fmt::format("railsim: error: {}\n", e.what()), 2);
  }
  return 0;
}

int RunSweep(const SweepFlags& f) {
  if (mpi::LaunchedByMpirun()) {
    if (const mpi::MpiSession* mpi = RankSession()) return RunSweepOverMpi(*mpi, f);
    // Every rank would run the whole sweep into the same file.
    throw Error("mpirun", "this railsim was built without MPI (CMake option RAILSIM_MPI); rebuild with "
                          "-DRAILSIM_MPI=ON, or give each rank its own --shard and --out");
  }
  RunPoints(f, LoadSweep(f), nullptr);
  return 0;
}

// Joins row files: sorted by index, repeats dropped (they must agree), to
// --out or stdout. Exit 1 and the missing indices on stderr when points are
// missing.
int RunMerge(const SweepFlags& f) {
  report::SweepRowReader reader("--merge");
  for (const std::string& path : f.merge) reader.Read(path, ReadTextFile(path, "--merge"));
  PrintNotes(reader);
  std::map<int64_t, const std::string*> rows;
  for (const report::SweepRowReader::Row& row : reader.rows()) rows.emplace(row.index, &row.line);
  std::string text = reader.header();
  for (const auto& [index, line] : rows) text += *line;
  if (f.out.empty()) {
    PrintStdout(text);
  } else {
    WriteTextFile(f.out, text, "--out");
  }
  const int64_t points = reader.points();
  std::vector<int64_t> missing;
  for (int64_t i = 0; i < points; ++i) {
    if (!rows.count(i)) missing.push_back(i);
  }
  if (missing.empty()) return 0;
  const size_t shown = std::min<size_t>(missing.size(), 20);
  fmt::print(stderr, "railsim sweep --merge: {} of {} points missing: {}{}\n", missing.size(), points,
             fmt::join(missing.begin(), missing.begin() + long(shown), ", "), shown < missing.size() ? ", ..." : "");
  return 1;
}

Action SetupSweep(CLI::App* sub) {
  auto f = std::make_shared<SweepFlags>();
  sub->add_option("--config", f->config, "sweep JSON: the study, fixed parameters and axes (docs/sweep.md)");
  sub->add_option("--out", f->out, "file the rows go to (--merge: default stdout)");
  sub->add_option("--threads", f->threads, "worker threads (default: all cores)");
  sub->add_option("--shard", f->shard, "run shard I of N: the points with index % N == I (Slurm arrays)")
      ->capture_default_str();
  sub->add_flag("--resume", f->resume, "keep the rows already in --out and run only the missing points");
  sub->add_option("--format", f->format, "jsonl or csv")->capture_default_str();
  sub->add_option("--merge", f->merge, "join these row files (sorted by index) and name the missing points")
      ->expected(1, 1 << 20)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return [f]() {
    if (!f->merge.empty()) {
      if (!f->config.empty()) throw Error("--merge", "takes row files, not --config");
      return RunMerge(*f);
    }
    return RunSweep(*f);
  };
}

}  // namespace

std::vector<Command> SweepCommands() {
  return {
      {"sweep", "one study (network, estimate, search, alltoall) at every point of a grid: threads, shards, resume",
       SetupSweep,
       "  railsim sweep --config sweep.json --out results.jsonl --threads 8\n"
       "  railsim sweep --config sweep.json --out part$SLURM_ARRAY_TASK_ID.jsonl \\\n"
       "      --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT --resume\n"
       "  railsim sweep --merge part*.jsonl --out results.jsonl"},
  };
}

}  // namespace railsim::cli
