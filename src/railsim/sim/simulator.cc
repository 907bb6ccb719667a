#include "railsim/sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <queue>

namespace railsim::sim {
namespace {

using comm::Phase;
using comm::Plan;

// Flows finishing within this relative time of the earliest finish in an
// event finish with it (float noise of equal-rate flows).
constexpr double kSameTime = 1e-9;

// One chunk of one phase: a piece of work with dependencies.
struct Task {
  int phase = 0;
  int chunk = 0;
  int chunks = 1;
  std::vector<int> dependents;
  int deps_left = 0;
  int64_t steps_done = 0;
  int64_t flows_left = 0;
  double step_start = 0;
  bool shared = false;  // another task ran during its current step
};

// A min-heap entry: a time and what happens then. `tag` is the group's
// serial (completion heap: entries of refilled groups go stale) or the timer
// kind (kTimerStart, kTimerFinish).
struct HeapEntry {
  double key;
  int32_t id;
  uint32_t tag;
  bool operator>(const HeapEntry& o) const { return key > o.key || (key == o.key && id > o.id); }
};
using MinHeap = std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<HeapEntry>>;

class Engine {
 public:
  Engine(const net::Topology& t, const Plan& plan, const SimOptions& o) : t_(t), plan_(plan), o_(o) {
    const auto& links = t.links();
    const size_t directed = 2 * links.size();
    capacity_.resize(directed);
    for (size_t l = 0; l < links.size(); ++l) {
      double eff = links[l].kind == net::LinkKind::kNvlink ? o.hb_efficiency : o.nic_efficiency;
      capacity_[2 * l] = capacity_[2 * l + 1] = links[l].capacity_Bps * eff;
    }
    topology_links_ = static_cast<int32_t>(directed);
    used_.assign(directed, 0);
    unfrozen_.assign(directed, 0);
    slot_.assign(directed, -1);
    bytes_.assign(directed, 0);
    // Forwarding at the source, NIC-leaf up and down, the switch tiers, the
    // cap link; around failures also forwarding at the destination.
    stride_ = 2 + 2 + 2 * std::max(0, t.tiers() - 1) + 1 + (o.failures ? 2 : 0);
    BuildTasks();
  }

  SimResult Run() {
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (tasks_[i].deps_left == 0) Ready(int(i));
    }
    while (true) {
      double next_flow = NextFinish();
      double next_timer = timers_.empty() ? kInf : timers_.top().key;
      if (next_flow == kInf && next_timer == kInf) break;
      if (next_timer <= next_flow) {
        HeapEntry e = timers_.top();
        timers_.pop();
        now_ = std::max(now_, e.key);
        if (e.tag == kTimerStart) {
          StartStep(e.id);
        } else {
          FinishTask(e.id);
        }
        if (pending_full_) Refill(true, 0);
        continue;
      }
      FinishFlows(next_flow);
    }
    return Result();
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr uint32_t kTimerStart = 0, kTimerFinish = 1;

  void BuildTasks() {
    std::vector<int> last_of_phase;
    for (int i = 0; i < plan_.count; ++i) {
      const Phase& p = plan_.phases[i];
      const bool pipelined = i > 0 && p.chunks > 1;
      int chunks = p.chunks;
      if (i + 1 < plan_.count && plan_.phases[i + 1].chunks > 1) chunks = plan_.phases[i + 1].chunks;
      first_task_.push_back(int(tasks_.size()));
      for (int c = 0; c < chunks; ++c) {
        Task task;
        task.phase = i;
        task.chunk = c;
        task.chunks = chunks;
        int id = int(tasks_.size());
        tasks_.push_back(task);
        auto depend = [&](int on) {
          tasks_[on].dependents.push_back(id);
          ++tasks_[id].deps_left;
        };
        if (c > 0) depend(id - 1);
        if (pipelined) {
          depend(first_task_[i - 1] + c);
        } else if (c == 0 && i > 0) {
          depend(last_of_phase.back());
        }
      }
      last_of_phase.push_back(int(tasks_.size()) - 1);
    }
    spans_.resize(plan_.count);
    for (int i = 0; i < plan_.count; ++i) {
      spans_[i].name = plan_.phases[i].name;
      spans_[i].start_s = kInf;
      spans_[i].steps = plan_.phases[i].repeat;
      spans_[i].steps_simulated = 0;
      spans_[i].flows = comm::PhaseFlowCount(plan_.phases[i], t_.gpus());
    }
  }

