// EndRanks(): how a command run under mpirun ends on an error, so that the
// error is printed once and no rank is left waiting.
#pragma once

#include <string>

#include "railsim/study/sweep_mpi.h"

namespace railsim::cli {

/// A rank's error under mpirun: the one `line`, then every rank ends with
/// `status`. Errors from the flags and inputs are checked before any work,
/// so every rank meets the same one: rank 0 prints it and ends them all, and
/// another rank prints only if rank 0 has not ended it after a while (then
/// the error is its own, such as memory refused).
[[noreturn]] void EndRanks(const study::MpiSession& mpi, const std::string& line, int status);

}  // namespace railsim::cli
