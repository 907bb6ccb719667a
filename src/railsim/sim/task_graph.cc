#include "railsim/sim/task_graph.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include "railsim/sim/flow_store.h"

namespace railsim::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TaskGraph::TaskGraph(const comm::Plan& plan, int64_t gpus) : plan_(plan) {
  std::vector<int> first_of_phase, last_of_phase;
  for (int i = 0; i < plan.count; ++i) {
    const comm::Phase& p = plan.phases[i];
    const bool pipelined = i > 0 && p.chunks > 1;
    int chunks = p.chunks;
    if (i + 1 < plan.count && plan.phases[i + 1].chunks > 1) chunks = plan.phases[i + 1].chunks;
    first_of_phase.push_back(int(tasks_.size()));
    for (int c = 0; c < chunks; ++c) {
      Task task;
      task.phase = i;
      task.chunk = c;
      task.chunks = chunks;
      const int id = int(tasks_.size());
      tasks_.push_back(task);
      flow_cap_.push_back(p.flow_cap_Bps);
      auto depend = [&](int on) {
        tasks_[size_t(on)].dependents.push_back(id);
        ++tasks_[size_t(id)].deps_left;
      };
      if (c > 0) depend(id - 1);
      if (pipelined) {
        depend(first_of_phase[size_t(i - 1)] + c);
      } else if (c == 0 && i > 0) {
        depend(last_of_phase.back());
      }
    }
    last_of_phase.push_back(int(tasks_.size()) - 1);
    if (p.flow_cap_Bps > 0) distinct_caps_.push_back(p.flow_cap_Bps);
  }
  assert(int64_t(tasks_.size()) <= Flow::kMaxTasks && "task ids fit the flow key");
  std::sort(distinct_caps_.begin(), distinct_caps_.end());
  distinct_caps_.erase(std::unique(distinct_caps_.begin(), distinct_caps_.end()), distinct_caps_.end());
  spans_.resize(size_t(plan.count));
  for (int i = 0; i < plan.count; ++i) {
    PhaseSpan& span = spans_[size_t(i)];
    span.name = plan.phases[i].name;
    span.start_s = kInf;
    span.steps = plan.phases[i].repeat;
    span.steps_simulated = 0;
    span.flows = comm::PhaseFlowCount(plan.phases[i], gpus);
  }
}

void TaskGraph::Start() {
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].deps_left == 0) Ready(int(i), 0);
  }
}

double TaskGraph::next_timer_s() const { return timers_.empty() ? kInf : timers_.top().time_s; }

TaskGraph::Timer TaskGraph::PopTimer() {
  const Timer timer = timers_.top();
  timers_.pop();
  return timer;
}

void TaskGraph::Ready(int id, double now) {
  const Task& task = tasks_[size_t(id)];
  const double latency = task.chunk == 0 ? plan_.phases[task.phase].latency_s : 0;
  PhaseSpan& span = spans_[size_t(task.phase)];
  span.start_s = std::min(span.start_s, now);  // the phase's latency counts in its span
  timers_.push({now + latency, id, TimerKind::kStartStep});
}

comm::Phase TaskGraph::StepPhase(int id) const {
  const Task& task = tasks_[size_t(id)];
  comm::Phase phase = plan_.phases[task.phase];
  phase.chunks = task.chunks;
  return phase;
}

void TaskGraph::BeginStep(int id, double now) {
  Task& task = tasks_[size_t(id)];
  task.step_start_s = now;
  task.shared = active_tasks_ > 0;
  for (Task& other : tasks_) {
    if (other.flows_left > 0) other.shared = true;
  }
}

void TaskGraph::StepStarted(int id, int64_t flows, double now) {
  Task& task = tasks_[size_t(id)];
  ++spans_[size_t(task.phase)].steps_simulated;
  task.flows_left = flows;
  if (flows == 0) {
    timers_.push({now, id, TimerKind::kFinishTask});
    return;
  }
  ++active_tasks_;
}

int64_t TaskGraph::FlowsFinished(int id, int64_t count, double now) {
  Task& task = tasks_[size_t(id)];
  task.flows_left -= count;
  assert(task.flows_left >= 0 && "a step's flows finish once");
  if (task.flows_left > 0) return 0;
  --active_tasks_;
  const int64_t repeat = plan_.phases[task.phase].repeat;
  ++task.steps_done;
  if (task.steps_done >= repeat) {
    FinishTask(id, now);
    return 0;
  }
  if (!task.shared && active_tasks_ == 0 && timers_.empty()) {
    // Alone on the network: every further step is the same flows on the
    // same paths from the same state, so it takes the same time.
    const double step = now - task.step_start_s;
    const int64_t repeated = repeat - task.steps_done;
    task.steps_done = repeat;
    timers_.push({now + step * double(repeat - 1), id, TimerKind::kFinishTask});
    return repeated;
  }
  timers_.push({now, id, TimerKind::kStartStep});
  return 0;
}

void TaskGraph::FinishTask(int id, double now) {
  const Task& task = tasks_[size_t(id)];
  PhaseSpan& span = spans_[size_t(task.phase)];
  span.end_s = std::max(span.end_s, now);
  for (int d : task.dependents) {
    if (--tasks_[size_t(d)].deps_left == 0) Ready(d, now);
  }
}

std::vector<PhaseSpan> TaskGraph::Spans() const {
  std::vector<PhaseSpan> spans = spans_;
  for (PhaseSpan& span : spans) {
    if (span.start_s == kInf) span.start_s = 0;
  }
  return spans;
}

}  // namespace railsim::sim
