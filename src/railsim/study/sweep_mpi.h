// MPI for railsim under mpirun: the session every command opens there (its
// ranks first check that they run the same command, cli/mpi_ranks.h), and
// sweeps over it: `mpirun -np P railsim sweep ...`. Rank 0 hands out points
// (a few at a time, to whichever rank asks next) and receives every row, so
// one file holds the sweep; ranks 1..P-1 run points. With mpi_partition.cc,
// the one place railsim talks MPI; it is compiled in by the CMake option
// RAILSIM_MPI (Open MPI), and without it MpiCompiledIn() is false and no
// session can start.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "railsim/spec/sweep_config.h"
#include "railsim/study/sweep.h"

namespace railsim::study {

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

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

/// Runs a sweep on every rank of `session` (all ranks call it with the same
/// config and specs). Rank 0 gives out `indices` (only rank 0's are read),
/// `threads` points at a time, and calls `emit(row, rank)` for each row as
/// it arrives, rank being the rank that ran it; ranks >= 1 run points on
/// `threads` threads and never call emit. Requires session.size() >= 2.
void RunSweepPointsMpi(const MpiSession& session, const spec::SweepConfig& config, const SweepSpecs& specs,
                       const std::vector<int64_t>& indices, int threads,
                       const std::function<void(const SweepRow&, int rank)>& emit);

}  // namespace railsim::study
