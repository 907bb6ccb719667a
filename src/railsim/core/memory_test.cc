// AvailableMemoryBytes() against a limit set by hand: an address-space limit
// (`ulimit -v`) caps what it reports at what the limit leaves.
#include "railsim/core/memory.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <gtest/gtest.h>

namespace railsim {
namespace {

// The process's virtual size in bytes, from /proc/self/statm.
int64_t VirtualBytes() {
  long long pages = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%lld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  return int64_t(pages) * ::sysconf(_SC_PAGE_SIZE);
}

TEST(AvailableMemoryTest, PositiveWithoutLimits) { EXPECT_GT(AvailableMemoryBytes(), int64_t{0}); }

// In a child (the limit must not reach the other tests): RLIMIT_AS at the
// present virtual size plus 1 GiB leaves at most 1 GiB, and nearly all of it.
TEST(AvailableMemoryTest, AddressSpaceLimitCapsIt) {
  constexpr int64_t kGiB = int64_t{1} << 30;
  int fds[2];
  ASSERT_EQ(0, ::pipe(fds));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    const int64_t before = VirtualBytes();
    const rlimit limit{rlim_t(before + kGiB), rlim_t(before + kGiB)};
    int64_t got = -1;
    if (before > 0 && ::setrlimit(RLIMIT_AS, &limit) == 0) got = AvailableMemoryBytes();
    ssize_t written = ::write(fds[1], &got, sizeof got);
    ::_exit(written == sizeof got ? 0 : 1);
  }
  ::close(fds[1]);
  int64_t got = -2;
  ASSERT_EQ(ssize_t(sizeof got), ::read(fds[0], &got, sizeof got));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(child, ::waitpid(child, &status, 0));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_GE(got, 0) << "setrlimit failed in the child";
  EXPECT_LE(got, kGiB);
  EXPECT_GT(got, kGiB - (int64_t{64} << 20)) << "the child's few pages since, at most";
}

}  // namespace
}  // namespace railsim