  // All dependencies of task `id` are met at now_: start after the phase's
  // latency (paid once, by its first chunk).
  void Ready(int id) {
    const Task& task = tasks_[id];
    double latency = task.chunk == 0 ? plan_.phases[task.phase].latency_s : 0;
    PhaseSpan& span = spans_[task.phase];
    span.start_s = std::min(span.start_s, now_);  // the phase's latency counts in its span
    timers_.push({now_ + latency, id, kTimerStart});
  }

  void StartStep(int id) {
    Task& task = tasks_[id];
    PhaseSpan& span = spans_[task.phase];
    task.step_start = now_;
    task.shared = active_tasks_ > 0;
    for (Task& other : tasks_) {
      if (other.flows_left > 0) other.shared = true;
    }
    Phase p = plan_.phases[task.phase];
    p.chunks = task.chunks;
    int64_t added = 0;
    comm::ForEachFlow(p, t_.gpus(), t_.params().hb_domain_size, [&](int64_t src, int64_t dst, double bytes) {
      if (AddFlow(src, dst, bytes, p.flow_cap_Bps, id)) {
        ++added;
      } else {
        ++unroutable_;
      }
    });
    ++span.steps_simulated;
    flows_simulated_ += added;
    task.flows_left = added;
    if (added == 0) {
      timers_.push({now_, id, kTimerFinish});
      return;
    }
    ++active_tasks_;
    pending_full_ = true;
  }

  // Adds the flow; false (and nothing added) when it has no live path.
  bool AddFlow(int64_t src, int64_t dst, double bytes, double cap_Bps, int task) {
    net::Hop hops[net::kMaxRouteHops];
    int count = src == dst ? 0 : Route(src, dst, hops);
    if (count < 0) return false;
    int32_t f;
    if (!free_.empty()) {
      f = free_.back();
      free_.pop_back();
    } else {
      f = static_cast<int32_t>(rate_.size());
      rate_.push_back(0);
      remaining_.push_back(0);
      updated_.push_back(0);
      task_.push_back(0);
      path_len_.push_back(0);
      active_.push_back(0);
      path_.resize(path_.size() + stride_);
    }
    int32_t* path = &path_[size_t(f) * stride_];
    int n = 0;
    if (src == dst) {  // up to the HB switch and back (in-switch reduction)
      const int32_t nv = t_.hb_link(src);
      path[n++] = 2 * nv;
      path[n++] = 2 * nv + 1;
    } else {
      for (int i = 0; i < count; ++i) {
        if (t_.links()[hops[i].link].kind == net::LinkKind::kPcie) continue;
        path[n++] = 2 * hops[i].link + (hops[i].upward ? 0 : 1);
      }
    }
    if (cap_Bps > 0) {  // a private link holds the flow to its cap
      path[n++] = static_cast<int32_t>(capacity_.size());
      capacity_.push_back(cap_Bps);
      used_.push_back(0);
      unfrozen_.push_back(0);
      slot_.push_back(-1);
      bytes_.push_back(0);
    }
    assert(n > 0 && n <= stride_ && "a flow crosses at least one link");
    for (int i = 0; i < n; ++i) bytes_[path[i]] += bytes;
    path_len_[f] = static_cast<uint8_t>(n);
    remaining_[f] = bytes;
    rate_[f] = 0;
    updated_[f] = now_;
    task_[f] = task;
    active_[f] = 1;
    ++active_count_;
    return true;
  }

  // The flow's hops on the graph, around the failures if there are any; -1
  // when no live path exists.
  int Route(int64_t src, int64_t dst, net::Hop* hops) const {
    if (o_.failures) return net::RouteAroundFailures(t_, *o_.failures, src, dst, o_.route, hops);
    return t_.RouteInto(src, dst, o_.route, hops);
  }

