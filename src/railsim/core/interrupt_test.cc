// The stop request and its poll hook: who sets it, when it is seen, and that
// it is forgotten when cleared.
#include "railsim/core/interrupt.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace railsim {
namespace {

std::atomic<int> g_polls{0};
bool CountAndStop() {
  ++g_polls;
  return true;
}
bool CountAndGoOn() {
  ++g_polls;
  return false;
}

// Removes the hook and the request, whatever the test did.
struct Reset {
  ~Reset() {
    SetInterruptPoll(nullptr);
    ClearInterrupt();
  }
};

TEST(InterruptTest, NothingAskedNothingThrown) {
  Reset reset;
  EXPECT_FALSE(InterruptRequested());
  EXPECT_NO_THROW(ThrowIfInterrupted());
}

TEST(InterruptTest, RequestIsSeenOnEveryThreadUntilCleared) {
  Reset reset;
  RequestInterrupt();
  bool seen_elsewhere = false;
  std::thread([&] { seen_elsewhere = InterruptRequested(); }).join();
  EXPECT_TRUE(seen_elsewhere);
  EXPECT_THROW(ThrowIfInterrupted(), Interrupted);
  ClearInterrupt();
  EXPECT_NO_THROW(ThrowIfInterrupted());
}

// A hook that says stop records the request: the next check needs no poll.
TEST(InterruptTest, PollThatSaysStopRecordsTheRequest) {
  Reset reset;
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // past this thread's last poll
  g_polls = 0;
  SetInterruptPoll(&CountAndStop);
  EXPECT_TRUE(InterruptRequested());
  EXPECT_EQ(1, g_polls.load());
  EXPECT_THROW(ThrowIfInterrupted(), Interrupted);
  EXPECT_EQ(1, g_polls.load());
}

// Checks in a tight loop poll at most once per 50 ms per thread: 200 ms of
// checks make at most 5 polls (one at the start, then one per 50 ms; fewer
// when the thread is not scheduled), not one per check.
TEST(InterruptTest, PollsAreRateLimited) {
  Reset reset;
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  g_polls = 0;
  SetInterruptPoll(&CountAndGoOn);
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  int64_t checks = 0, stops = 0;
  while (std::chrono::steady_clock::now() < end) {
    stops += InterruptRequested();
    ++checks;
  }
  EXPECT_EQ(0, stops);
  EXPECT_GE(g_polls.load(), 1);
  EXPECT_LE(g_polls.load(), 5);
  EXPECT_GT(checks, 1000);
}

}  // namespace
}  // namespace railsim
