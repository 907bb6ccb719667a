// A simulation's flows split over MPI ranks: sim::Partition on
// MPI_COMM_WORLD, for `mpirun -np P railsim alltoall|collective ...
// --simulate`. With study/sweep_mpi.cc, the only place railsim talks MPI;
// compiled in by the CMake option RAILSIM_MPI.
#pragma once

#include <memory>

#include "railsim/sim/partition.h"
#include "railsim/study/sweep_mpi.h"

namespace railsim::study {

/// A partition over every rank of `session` (which must outlive it).
/// Requires MpiCompiledIn().
std::unique_ptr<sim::Partition> NewMpiPartition(const MpiSession& session);

}  // namespace railsim::study
