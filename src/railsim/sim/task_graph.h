// TaskGraph: a plan's phases as tasks, their dependencies, and the timers
// that start and finish them.
//
// A task is one chunk of one phase; it runs the phase's `repeat` steps one
// after another, each a set of flows that all finish before the next step
// starts. Chunk c of a phase depends on its chunk c - 1 and, when the phase
// is pipelined with the one before (chunks > 1), on that phase's chunk c;
// otherwise its first chunk depends on the previous phase's last. A task
// starts the phase's latency after its dependencies are met (paid once, by
// the first chunk).
//
// One exact shortcut: a step that ends while nothing else ran beside it and
// nothing else waits (a ring's 2 (n - 1) steps) will run the same flows on
// the same paths from the same state, so the task's further steps are not
// simulated but repeated in time (FlowsFinished() says how many).
//
// Timers fire in the order of their time, then of their task. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "railsim/comm/plan.h"
#include "railsim/sim/simulator.h"

namespace railsim::sim {

class TaskGraph {
 public:
  enum class TimerKind : uint8_t { kStartStep, kFinishTask };
  struct Timer {
    double time_s;
    int32_t task;
    TimerKind kind;
  };

  /// The tasks of `plan` on `gpus` GPUs. Requires fewer than
  /// Flow::kMaxTasks tasks.
  TaskGraph(const comm::Plan& plan, int64_t gpus);

  size_t size() const { return tasks_.size(); }
  /// The index of the phase task `id` is a chunk of.
  int phase_of(int id) const { return tasks_[size_t(id)].phase; }
  /// What a step of task `id` runs: its phase, with the task's number of
  /// chunks (the phase's own, or the next phase's when that one is
  /// pipelined with it).
  comm::Phase StepPhase(int id) const;
  /// Per task: its phase's flow cap in bytes/s (0: none).
  const std::vector<double>& flow_caps() const { return flow_cap_; }
  /// The distinct nonzero flow caps, ascending.
  const std::vector<double>& distinct_caps() const { return distinct_caps_; }

  /// Readies every task with no dependencies at time 0.
  void Start();

  /// The earliest timer's time; +inf when none is set.
  double next_timer_s() const;
  /// Removes and returns the earliest timer. Requires one.
  Timer PopTimer();

  /// A step of task `id` starts at `now`; flows still running become shared
  /// with it.
  void BeginStep(int id, double now);
  /// The step begun last for task `id` holds `flows` flows over all ranks;
  /// with none it ends at once (a finish timer at `now`).
  void StepStarted(int id, int64_t flows, double now);

  /// `count` more flows of task `id`'s step finished at `now` (over all
  /// ranks). When they end the step, the next step starts at `now`, or the
  /// task finishes after its last. Returns the number of steps repeated in
  /// time without being simulated (see above), whose bytes the caller
  /// accounts; 0 otherwise.
  int64_t FlowsFinished(int id, int64_t count, double now);

  /// Task `id` is done at `now`: its phase's span ends no earlier, and its
  /// dependents whose dependencies are all met are readied.
  void FinishTask(int id, double now);

  /// Per phase: its span (start 0 for a phase that never started), and
  /// steps and flows as run and as simulated.
  std::vector<PhaseSpan> Spans() const;

 private:
  struct Task {
    int phase = 0;
    int chunk = 0;
    int chunks = 1;
    std::vector<int> dependents;
    int deps_left = 0;
    int64_t steps_done = 0;
    int64_t flows_left = 0;   // of its current step, over all ranks
    double step_start_s = 0;
    bool shared = false;      // another task ran during its current step
  };
  // Ordered by time, then task (the greater first in a max-heap).
  struct TimerAfter {
    bool operator()(const Timer& a, const Timer& b) const {
      return a.time_s > b.time_s || (a.time_s == b.time_s && a.task > b.task);
    }
  };

  // All dependencies of task `id` are met at `now`: it starts after its
  // phase's latency.
  void Ready(int id, double now);

  // Fixed by the plan.
  const comm::Plan& plan_;
  std::vector<Task> tasks_;
  std::vector<double> flow_cap_;       // per task: its phase's flow cap (0: none)
  std::vector<double> distinct_caps_;  // the distinct nonzero caps, ascending

  // Changing as the simulation runs.
  std::priority_queue<Timer, std::vector<Timer>, TimerAfter> timers_;
  int active_tasks_ = 0;               // tasks with a step's flows running
  std::vector<PhaseSpan> spans_;       // per phase
};

}  // namespace railsim::sim
