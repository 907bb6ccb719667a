// How railsim runs under mpirun. Every rank first checks that it runs rank
// 0's command: the same railsim, the same arguments, the same bytes in every
// input file (nodes can hold different copies of a file). Otherwise every
// rank ends with exit 2 and rank 0 prints one line naming the first
// difference. Then only the commands that split their work over the ranks
// (alltoall and collective, whose simulations do; a sweep's points) run on
// every rank; every other command (estimate, search, network, calibrate,
// failures, sweep --merge, ...) runs on rank 0 alone, so that its output and
// its errors appear once.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "railsim/core/error.h"
#include "railsim/mpi/session.h"

namespace railsim::cli {

/// What this rank does under mpirun, decided when Run() starts. Outside
/// mpirun it does nothing and the command runs. With MPI built in it holds
/// the MPI session (MPI_Init to MPI_Finalize) for the life of Run(); without
/// MPI the ranks cannot compare, and rank 0 (by mpirun's environment) runs
/// the command alone. At most one per process.
class MpiRanks {
 public:
  /// `args`: the words after "railsim". When a rank's command differs from
  /// rank 0's, rank 0 prints the line naming the difference and every rank
  /// gets runs_command() false and status() 2.
  explicit MpiRanks(const std::vector<std::string>& args);
  ~MpiRanks();
  MpiRanks(const MpiRanks&) = delete;
  MpiRanks& operator=(const MpiRanks&) = delete;

  /// False on a rank that leaves the command to the others; the process
  /// then exits with status().
  bool runs_command() const { return runs_command_; }
  int status() const { return status_; }
  /// True on ranks >= 1 of a command that splits its work: an error every
  /// rank meets alike (a bad flag) is printed by rank 0 alone.
  bool silent() const { return silent_; }

  /// A command's `error` on this rank: under mpirun printed here (by rank 0
  /// alone when silent()) while MPI is still up, since once one rank ends
  /// mpirun may kill the others before main() could print; returns the exit
  /// status, 2. Outside mpirun, rethrows it for main().
  int Fail(const Error& error) const;

 private:
  static void PrintError(const Error& error);
  std::unique_ptr<mpi::MpiSession> session_;
  bool runs_command_ = true, silent_ = false;
  int status_ = 0;
};

/// The MPI session of a command that splits its work over the ranks, when
/// mpirun started it with MPI built in; null otherwise (one process does
/// all the work).
const mpi::MpiSession* RankSession();

/// Throws Error("mpirun", ...) on every rank of `mpi` when a file one of
/// them read since Run() began (InputFileRecord) differs from rank 0's: the
/// files a command's arguments do not name, such as the models a sweep's
/// config names. Every rank calls it, after reading its inputs.
void AgreeOnFilesRead(const mpi::MpiSession& mpi);

/// A rank's error under mpirun: the one `line`, then every rank ends with
/// `status`. Errors from the flags and inputs are checked before any work,
/// so every rank meets the same one: rank 0 prints it and ends them all, and
/// another rank prints only if rank 0 has not ended it after a while (then
/// the error is its own, such as memory refused).
[[noreturn]] void EndRanks(const mpi::MpiSession& mpi, const std::string& line, int status);

}  // namespace railsim::cli
