#include "railsim/mpi/partition.h"

#include <cassert>
#include <climits>

#ifdef RAILSIM_WITH_MPI
#include <mpi.h>
#endif

namespace railsim::mpi {

#ifndef RAILSIM_WITH_MPI

std::unique_ptr<sim::Partition> NewMpiPartition(const MpiSession&) {
  assert(false && "built without RAILSIM_MPI");
  return nullptr;
}

#else

namespace {

class MpiPartition final : public sim::Partition {
 public:
  explicit MpiPartition(const MpiSession& session) : rank_(session.rank()), size_(session.size()) {}

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void SumInt64(std::span<int64_t> values) override {
    assert(values.size() <= size_t(INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  }

  void MinDouble(std::span<double> values) override {
    assert(values.size() <= size_t(INT_MAX));
    MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  }

  void GatherFlows(std::span<const sim::Flow> mine, std::vector<sim::Flow>* all) override { Gather(mine, all); }
  void GatherInt64(std::span<const int64_t> mine, std::vector<int64_t>* all) override { Gather(mine, all); }

 private:
  // As bytes (MPI_BYTE): plain data of the same layout on every rank (one
  // binary).
  template <typename T>
  void Gather(std::span<const T> mine, std::vector<T>* all) {
    const int bytes = int(mine.size_bytes());
    assert(mine.size_bytes() <= size_t(INT_MAX));
    std::vector<int> counts(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int64_t total = 0;
    for (size_t r = 0; r < counts.size(); ++r) {
      offsets[r] = int(total);
      total += counts[r];
    }
    assert(total <= INT_MAX && "fills by lists are bounded (SimOptions::max_list_entries)");
    all->resize(size_t(total) / sizeof(T));
    MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all->data(), counts.data(), offsets.data(), MPI_BYTE,
                   MPI_COMM_WORLD);
  }

  int rank_, size_;
};

}  // namespace

std::unique_ptr<sim::Partition> NewMpiPartition(const MpiSession& session) {
  return std::make_unique<MpiPartition>(session);
}

#endif

}  // namespace railsim::mpi
