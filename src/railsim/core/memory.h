// How much memory this machine can give a run, so that work too large for it
// is refused up front with a figure instead of dying halfway (exit 3, "out
// of memory", after a minute of work).
#pragma once

#include <cstdint>

namespace railsim {

/// The memory new allocations can get without swapping or hitting a limit:
/// the least of the kernel's MemAvailable (/proc/meminfo; the physical
/// memory when that is not readable), what the process's address-space
/// limit (`ulimit -v`, RLIMIT_AS) leaves above its present size, and what
/// its cgroup's memory.max leaves above memory.current (cgroup v2, as in a
/// container or a Slurm job). Never throws.
int64_t AvailableMemoryBytes();

}  // namespace railsim