  // Earliest finish among the groups (dropping stale heap entries).
  double NextFinish() {
    while (!group_heap_.empty()) {
      const HeapEntry& e = group_heap_.top();
      if (size_t(e.id) < groups_.size() && groups_[e.id].serial == e.tag) return e.key;
      group_heap_.pop();
    }
    return kInf;
  }

  double Finish(int32_t f) const { return updated_[f] + std::max(0.0, remaining_[f]) / rate_[f]; }

  // Flows finishing at the earliest time `t` (and within kSameTime of it).
  // A group's flows share a rate and a start, so they finish in the order of
  // their remaining bytes, in which Fill() sorted them.
  void FinishFlows(double t) {
    now_ = std::max(now_, t);
    const double limit = t + kSameTime * std::max(t, 1e-12);
    double r_min = kInf;
    int64_t finished = 0;
    while (NextFinish() <= limit) {
      HeapEntry e = group_heap_.top();
      group_heap_.pop();
      Group& g = groups_[e.id];
      while (g.cursor < g.end) {
        const int32_t f = order_[g.cursor];
        if (!active_[f]) {
          ++g.cursor;
          continue;
        }
        if (Finish(f) > limit) break;
        r_min = std::min(r_min, rate_[f]);
        ++g.cursor;
        RemoveFlow(f);
        ++finished;
      }
      PushGroup(e.id);
    }
    if (finished == 0) return;
    if (pending_full_) {
      Refill(true, 0);
    } else if (active_count_ > 0) {
      Refill(false, r_min);
    }
  }

  void PushGroup(int32_t index) {
    Group& g = groups_[index];
    while (g.cursor < g.end && !active_[order_[g.cursor]]) ++g.cursor;
    if (g.cursor < g.end) group_heap_.push({Finish(order_[g.cursor]), index, g.serial});
  }

  void RemoveFlow(int32_t f) {
    const int32_t* path = &path_[size_t(f) * stride_];
    for (int i = 0; i < path_len_[f]; ++i) used_[path[i]] -= rate_[f];
    active_[f] = 0;
    --active_count_;
    free_.push_back(f);
    ++flows_done_;
    Task& task = tasks_[task_[f]];
    if (--task.flows_left == 0) StepDone(task_[f]);
    if (o_.progress && (flows_done_ & 0xFFFFF) == 0) {
      o_.progress(double(flows_done_) / double(std::max<int64_t>(1, flows_simulated_)));
    }
  }

  void StepDone(int id) {
    Task& task = tasks_[id];
    --active_tasks_;
    const Phase& p = plan_.phases[task.phase];
    ++task.steps_done;
    if (task.steps_done >= p.repeat) {
      FinishTask(id);
      return;
    }
    if (!task.shared && active_tasks_ == 0 && timers_.empty()) {
      // Alone on the network: every further step is the same flows on the
      // same paths from the same state, so it takes the same time.
      double step = now_ - task.step_start;
      AccountSkippedSteps(task, p.repeat - task.steps_done);
      task.steps_done = p.repeat;
      timers_.push({now_ + step * double(p.repeat - 1), id, kTimerFinish});
      return;
    }
    timers_.push({now_, id, kTimerStart});
  }

  // Link bytes of `steps` more steps of `task`, which are not re-injected.
  void AccountSkippedSteps(const Task& task, int64_t steps) {
    Phase p = plan_.phases[task.phase];
    p.chunks = task.chunks;
    net::Hop hops[net::kMaxRouteHops];
    comm::ForEachFlow(p, t_.gpus(), t_.params().hb_domain_size, [&](int64_t src, int64_t dst, double bytes) {
      const double b = bytes * double(steps);
      if (src == dst) {
        bytes_[2 * t_.hb_link(src)] += b;
        bytes_[2 * t_.hb_link(src) + 1] += b;
        return;
      }
      int count = std::max(0, Route(src, dst, hops));
      for (int i = 0; i < count; ++i) bytes_[2 * hops[i].link + (hops[i].upward ? 0 : 1)] += b;
    });
  }

  void FinishTask(int id) {
    Task& task = tasks_[id];
    spans_[task.phase].end_s = std::max(spans_[task.phase].end_s, now_);
    for (int d : task.dependents) {
      if (--tasks_[d].deps_left == 0) Ready(d);
    }
  }

