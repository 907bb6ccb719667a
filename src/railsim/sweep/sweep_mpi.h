// A sweep over MPI ranks: `mpirun -np P railsim sweep ...`. Rank 0 hands out
// points (a few at a time, to whichever rank asks next) and receives every
// row, so one file holds the sweep; ranks 1..P-1 run points. The messages go
// through mpi::MpiSession (mpi/session.h), the one place railsim talks MPI.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "railsim/mpi/session.h"
#include "railsim/spec/sweep_config.h"
#include "railsim/sweep/sweep.h"

namespace railsim::sweep {

/// Runs a sweep on every rank of `session` (all ranks call it with the same
/// config and specs). Rank 0 gives out `indices` (only rank 0's are read),
/// `threads` points at a time, and calls `emit(row, rank)` for each row as
/// it arrives, rank being the rank that ran it; ranks >= 1 run points on
/// `threads` threads and never call emit. Requires session.size() >= 2.
void RunSweepPointsMpi(const mpi::MpiSession& session, const spec::SweepConfig& config, const SweepSpecs& specs,
                       const std::vector<int64_t>& indices, int threads,
                       const std::function<void(const SweepRow&, int rank)>& emit);

}  // namespace railsim::sweep
