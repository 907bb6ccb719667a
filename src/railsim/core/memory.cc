#include "railsim/core/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

namespace railsim {
namespace {

// The first number in `path` (a /proc or cgroup file); -1 when the file is
// missing or holds none ("max" in memory.max).
long long ReadNumber(const std::string& path) {
  long long value = -1;
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    if (std::fscanf(f, "%lld", &value) != 1) value = -1;
    std::fclose(f);
  }
  return value;
}

int64_t MemAvailable() {
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f)) {
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib > 0) return int64_t(kib) * 1024;
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : int64_t{1} << 32;
}

// What RLIMIT_AS leaves above the process's virtual size (its mappings
// count against it whether touched or not); -1 when there is no limit.
int64_t AddressSpaceLeft() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return -1;
  const long long pages = ReadNumber("/proc/self/statm");  // first field: the virtual size in pages
  const int64_t used = pages > 0 ? int64_t(pages) * ::sysconf(_SC_PAGE_SIZE) : 0;
  return std::max<int64_t>(int64_t(limit.rlim_cur) - used, 0);
}

// What the limit file `limit` leaves above the usage file `usage` in the
// cgroup folder `dir`, or at the mount's root `root` where `dir` is not seen
// (a cgroup namespace); -1 without a limit ("max", or v1's near-2^63).
int64_t LeftUnder(const std::string& root, const std::string& dir, const char* limit, const char* usage) {
  long long max = ReadNumber(dir + "/" + limit);
  std::string at = dir;
  if (max < 0) {
    max = ReadNumber(root + "/" + limit);
    at = root;
  }
  if (max <= 0 || max >= (1LL << 62)) return -1;
  const long long used = ReadNumber(at + "/" + usage);
  return std::max<int64_t>(max - std::max<long long>(used, 0), 0);
}

// What the process's memory cgroup leaves under its limit (v2: memory.max;
// v1: memory.limit_in_bytes), as in a container or a Slurm job; -1 without.
int64_t CgroupLeft() {
  std::FILE* f = std::fopen("/proc/self/cgroup", "r");
  if (!f) return -1;
  int64_t left = -1;
  char line[4096];
  while (left < 0 && std::fgets(line, sizeof line, f)) {
    // "hierarchy:controllers:path"; v2's has no controllers.
    std::string entry = line;
    while (!entry.empty() && entry.back() == '\n') entry.pop_back();
    const size_t a = entry.find(':'), b = entry.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string controllers = ",";  // ",cpu,memory,": a whole name is found with its commas
    controllers.append(entry, a + 1, b - a - 1).push_back(',');
    std::string path = entry.substr(b + 1);
    if (path == "/") path.clear();
    if (controllers == ",,") {
      left = LeftUnder("/sys/fs/cgroup", "/sys/fs/cgroup" + path, "memory.max", "memory.current");
    } else if (controllers.find(",memory,") != std::string::npos) {
      left = LeftUnder("/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory" + path, "memory.limit_in_bytes",
                       "memory.usage_in_bytes");
    }
  }
  std::fclose(f);
  return left;
}

}  // namespace

int64_t AvailableMemoryBytes() {
  int64_t available = MemAvailable();
  for (int64_t left : {AddressSpaceLeft(), CgroupLeft()}) {
    if (left >= 0) available = std::min(available, left);
  }
  return available;
}

}  // namespace railsim
