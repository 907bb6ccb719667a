// Simulate(): the event loop. Two kinds of event move the clock: a timer of
// the task graph (a step starts, a task finishes) and the earliest finish of
// a group of flows. Starting a step adds its flows to their islands, which
// are then refilled whole; finishing flows moves their tasks on and refills
// each of their islands from the slowest finished rate up. The pieces:
//
//   task_graph.h    tasks (chunks of phases), dependencies, timers, spans
//   flow_router.h   a flow's directed links, recomputed from its ends
//   islands.h       union-find of the links into islands that fill apart
//   link_counter.h  flows per link, on threads (workers.h), summed over ranks (ranks.h)
//   max_min_fill.h  max-min rates: fill_rounds.h, fill_lists.h
//   completions.h   when groups' flows finish, and which finish together
//   memory_estimate.h  what a simulation needs before it runs
#include "railsim/sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <vector>

#include "railsim/core/interrupt.h"
#include "railsim/sim/completions.h"
#include "railsim/sim/flow_router.h"
#include "railsim/sim/flow_store.h"
#include "railsim/sim/islands.h"
#include "railsim/sim/link_counter.h"
#include "railsim/sim/max_min_fill.h"
#include "railsim/sim/ranks.h"
#include "railsim/sim/task_graph.h"
#include "railsim/sim/workers.h"

namespace railsim::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

class Simulation {
 public:
  Simulation(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options)
      : topology_(topology),
        options_(options),
        ranks_(options.partition),
        router_(topology, options.route, options.failures),
        workers_(size_t(std::clamp(options.threads, 1, kMaxThreads)), options.parallel_min_flows),
        tasks_(plan, options.domain_use.JobGpus(topology.gpus())),
        islands_(FindIslands(plan, router_, options.domain_use)),
        counter_(router_, workers_, ranks_),
        filler_(router_, workers_, &counter_, ranks_, tasks_, options),
        completions_(&islands_.all, &counter_, &filler_, ranks_) {
    assert(uint64_t(topology.gpus()) <= Flow::kIdMask + 1 && "GPU ids fit the flow key");
    task_done_.assign(tasks_.size(), 0);
    for (Island& island : islands_.all) island.flows.Reserve(size_t(island.peak / ranks_.size() + 1));
  }

  SimResult Run() {
    tasks_.Start();
    while (true) {
      // A stop asked for by an embedder (core/interrupt.h); never under MPI,
      // where every rank must take each step together.
      ThrowIfInterrupted();
      double next_flow = completions_.NextFinish();
      ranks_.MinAll({&next_flow, 1});  // the earliest on any rank
      const double next_timer = tasks_.next_timer_s();
      if (next_flow == kInf && next_timer == kInf) break;
      if (next_timer <= next_flow) {
        const TaskGraph::Timer timer = tasks_.PopTimer();
        now_ = std::max(now_, timer.time_s);
        if (timer.kind == TaskGraph::TimerKind::kStartStep) {
          StartStep(timer.task);
        } else {
          tasks_.FinishTask(timer.task, now_);
        }
        RefillStarted();
        continue;
      }
      FinishFlows(next_flow);
    }
    return Result();
  }

