#include "railsim/mpi/session.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#ifdef RAILSIM_WITH_MPI
#include <mpi.h>
#endif

namespace railsim::mpi {

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
void MpiSession::Send(int, int, const std::string&) const { std::abort(); }
std::pair<int, std::string> MpiSession::ReceiveFromAny(int) const { std::abort(); }

#else

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

void MpiSession::Send(int to, int tag, const std::string& bytes) const {
  assert(bytes.size() < size_t(INT_MAX) && "one message");
  MPI_Send(bytes.data(), int(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

std::pair<int, std::string> MpiSession::ReceiveFromAny(int tag) const {
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string bytes(size_t(count), '\0');
  MPI_Recv(bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return {status.MPI_SOURCE, bytes};
}

#endif

}  // namespace railsim::mpi
