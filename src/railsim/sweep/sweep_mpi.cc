#include "railsim/sweep/sweep_mpi.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>

namespace railsim::sweep {
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

void Distribute(const mpi::MpiSession& session, const spec::SweepConfig& config, const std::vector<int64_t>& indices,
                int threads, const std::function<void(const SweepRow&, int)>& emit) {
  size_t next = 0;
  int active = session.size() - 1;
  while (active > 0) {
    const auto [worker, bytes] = session.ReceiveFromAny(kRowsTag);
    for (const SweepRow& row : Unpack(bytes, config)) emit(row, worker);
    const size_t batch = std::min(indices.size() - next, size_t(threads));
    session.Send(worker, kWorkTag,
                 std::string(reinterpret_cast<const char*>(indices.data() + next), batch * sizeof(int64_t)));
    next += batch;
    if (batch == 0) --active;
  }
}

void Work(const mpi::MpiSession& session, const spec::SweepConfig& config, const SweepSpecs& specs, int threads) {
  std::vector<SweepRow> rows;
  for (;;) {
    session.Send(0, kRowsTag, Pack(rows));
    const std::string bytes = session.ReceiveFromAny(kWorkTag).second;
    if (bytes.empty()) return;
    std::vector<int64_t> batch(bytes.size() / sizeof(int64_t));
    std::memcpy(batch.data(), bytes.data(), batch.size() * sizeof(int64_t));
    rows.clear();
    RunSweepPoints(config, specs, batch, threads, [&](const SweepRow& row) { rows.push_back(row); });
  }
}

}  // namespace

void RunSweepPointsMpi(const mpi::MpiSession& session, const spec::SweepConfig& config, const SweepSpecs& specs,
                       const std::vector<int64_t>& indices, int threads,
                       const std::function<void(const SweepRow&, int)>& emit) {
  assert(session.size() >= 2 && threads >= 1 && "a distributor and at least one worker");
  if (session.rank() == 0) {
    Distribute(session, config, indices, threads, emit);
  } else {
    Work(session, config, specs, threads);
  }
}

}  // namespace railsim::sweep