 private:
  // Adds a step of task `id` (its flows with a live path, this rank's
  // share) after the live flows of their islands, which are refilled whole
  // by RefillStarted().
  void StartStep(int id) {
    tasks_.BeginStep(id, now_);
    const comm::Phase phase = tasks_.StepPhase(id);
    const int phase_index = tasks_.phase_of(id);
    const std::vector<int32_t>& joined = islands_.of_phase[size_t(phase_index)];
    std::vector<int64_t>& added = step_added_;
    added.clear();
    for (int32_t i : joined) {
      Island& island = islands_.all[size_t(i)];
      filler_.Unfreeze(island, 0, now_);
      added.push_back(int64_t(island.flows.size()));  // where the step's flows start, for now
      if (!island.pending_full) started_islands_.push_back(i);
      island.pending_full = true;
    }
    double flow_bytes = 0, other_bytes = 0;  // seen by every rank: set before the share is taken
    int64_t index = 0;
    int32_t path[net::kMaxRouteHops];
    auto add = [&](int64_t src, int64_t dst, double bytes) {
      if (index == 0) {
        flow_bytes = bytes;
      } else if (bytes != flow_bytes) {
        assert((other_bytes == 0 || other_bytes == bytes) && "a phase's flows have at most two sizes");
        other_bytes = bytes;
      }
      if ((index & 0xffff) == 0) ThrowIfInterrupted();  // a step of millions of flows takes a second
      if (!ranks_.Owns(index++)) return;
      if (router_.has_failures() && router_.PathOf(src, dst, path) < 0) {
        ++flows_unroutable_;
        return;
      }
      const int32_t island = islands_.OfFlow(phase_index, src);
      assert(std::find(joined.begin(), joined.end(), island) != joined.end() && "the step's islands are refilled");
      FlowStore& flows = islands_.all[size_t(island)].flows;
      if (flows.size() == flows.capacity()) flows.Reserve(2 * flows.capacity() + 1);
      flows.push_back({Flow::Key(src, dst, id), bytes});
    };
    comm::ForEachGraphFlow(phase, topology_.gpus(), topology_.params().hb_domain_size, options_.domain_use, add);
    std::vector<size_t>& first = step_first_;
    first.assign(added.begin(), added.end());
    for (size_t k = 0; k < joined.size(); ++k) {
      added[k] = int64_t(islands_.all[size_t(joined[k])].flows.size() - first[k]);
    }
    ranks_.SumAll(added);
    int64_t total = 0;
    for (size_t k = 0; k < joined.size(); ++k) {
      Island& island = islands_.all[size_t(joined[k])];
      // Counted on their links by the island's next fill.
      if (added[k] > 0) island.new_flows.push_back({first[k], island.flows.size(), flow_bytes, other_bytes});
      island.unfinished += added[k];
      total += added[k];
    }
    flows_simulated_ += total;
    tasks_.StepStarted(id, total, now_);
  }

  // Refills whole the islands that steps started in, in the order of their
  // index.
  void RefillStarted() {
    std::sort(started_islands_.begin(), started_islands_.end());
    for (int32_t i : started_islands_) {
      islands_.all[size_t(i)].pending_full = false;
      Refill(i, true, 0);
    }
    started_islands_.clear();
  }

  // Flows finishing at the earliest time `t`: their tasks move on, in the
  // order of the tasks' ids, then each island with finished flows is
  // refilled from the slowest of them up, or gives its memory back when
  // none of its flows are left.
  void FinishFlows(double t) {
    now_ = std::max(now_, t);
    const std::vector<Finished>& finished = completions_.FinishFlows(t);
    if (finished.empty()) return;
    FlowsDone(finished);
    for (size_t k = 0; k < finished.size();) {
      const int32_t i = finished[k].island;
      Island& island = islands_.all[size_t(i)];
      double r_min = kInf;
      for (; k < finished.size() && finished[k].island == i; ++k) {
        r_min = std::min(r_min, island.groups[finished[k].group].level);
      }
      assert(!island.pending_full && "steps start from timers, and RefillStarted() follows at once");
      if (island.unfinished > 0) {
        Refill(i, false, r_min);
      } else {
        filler_.Release(island);
      }
    }
  }

  // The finished flows' steps move on, task by task in the order of their
  // ids (so that no total depends on which rank held which flow).
  void FlowsDone(const std::vector<Finished>& finished) {
    for (const Finished& f : finished) {
      const FlowStore& flows = islands_.all[size_t(f.island)].flows;
      for (size_t i = f.begin; i < f.end; ++i) ++task_done_[size_t(flows[i].task())];
    }
    ranks_.SumAll(task_done_);
    const int64_t before = flows_done_;
    for (size_t id = 0; id < task_done_.size(); ++id) {
      const int64_t count = task_done_[id];
      if (count == 0) continue;
      task_done_[id] = 0;
      flows_done_ += count;
      const int64_t repeated = tasks_.FlowsFinished(int(id), count, now_);
      if (repeated > 0) AccountRepeatedSteps(int(id), repeated);
    }
    if (options_.progress && (before >> 20) != (flows_done_ >> 20)) {  // every 1 M flows
      options_.progress(double(flows_done_) / double(std::max<int64_t>(1, flows_simulated_)));
    }
  }

