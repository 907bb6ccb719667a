// MPI for railsim under mpirun: the session every command opens there (its
// ranks first check that they run the same command, cli/mpi_ranks.h), with
// the few messages railsim sends: a broadcast, the first report of any rank,
// and bytes from one rank to another (the sweep's points and rows,
// sweep/sweep_mpi.h). mpi/ is the one place railsim talks MPI; the CMake
// option RAILSIM_MPI (Open MPI) compiles it in, and without it
// MpiCompiledIn() is false and no session can start.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>


namespace railsim::mpi {

/// True when railsim was built with RAILSIM_MPI.
bool MpiCompiledIn();

/// True when this process was started by mpirun (its environment says so).
bool LaunchedByMpirun();

/// This process's rank as mpirun's environment gives it (0 when it gives
/// none): what a railsim built without MPI can know.
int RankFromEnvironment();

/// MPI for the life of the object: MPI_Init on construction, MPI_Finalize
/// on destruction (callers catch errors and call Abort(), so that an error
/// on one rank does not leave the others waiting). At most one per process.
/// Requires MpiCompiledIn().
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  /// Ends every rank with `status` (an error on one rank must not leave
  /// the others waiting for it). Does not return.
  [[noreturn]] void Abort(int status) const;

  /// Rank 0's `bytes`, on every rank. Every rank calls it.
  std::string Broadcast(const std::string& bytes) const;

  /// The lowest rank whose `report` is not empty and that report, on every
  /// rank; nullopt when every rank's is empty. Every rank calls it.
  std::optional<std::pair<int, std::string>> FirstReport(const std::string& report) const;

  /// Sends `bytes` to rank `to` with `tag` (blocking until it can be reused).
  void Send(int to, int tag, const std::string& bytes) const;

  /// The next message with `tag` from any rank: (its sender, its bytes).
  std::pair<int, std::string> ReceiveFromAny(int tag) const;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace railsim::mpi
