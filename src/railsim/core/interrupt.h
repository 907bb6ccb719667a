// Stopping a long call early: the seam between the loops that can run for
// seconds or minutes (simulation steps, search units, Monte Carlo trials,
// the searches of a comparison) and whoever wants them stopped (a Python
// user's Ctrl-C). No layer includes Python: the embedder installs a poll
// hook, or calls RequestInterrupt from a signal handler, and catches
// Interrupted where its call began.
//
// The command-line tool installs nothing: Ctrl-C ends the process, as it
// always did, so InterruptRequested() stays false there and Interrupted is
// never thrown.
//
// Thread-safety: every function may be called from any thread; a loop's
// worker threads call InterruptRequested() and stop, and the thread that
// started the work throws (ThrowIfInterrupted) once they have joined, so an
// exception never leaves a worker thread.
#pragma once

#include <exception>

namespace railsim {

/// Thrown by ThrowIfInterrupted: the work was stopped before it finished and
/// its results are incomplete. Not an Error (nothing was wrong with the
/// input), so the CLI's main would report it as internal (it never sees one).
class Interrupted : public std::exception {
 public:
  const char* what() const noexcept override { return "interrupted"; }
};

/// Asks every running loop to stop. Async-signal-safe (one atomic store).
void RequestInterrupt() noexcept;

/// Forgets a request (before new work starts).
void ClearInterrupt() noexcept;

/// A function the loops call now and then (at most every 50 ms per thread)
/// to learn whether to stop, for an embedder that can only look for pending
/// signals at such points (Python's PyErr_CheckSignals). It returns true to
/// stop; it must not throw. Null removes it.
using InterruptPoll = bool (*)();
void SetInterruptPoll(InterruptPoll poll) noexcept;

/// Whether a stop was asked for: RequestInterrupt was called, or the poll
/// hook (when its 50 ms have passed on this thread) returned true, which
/// also records the request. Cheap: an atomic load and, with a hook, a clock
/// read.
bool InterruptRequested() noexcept;

/// Throws Interrupted when InterruptRequested(). Call it only on the thread
/// that started the work, outside worker threads.
void ThrowIfInterrupted();

}  // namespace railsim