  // Link bytes of `steps` more steps of task `id`, which are repeated in
  // time without being simulated.
  void AccountRepeatedSteps(int id, int64_t steps) {
    const comm::Phase phase = tasks_.StepPhase(id);
    int32_t path[net::kMaxRouteHops];
    auto account = [&](int64_t src, int64_t dst, double bytes) {
      const int n = router_.PathOf(src, dst, path);
      for (int h = 0; h < n; ++h) filler_.AddBytes(path[h], bytes * double(steps));
    };
    comm::ForEachGraphFlow(phase, topology_.gpus(), topology_.params().hb_domain_size, options_.domain_use,
                           account);
  }

  void Refill(int32_t i, bool full, double r_min) {
    ++events_;
    const size_t first = filler_.Refill(islands_.all[size_t(i)], full, r_min, now_);
    completions_.Refilled(i, first, filler_.groups_total());
  }

  SimResult Result() {
    SimResult r;
    r.time_s = now_;
    r.flows_simulated = flows_simulated_;
    r.flows_unroutable = flows_unroutable_;
    ranks_.SumAll({&r.flows_unroutable, 1});
    r.events = events_;
    r.phases = tasks_.Spans();
    for (const PhaseSpan& span : r.phases) r.flows_represented += span.flows * span.steps;
    const std::vector<net::Link>& links = topology_.links();
    const std::vector<double>& bytes = filler_.carried_bytes();
    for (size_t d = 0; d < bytes.size(); ++d) {
      if (bytes[d] <= 0) continue;
      LinkLoad load;
      load.link = net::LinkId(d / 2);
      load.upward = d % 2 == 0;
      load.bytes = bytes[d];
      load.busy_s = bytes[d] / filler_.capacity(d);
      load.utilisation = now_ > 0 ? load.busy_s / now_ : 0;
      r.links.push_back(load);
      switch (links[d / 2].kind) {
        case net::LinkKind::kNvlink: r.bytes_by_tier.nvlink += bytes[d]; break;
        case net::LinkKind::kNicToLeaf: r.bytes_by_tier.nic_leaf += bytes[d]; break;
        case net::LinkKind::kLeafToSpine: r.bytes_by_tier.leaf_spine += bytes[d]; break;
        case net::LinkKind::kSpineToCore: r.bytes_by_tier.spine_core += bytes[d]; break;
        case net::LinkKind::kPcie: break;
      }
    }
    return r;
  }

  // Fixed for the simulation: the inputs, how the work is split, and the
  // plan's tasks and islands (the islands' flows and groups change).
  const net::Topology& topology_;
  const SimOptions& options_;
  const Ranks ranks_;
  const FlowRouter router_;
  const Workers workers_;
  TaskGraph tasks_;
  Islands islands_;

  // The parts that count flows on links, fill rates and finish flows; they
  // hold references to the members above.
  LinkCounter counter_;
  MaxMinFiller filler_;
  Completions completions_;

  // The clock, and the totals for the result.
  double now_ = 0;
  int64_t flows_simulated_ = 0;   // over all ranks
  int64_t flows_done_ = 0;        // over all ranks
  int64_t flows_unroutable_ = 0;  // this rank's
  int64_t events_ = 0;            // refills of one island each (alike on every rank)

  // Scratch, kept between events.
  std::vector<int32_t> started_islands_;  // islands that steps started in since the last refill
  std::vector<int64_t> step_added_;       // StartStep(): per island, where its flows start, then how many
  std::vector<size_t> step_first_;        // StartStep(): per island, where its flows start
  std::vector<int64_t> task_done_;        // FlowsDone(): per task, its flows finished in this event
};

}  // namespace

SimResult Simulate(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options) {
  Simulation simulation(topology, plan, options);
  return simulation.Run();
}

}  // namespace railsim::sim