  // Max-min fair rates by progressive filling over the flows in `refill`
  // (their rates are not in used_), starting from the state of the others.
  void Refill(bool full, double r_min) {
    ++events_;
    refill_.clear();
    if (full) {
      pending_full_ = false;
      std::fill(used_.begin(), used_.end(), 0.0);
      groups_.clear();
      order_.clear();
      for (int32_t f = 0; f < int32_t(active_.size()); ++f) {
        if (active_[f]) refill_.push_back(f);
      }
    } else {
      const double threshold = r_min * (1 - 1e-12);
      while (!groups_.empty() && groups_.back().level >= threshold) {
        const Group g = groups_.back();
        groups_.pop_back();
        for (uint32_t i = g.begin; i < g.end; ++i) {
          int32_t f = order_[i];
          if (!active_[f]) continue;
          refill_.push_back(f);
          const int32_t* path = &path_[size_t(f) * stride_];
          for (int h = 0; h < path_len_[f]; ++h) used_[path[h]] -= rate_[f];
        }
        order_.resize(g.begin);
      }
    }
    // Bytes sent so far at the old rates.
    for (int32_t f : refill_) {
      remaining_[f] -= rate_[f] * (now_ - updated_[f]);
      updated_[f] = now_;
    }
    const size_t first_new = groups_.size();
    Fill();
    for (size_t i = first_new; i < groups_.size(); ++i) {
      Group& g = groups_[i];
      auto begin = order_.begin() + g.begin, end = order_.begin() + g.end;
      auto by_remaining = [&](int32_t a, int32_t b) { return remaining_[a] < remaining_[b]; };
      if (!std::is_sorted(begin, end, by_remaining)) std::sort(begin, end, by_remaining);
      PushGroup(int32_t(i));
    }
  }

  // Flows frozen at one level by one link, in order_[begin, end); those
  // before `cursor` have finished.
  struct Group {
    double level;
    uint32_t begin, end, cursor;
    uint32_t serial;
  };

  void Fill() {
    // Count the refilled flows per link and lay out each link's list.
    touched_.clear();
    for (int32_t f : refill_) {
      const int32_t* path = &path_[size_t(f) * stride_];
      for (int h = 0; h < path_len_[f]; ++h) {
        int32_t l = path[h];
        if (slot_[l] < 0) {
          slot_[l] = int32_t(touched_.size());
          touched_.push_back(l);
        }
        ++unfrozen_[l];
      }
    }
    list_begin_.assign(touched_.size() + 1, 0);
    for (size_t i = 0; i < touched_.size(); ++i) list_begin_[i + 1] = list_begin_[i] + unfrozen_[touched_[i]];
    list_.resize(list_begin_.back());
    if (frozen_mark_.size() < rate_.size()) frozen_mark_.resize(rate_.size());
    for (int32_t f : refill_) frozen_mark_[f] = 0;
    fill_pos_.assign(list_begin_.begin(), list_begin_.end() - 1);
    for (int32_t f : refill_) {
      const int32_t* path = &path_[size_t(f) * stride_];
      for (int h = 0; h < path_len_[f]; ++h) list_[fill_pos_[slot_[path[h]]]++] = f;
    }
    std::vector<HeapEntry> heap_items;
    heap_items.reserve(touched_.size());
    for (size_t i = 0; i < touched_.size(); ++i) heap_items.push_back({Share(touched_[i]), int32_t(i), 0});
    MinHeap shares(std::greater<HeapEntry>(), std::move(heap_items));
    double level = 0;
    while (!shares.empty()) {
      HeapEntry e = shares.top();
      shares.pop();
      const int32_t l = touched_[e.id];
      if (unfrozen_[l] == 0) continue;
      double share = Share(l);
      if (share > e.key * (1 + 1e-12) + 1e-300) {  // grew since pushed: re-key
        shares.push({share, e.id, 0});
        continue;
      }
      level = std::max(level, share);
      Group g{level, uint32_t(order_.size()), 0, uint32_t(order_.size()), next_serial_++};
      for (uint32_t i = list_begin_[e.id]; i < list_begin_[e.id + 1]; ++i) {
        int32_t f = list_[i];
        if (frozen_mark_[f]) continue;
        frozen_mark_[f] = 1;
        rate_[f] = level;
        order_.push_back(f);
        const int32_t* path = &path_[size_t(f) * stride_];
        for (int h = 0; h < path_len_[f]; ++h) {
          used_[path[h]] += level;
          --unfrozen_[path[h]];
        }
      }
      g.end = uint32_t(order_.size());
      if (g.end > g.begin) groups_.push_back(g);
    }
    for (int32_t l : touched_) slot_[l] = -1;
  }

