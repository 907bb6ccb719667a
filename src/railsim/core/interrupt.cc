#include "railsim/core/interrupt.h"

#include <atomic>
#include <chrono>

namespace railsim {
namespace {

// A lock-free atomic: stores from a signal handler are safe.
std::atomic<bool> g_requested{false};
std::atomic<InterruptPoll> g_poll{nullptr};

// Between two polls on one thread. Short enough that a Ctrl-C lands well
// within a second; long enough that a poll (Python takes the GIL for it)
// costs nothing measurable even in a loop of microsecond steps.
constexpr std::chrono::milliseconds kPollInterval{50};

}  // namespace

void RequestInterrupt() noexcept { g_requested.store(true, std::memory_order_relaxed); }

void ClearInterrupt() noexcept { g_requested.store(false, std::memory_order_relaxed); }

void SetInterruptPoll(InterruptPoll poll) noexcept { g_poll.store(poll); }

bool InterruptRequested() noexcept {
  if (g_requested.load(std::memory_order_relaxed)) return true;
  const InterruptPoll poll = g_poll.load(std::memory_order_relaxed);
  if (!poll) return false;
  thread_local std::chrono::steady_clock::time_point last_poll;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_poll < kPollInterval) return false;
  last_poll = now;
  if (!poll()) return false;
  RequestInterrupt();
  return true;
}

void ThrowIfInterrupted() {
  if (InterruptRequested()) throw Interrupted();
}

}  // namespace railsim
