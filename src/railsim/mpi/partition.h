// A simulation's flows split over MPI ranks: sim::Partition on
// MPI_COMM_WORLD, for `mpirun -np P railsim alltoall|collective ...
// --simulate`. Compiled in by the CMake option RAILSIM_MPI.
#pragma once

#include <memory>

#include "railsim/sim/partition.h"
#include "railsim/mpi/session.h"

namespace railsim::mpi {

/// A partition over every rank of `session` (which must outlive it).
/// Requires MpiCompiledIn().
std::unique_ptr<sim::Partition> NewMpiPartition(const MpiSession& session);

}  // namespace railsim::mpi