  double Share(int32_t l) const {
    return std::max(0.0, capacity_[l] - used_[l]) / double(std::max<int32_t>(1, unfrozen_[l]));
  }

  SimResult Result() {
    SimResult r;
    r.time_s = now_;
    r.flows_simulated = flows_simulated_;
    r.flows_unroutable = unroutable_;
    r.events = events_;
    for (int i = 0; i < plan_.count; ++i) {
      if (spans_[i].start_s == kInf) spans_[i].start_s = 0;
      r.flows_represented += spans_[i].flows * spans_[i].steps;
    }
    r.phases = spans_;
    const auto& links = t_.links();
    for (int32_t d = 0; d < topology_links_; ++d) {
      if (bytes_[d] <= 0) continue;
      const net::Link& link = links[d / 2];
      LinkLoad load;
      load.link = d / 2;
      load.upward = d % 2 == 0;
      load.bytes = bytes_[d];
      load.busy_s = bytes_[d] / capacity_[d];
      load.utilisation = now_ > 0 ? load.busy_s / now_ : 0;
      r.links.push_back(load);
      switch (link.kind) {
        case net::LinkKind::kNvlink: r.bytes_by_tier.nvlink += bytes_[d]; break;
        case net::LinkKind::kNicToLeaf: r.bytes_by_tier.nic_leaf += bytes_[d]; break;
        case net::LinkKind::kLeafToSpine: r.bytes_by_tier.leaf_spine += bytes_[d]; break;
        case net::LinkKind::kSpineToCore: r.bytes_by_tier.spine_core += bytes_[d]; break;
        case net::LinkKind::kPcie: break;
      }
    }
    return r;
  }

  // Bytes per directed link (topology links first, then cap links).
  std::vector<double> bytes_;
  const net::Topology& t_;
  const Plan& plan_;
  const SimOptions& o_;
  int32_t topology_links_ = 0;
  int stride_ = 0;
  std::vector<double> capacity_, used_;
  std::vector<int32_t> unfrozen_, slot_;
  // Flows (structure of arrays).
  std::vector<double> rate_, remaining_, updated_;
  std::vector<int32_t> task_, path_, free_;
  std::vector<uint8_t> path_len_, active_, frozen_mark_;
  int64_t active_count_ = 0, flows_done_ = 0, flows_simulated_ = 0, events_ = 0, unroutable_ = 0;
  // Filling state.
  std::vector<int32_t> refill_, touched_, list_, order_;
  std::vector<uint32_t> list_begin_, fill_pos_;
  std::vector<Group> groups_;
  MinHeap group_heap_, timers_;
  uint32_t next_serial_ = 0;
  bool pending_full_ = false;
  int active_tasks_ = 0;
  double now_ = 0;
  std::vector<Task> tasks_;
  std::vector<int> first_task_;
  std::vector<PhaseSpan> spans_;
};

}  // namespace

int64_t PeakFlows(const comm::Plan& plan, int64_t gpus) {
  int64_t peak = 0;
  for (int i = 0; i < plan.count; ++i) {
    int64_t n = comm::PhaseFlowCount(plan.phases[i], gpus);
    if (i > 0 && plan.phases[i].chunks > 1) n += comm::PhaseFlowCount(plan.phases[i - 1], gpus);
    peak = std::max(peak, n);
  }
  return peak;
}

SimResult Simulate(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options) {
  Engine engine(topology, plan, options);
  return engine.Run();
}

}  // namespace railsim::sim
