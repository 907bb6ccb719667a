#include "railsim/study/sweep_mpi.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef RAILSIM_WITH_MPI
#include <mpi.h>
#endif

namespace railsim::study {

bool LaunchedByMpirun() {
  // Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; PMI-based launchers
  // (srun --mpi=pmix) set PMIX_RANK.
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

int RankFromEnvironment() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

#ifndef RAILSIM_WITH_MPI

bool MpiCompiledIn() { return false; }
MpiSession::MpiSession() { assert(false && "built without RAILSIM_MPI"); }
MpiSession::~MpiSession() = default;
void MpiSession::Abort(int) const { std::abort(); }
std::string MpiSession::Broadcast(const std::string&) const {
  assert(false && "built without RAILSIM_MPI");
  return "";
}
std::optional<std::pair<int, std::string>> MpiSession::FirstReport(const std::string&) const {
  assert(false && "built without RAILSIM_MPI");
  return std::nullopt;
}
void RunSweepPointsMpi(const MpiSession&, const spec::SweepConfig&, const SweepSpecs&, const std::vector<int64_t>&,
                       int, const std::function<void(const SweepRow&, int)>&) {
  assert(false && "built without RAILSIM_MPI");
}

#else

namespace {

// Tags of the two messages: a worker's rows (and its request for more),
// and rank 0's next batch of point indices (empty: stop).
constexpr int kRowsTag = 1;
constexpr int kWorkTag = 2;

// Rows travel as bytes: index, error length and text, result count and
// values. Rank 0 rebuilds each row's parameters from its index.
void Put(std::string* out, const void* data, size_t size) { out->append(static_cast<const char*>(data), size); }

std::string Pack(const std::vector<SweepRow>& rows) {
  std::string out;
  for (const SweepRow& r : rows) {
    const int64_t error_size = int64_t(r.error.size()), results = int64_t(r.results.size());
    Put(&out, &r.index, sizeof r.index);
    Put(&out, &error_size, sizeof error_size);
    out += r.error;
    Put(&out, &results, sizeof results);
    Put(&out, r.results.data(), sizeof(double) * r.results.size());
  }
  return out;
}

std::vector<SweepRow> Unpack(const std::string& bytes, const spec::SweepConfig& config) {
  std::vector<SweepRow> rows;
  size_t at = 0;
  auto get = [&](void* data, size_t size) {
    assert(at + size <= bytes.size() && "a whole row");
    std::memcpy(data, bytes.data() + at, size);
    at += size;
  };
  while (at < bytes.size()) {
    SweepRow r;
    int64_t error_size = 0, results = 0;
    get(&r.index, sizeof r.index);
    get(&error_size, sizeof error_size);
    r.error = bytes.substr(at, size_t(error_size));
    at += size_t(error_size);
    get(&results, sizeof results);
    r.results.resize(size_t(results));
    get(r.results.data(), sizeof(double) * r.results.size());
    r.point = config.Point(r.index);
    rows.push_back(std::move(r));
  }
  return rows;
}

void Distribute(int size, const spec::SweepConfig& config, const std::vector<int64_t>& indices, int threads,
                const std::function<void(const SweepRow&, int)>& emit) {
  size_t next = 0;
  int active = size - 1;
  std::string bytes;
  while (active > 0) {
    MPI_Status status;
    MPI_Probe(MPI_ANY_SOURCE, kRowsTag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    bytes.resize(size_t(count));
    MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, kRowsTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (const SweepRow& row : Unpack(bytes, config)) emit(row, status.MPI_SOURCE);
    const size_t batch = std::min(indices.size() - next, size_t(threads));
    MPI_Send(indices.data() + next, int(batch), MPI_INT64_T, status.MPI_SOURCE, kWorkTag, MPI_COMM_WORLD);
    next += batch;
    if (batch == 0) --active;
  }
}

void Work(const spec::SweepConfig& config, const SweepSpecs& specs, int threads) {
  std::vector<SweepRow> rows;
  std::vector<int64_t> batch(static_cast<size_t>(threads));
  for (;;) {
    const std::string bytes = Pack(rows);
    MPI_Send(bytes.data(), int(bytes.size()), MPI_BYTE, 0, kRowsTag, MPI_COMM_WORLD);
    MPI_Status status;
    MPI_Recv(batch.data(), threads, MPI_INT64_T, 0, kWorkTag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_INT64_T, &count);
    if (count == 0) return;
    rows.clear();
    RunSweepPoints(config, specs, std::vector<int64_t>(batch.begin(), batch.begin() + count), threads,
                   [&](const SweepRow& row) { rows.push_back(row); });
  }
}

}  // namespace

bool MpiCompiledIn() { return true; }

MpiSession::MpiSession() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

void MpiSession::Abort(int status) const {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();  // MPI_Abort does not return; this says so to the compiler
}

std::string MpiSession::Broadcast(const std::string& bytes) const {
  uint64_t size = bytes.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::string out = rank_ == 0 ? bytes : std::string(size_t(size), '\0');
  // In pieces: an MPI count is an int.
  for (uint64_t at = 0; at < size; at += INT_MAX) {
    MPI_Bcast(out.data() + at, int(std::min<uint64_t>(size - at, INT_MAX)), MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  return out;
}

std::optional<std::pair<int, std::string>> MpiSession::FirstReport(const std::string& report) const {
  assert(report.size() < size_t(INT_MAX) && "a report is a line");
  int first = report.empty() ? size_ : rank_;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == size_) return std::nullopt;
  uint64_t size = report.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, first, MPI_COMM_WORLD);
  std::string text = rank_ == first ? report : std::string(size_t(size), '\0');
  MPI_Bcast(text.data(), int(size), MPI_BYTE, first, MPI_COMM_WORLD);
  return std::pair{first, text};
}

void RunSweepPointsMpi(const MpiSession& session, const spec::SweepConfig& config, const SweepSpecs& specs,
                       const std::vector<int64_t>& indices, int threads,
                       const std::function<void(const SweepRow&, int)>& emit) {
  assert(session.size() >= 2 && threads >= 1 && "a distributor and at least one worker");
  if (session.rank() == 0) {
    Distribute(session.size(), config, indices, threads, emit);
  } else {
    Work(config, specs, threads);
  }
}

#endif

}  // namespace railsim::study
