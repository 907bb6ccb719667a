// How much memory this machine can give a run, so that work too large for it
// is refused up front with a figure instead of dying halfway (exit 3, "out
// of memory", after a minute of work).
#pragma once

#include <cstdint>

namespace railsim {

/// The memory the kernel says new allocations can get without swapping
/// (MemAvailable in /proc/meminfo), or the physical memory when that is not
/// readable. Never throws.
int64_t AvailableMemoryBytes();

}  // namespace railsim
