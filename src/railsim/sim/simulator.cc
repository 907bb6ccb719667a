#include "railsim/sim/simulator.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>
#include <span>
#include <thread>

#include "railsim/core/interrupt.h"
#include "railsim/sim/flow_store.h"

namespace railsim::sim {
namespace {

using comm::Phase;
using comm::Plan;

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  int32_t island = 0;  // completion heap: the group's island
  bool operator>(const HeapEntry& o) const {
    return key > o.key || (key == o.key && (island > o.island || (island == o.island && id > o.id)));
  }
};
using MinHeap = std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<HeapEntry>>;

// Flows frozen at one rate in one filling round: flows[begin, end) of an
// island, sorted by bytes left; those before `cursor` have finished.
struct Group {
  double level;
  double updated_s;  // when the flows' bytes left were last brought up to date
  size_t begin, end, cursor;
  uint32_t serial;
};

// Flows added by a step since the last fill: flows[begin, end), of
// `bytes_per_flow` each, or of `other_bytes` (when > 0) for some (NCCL's
// tree carries twice the bytes on its chains).
struct NewFlows {
  size_t begin, end;
  double bytes_per_flow;
  double other_bytes = 0;
};

// A range of one island's flows: flows[begin, end) of islands_[island].
struct Range {
  int32_t island;
  size_t begin, end;
};

// The directed links that the plan's flows join into one piece: no flow
// crosses a link of two islands. Max-min fairness is separate on each, so
// flows starting or finishing in one island leave the others' rates alone,
// and each island fills on its own (a Rail-only network's rails; each HB
// domain's NVLink links).
struct Island {
  FlowStore flows;                 // in the order of its groups, then the unfrozen ones
  std::vector<Group> groups;
  std::vector<double> level_max;   // per group: the highest level up to it
  std::vector<NewFlows> new_flows;
  std::vector<int32_t> links;      // its directed links, ascending
  int64_t peak = 0;                // flows alive at once (over all ranks)
  int64_t unfinished = 0;          // flows started and not finished (over all ranks)
  bool pending_full = false;       // flows started: refill the whole island
};

// One thread's scratch for a pass over flows: per-link counts (zero outside
// `links`), the smallest flow share seen per link (+inf outside the pass),
// per-bucket counts. Merged in a fixed way (integer sums, minima), so the
// result does not depend on how the flows were split.
struct Worker {
  std::vector<int64_t> count;
  std::vector<int32_t> links;
  std::vector<double> least;
  std::vector<int64_t> buckets;
  double cap_min = kInf;
};

class Engine {
 public:
  Engine(const net::Topology& t, const Plan& plan, const SimOptions& o)
      : t_(t), plan_(plan), o_(o), part_(o.partition && o.partition->size() > 1 ? o.partition : nullptr) {
    const auto& links = t.links();
    const size_t directed = 2 * links.size();
    capacity_.resize(directed);
    skip_.resize(links.size());
    for (size_t l = 0; l < links.size(); ++l) {
      double eff = links[l].kind == net::LinkKind::kNvlink ? o.hb_efficiency : o.nic_efficiency;
      capacity_[2 * l] = capacity_[2 * l + 1] = links[l].capacity_Bps * eff;
      skip_[l] = links[l].kind == net::LinkKind::kPcie;
    }
    used_.assign(directed, 0);
    unfrozen_.assign(directed, 0);
    count_.assign(directed, 0);
    share_.assign(directed, kInf);
    least_.assign(directed, kInf);
    freeze_.assign(directed, 0);
    slot_.assign(directed, -1);
    bytes_.assign(directed, 0);
    workers_.resize(std::clamp(o.threads, 1, kMaxThreads));
    for (Worker& w : workers_) {
      w.count.assign(directed, 0);
      w.least.assign(directed, kInf);
    }
    assert(uint64_t(t.gpus()) <= Flow::kIdMask + 1 && "GPU ids fit the flow key");
    BuildTasks();
    task_done_.assign(tasks_.size(), 0);
    FindIslands();
    for (Island& island : islands_) island.flows.Reserve(size_t(island.peak / ranks() + 1));
  }

  SimResult Run() {
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (tasks_[i].deps_left == 0) Ready(int(i));
    }
    while (true) {
      // A stop asked for by an embedder (core/interrupt.h); never under MPI,
      // where every rank must take each step together.
      ThrowIfInterrupted();
      double next_flow = NextFinish();
      MinAll({&next_flow, 1});  // the earliest on any rank
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
        RefillStarted();
        continue;
      }
      FinishFlows(next_flow);
    }
    return Result();
  }

 private:
  static constexpr uint32_t kTimerStart = 0, kTimerFinish = 1;

  // The partition's collectives; nothing to do in one process.
  int ranks() const { return part_ ? part_->size() : 1; }
  void SumAll(std::span<int64_t> values) {
    if (part_) part_->SumInt64(values);
  }
  void MinAll(std::span<double> values) {
    if (part_) part_->MinDouble(values);
  }
  // Whether this rank owns the `index`-th flow a step generates.
  bool Owns(int64_t index) const { return !part_ || index % part_->size() == part_->rank(); }

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
        cap_.push_back(p.flow_cap_Bps);
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
      if (p.flow_cap_Bps > 0) caps_.push_back(p.flow_cap_Bps);
    }
    assert(int64_t(tasks_.size()) <= Flow::kMaxTasks && "task ids fit the flow key");
    std::sort(caps_.begin(), caps_.end());
    caps_.erase(std::unique(caps_.begin(), caps_.end()), caps_.end());
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

  // Adds the step's flows (those with a live path) after the live ones of
  // their islands, which are then refilled whole (RefillStarted).
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
    const std::vector<int32_t>& joined = phase_islands_[task.phase];
    std::vector<int64_t>& added = step_added_;
    added.clear();
    for (int32_t i : joined) {
      Use(i);
      Unfreeze(0);
      added.push_back(int64_t(is_->flows.size()));  // where the step's flows start, for now
      if (!is_->pending_full) pending_.push_back(i);
      is_->pending_full = true;
    }
    double flow_bytes = 0, other_bytes = 0;  // seen by every rank: set before the share is taken
    int64_t index = 0;
    int32_t path[net::kMaxRouteHops];
    const std::vector<int32_t>& island_of_source = source_island_[size_t(task.phase)];
    comm::ForEachFlow(p, t_.gpus(), t_.params().hb_domain_size, [&](int64_t src, int64_t dst, double bytes) {
      if (index == 0) {
        flow_bytes = bytes;
      } else if (bytes != flow_bytes) {
        assert((other_bytes == 0 || other_bytes == bytes) && "a phase's flows have at most two sizes");
        other_bytes = bytes;
      }
      if ((index & 0xffff) == 0) ThrowIfInterrupted();  // a step of millions of flows takes a second
      if (!Owns(index++)) return;
      if (o_.failures && PathOf(src, dst, path) < 0) {
        ++unroutable_;
        return;
      }
      const int32_t island = island_of_source.empty() ? 0 : island_of_source[size_t(src)];
      assert(std::find(joined.begin(), joined.end(), island) != joined.end() && "the step's islands are refilled");
      FlowStore& flows = islands_[size_t(island)].flows;
      if (flows.size() == flows.capacity()) flows.Reserve(2 * flows.capacity() + 1);
      flows.push_back({Flow::Key(src, dst, id), bytes});
    });
    std::vector<size_t>& first = step_first_;
    first.assign(added.begin(), added.end());
    for (size_t k = 0; k < joined.size(); ++k) added[k] = int64_t(islands_[joined[k]].flows.size() - first[k]);
    SumAll(added);
    int64_t total = 0;
    for (size_t k = 0; k < joined.size(); ++k) {
      Island& island = islands_[joined[k]];
      // Counted by the island's next Fill().
      if (added[k] > 0) island.new_flows.push_back({first[k], island.flows.size(), flow_bytes, other_bytes});
      island.unfinished += added[k];
      total += added[k];
    }
    ++span.steps_simulated;
    flows_simulated_ += total;
    task.flows_left = total;
    if (total == 0) {
      timers_.push({now_, id, kTimerFinish});
      return;
    }
    ++active_tasks_;
  }

  // Refills whole the islands that steps started in, in the order of their
  // index.
  void RefillStarted() {
    std::sort(pending_.begin(), pending_.end());
    for (int32_t i : pending_) {
      Use(i);
      is_->pending_full = false;
      Refill(true, 0);
    }
    pending_.clear();
  }

  // Makes island `i` the one that the fills and groups below work on.
  void Use(int32_t i) {
    island_ = i;
    is_ = &islands_[i];
  }

  // Joins the directed links that a flow of the plan crosses together into
  // islands_ (union-find over every path), numbered in the order of their
  // least link, and counts each phase's flows per island for the islands'
  // peaks. A phase's flows from one source are joined into one island too,
  // so that a step finds a flow's island from its source without routing it
  // (this merges islands only where a source sends over NVLink and its NIC
  // in one phase, unforwarded: a cost in speed, never in exactness). The pass
  // costs one route per distinct flow (a phase's chunks and steps repeat the
  // same flows), so it runs where islands are likely to pay: on Rail-only
  // networks, whose rails share no switch, and in plans of several phases
  // (HB and NIC phases never share a link). A single phase on a network
  // whose rails share switches is taken as one island, which is exact and
  // usually true (a phase inside domains or along rails would gain).
  void FindIslands() {
    const size_t directed = capacity_.size();
    phase_islands_.assign(size_t(plan_.count), {});
    source_island_.assign(size_t(plan_.count), {});
    if (t_.params().design != net::Design::kRailOnly && plan_.count <= 1) {
      islands_ = std::vector<Island>(1);
      islands_[0].links.resize(directed);
      std::iota(islands_[0].links.begin(), islands_[0].links.end(), 0);
      islands_[0].peak = PeakFlows(plan_, t_.gpus());
      island_of_.assign(directed, 0);
      for (std::vector<int32_t>& joined : phase_islands_) joined = {0};
      Use(0);
      return;
    }
    std::vector<int32_t> parent(directed);
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](int32_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    auto join = [&](int32_t x, int32_t y) {
      const int32_t a = root(x), b = root(y);
      if (a != b) parent[size_t(std::max(a, b))] = std::min(a, b);
    };
    std::vector<uint8_t> crossed(directed, 0);
    // Per phase and directed link: the phase's flows whose path starts there.
    std::vector<std::vector<int64_t>> starts(size_t(plan_.count), std::vector<int64_t>(directed, 0));
    int32_t path[net::kMaxRouteHops];
    for (int i = 0; i < plan_.count; ++i) {
      std::vector<int32_t>& first_link = source_island_[size_t(i)];  // per source: a link of its flows, for now
      first_link.assign(size_t(t_.gpus()), -1);
      comm::ForEachFlow(plan_.phases[i], t_.gpus(), t_.params().hb_domain_size, [&](int64_t src, int64_t dst, double) {
        const int n = PathOf(src, dst, path);
        if (n <= 0) return;  // no live path around the failures
        ++starts[size_t(i)][size_t(path[0])];
        int32_t& first = first_link[size_t(src)];
        if (first < 0) first = path[0];
        join(first, path[0]);
        for (int h = 0; h < n; ++h) {
          crossed[size_t(path[h])] = 1;
          join(path[0], path[h]);
        }
      });
    }
    std::vector<int32_t> number(directed, -1);
    island_of_.assign(directed, -1);
    int32_t count = 0;
    for (size_t l = 0; l < directed; ++l) {
      if (!crossed[l]) continue;
      int32_t& n = number[size_t(root(int32_t(l)))];
      if (n < 0) n = count++;
      island_of_[l] = n;
    }
    islands_ = std::vector<Island>(size_t(std::max(count, 1)));
    for (size_t l = 0; l < directed; ++l) {
      if (island_of_[l] >= 0) islands_[size_t(island_of_[l])].links.push_back(int32_t(l));
    }
    for (std::vector<int32_t>& island_of_source : source_island_) {
      for (int32_t& link : island_of_source) link = link < 0 ? 0 : island_of_[size_t(link)];
    }
    std::vector<std::vector<int64_t>> flows(size_t(plan_.count), std::vector<int64_t>(islands_.size(), 0));
    for (size_t i = 0; i < flows.size(); ++i) {
      for (size_t l = 0; l < directed; ++l) {
        if (starts[i][l] > 0) flows[i][size_t(island_of_[l])] += starts[i][l];
      }
      for (size_t k = 0; k < islands_.size(); ++k) {
        if (flows[i][k] == 0) continue;
        phase_islands_[i].push_back(int32_t(k));
        const bool pipelined = i > 0 && plan_.phases[i].chunks > 1;
        islands_[k].peak = std::max(islands_[k].peak, flows[i][k] + (pipelined ? flows[i - 1][k] : 0));
      }
    }
    Use(0);
  }

  // The flow's directed links (PCIe left out), around the failures if there
  // are any; -1 when no live path exists. `out` has room for kMaxRouteHops.
  int PathOf(int64_t src, int64_t dst, int32_t* out) const {
    if (src == dst) {  // up to the HB switch and back (in-switch reduction)
      const int32_t nv = t_.hb_link(src);
      out[0] = 2 * nv;
      out[1] = 2 * nv + 1;
      return 2;
    }
    net::Hop hops[net::kMaxRouteHops];
    int count = Route(src, dst, hops);
    int n = 0;
    for (int i = 0; i < count; ++i) {
      if (!skip_[hops[i].link]) out[n++] = 2 * hops[i].link + (hops[i].upward ? 0 : 1);
    }
    return count < 0 ? -1 : n;
  }
  int PathOf(const Flow& f, int32_t* out) const {
    int n = PathOf(f.src(), f.dst(), out);
    assert(n > 0 && "stored flows have a live path");
    return n;
  }

  // The flow's hops on the graph, around the failures if there are any; -1
  // when no live path exists.
  int Route(int64_t src, int64_t dst, net::Hop* hops) const {
    if (o_.failures) return net::RouteAroundFailures(t_, *o_.failures, src, dst, o_.route, hops);
    return t_.RouteInto(src, dst, o_.route, hops);
  }

  // Runs fn(worker, begin, end) over [begin, end) split among the workers
  // (one piece on this thread when the range is small).
  template <typename Fn>
  void ParallelFor(size_t begin, size_t end, Fn&& fn) {
    const size_t n = end - begin, w = n < size_t(std::max<int64_t>(1, o_.parallel_min_flows)) ? 1 : workers_.size();
    if (w == 1) {
      fn(workers_[0], begin, end);
      return;
    }
    std::vector<std::thread> pool;
    for (size_t k = 1; k < w; ++k) {
      pool.emplace_back([&, k] { fn(workers_[k], begin + n * k / w, begin + n * (k + 1) / w); });
    }
    fn(workers_[0], begin, begin + n / w);
    for (std::thread& th : pool) th.join();
  }

  // Counts, per directed link, the flows of the island's flows[begin, end)
  // (with `only_bytes` > 0, those with that many bytes left) that cross it:
  // count_[l] for the links in counted_ (read them with TakeCount). Over
  // ranks, every rank's range counts, and counted_ is in link order.
  void CountLinks(size_t begin, size_t end, double only_bytes = 0) {
    CountLocal(is_->flows.data(), begin, end, only_bytes);
    if (part_) {
      std::vector<int64_t>& counts = reduce_counts_;
      counts.clear();
      for (int32_t l : is_->links) counts.push_back(count_[l]);
      SumAll(counts);
      counted_.clear();
      for (size_t k = 0; k < counts.size(); ++k) {
        const int32_t l = is_->links[k];
        count_[l] = counts[k];
        if (counts[k] != 0) counted_.push_back(l);
      }
    }
  }

  // Flows of a batch of items (groups, or buckets about to become groups):
  // item k is this rank's flows[ranges[k].begin, ranges[k].end) of island
  // ranges[k].island. Calls apply(k, link, count) for every link the item's
  // flows cross on any rank, with their count over the ranks, by item (links
  // of one item in any order). Over ranks, the batch takes one collective.
  template <typename Apply>
  void CountBatch(const std::vector<Range>& ranges, Apply apply) {
    if (!part_) {
      for (size_t k = 0; k < ranges.size(); ++k) {
        CountLocal(islands_[ranges[k].island].flows.data(), ranges[k].begin, ranges[k].end);
        for (int32_t l : counted_) apply(k, l, TakeCount(l));
      }
      return;
    }
    // (item << 32 | link, count) pairs from every rank, summed by key.
    std::vector<int64_t>& mine = batch_mine_;
    mine.clear();
    for (size_t k = 0; k < ranges.size(); ++k) {
      CountLocal(islands_[ranges[k].island].flows.data(), ranges[k].begin, ranges[k].end);
      for (int32_t l : counted_) {
        mine.push_back(int64_t(k) << 32 | l);
        mine.push_back(TakeCount(l));
      }
    }
    assert(ranges.size() < (size_t{1} << 31) && "item ids fit the key");
    std::vector<int64_t> all;
    part_->GatherInt64(mine, &all);
    std::vector<std::pair<int64_t, int64_t>>& pairs = batch_pairs_;
    pairs.clear();
    for (size_t i = 0; i < all.size(); i += 2) pairs.push_back({all[i], all[i + 1]});
    std::sort(pairs.begin(), pairs.end());
    for (size_t i = 0; i < pairs.size();) {
      int64_t c = 0;
      size_t j = i;
      for (; j < pairs.size() && pairs[j].first == pairs[i].first; ++j) c += pairs[j].second;
      apply(size_t(pairs[i].first >> 32), int32_t(pairs[i].first & 0xFFFFFFFF), c);
      i = j;
    }
  }

  // CountLinks() of this rank's flows[begin, end) alone (with `only_bytes`
  // > 0, of those with that many bytes left alone).
  void CountLocal(const Flow* flows, size_t begin, size_t end, double only_bytes = 0) {
    ParallelFor(begin, end, [&](Worker& w, size_t b, size_t e) {
      int32_t path[net::kMaxRouteHops];
      for (size_t i = b; i < e; ++i) {
        // A pass over millions of flows takes a second: stop it at a stop
        // request (the counts are then thrown away below).
        if ((i & 0xffff) == 0 && InterruptRequested()) break;
        if (only_bytes > 0 && flows[i].remaining_bytes != only_bytes) continue;
        const int n = PathOf(flows[i], path);
        for (int h = 0; h < n; ++h) {
          if (w.count[path[h]]++ == 0) w.links.push_back(path[h]);
        }
      }
    });
    ThrowIfInterrupted();
    counted_.clear();
    for (Worker& w : workers_) {
      for (int32_t l : w.links) {
        if (count_[l] == 0) counted_.push_back(l);
        count_[l] += w.count[l];
        w.count[l] = 0;
      }
      w.links.clear();
    }
  }
  int64_t TakeCount(int32_t l) {
    const int64_t c = count_[l];
    count_[l] = 0;
    return c;
  }

  // Earliest finish among the groups (dropping stale heap entries).
  double NextFinish() {
    while (!group_heap_.empty()) {
      const HeapEntry& e = group_heap_.top();
      const std::vector<Group>& groups = islands_[size_t(e.island)].groups;
      if (size_t(e.id) < groups.size() && groups[size_t(e.id)].serial == e.tag) return e.key;
      group_heap_.pop();
    }
    return kInf;
  }

  static double Finish(const Group& g, const Flow& f) {
    return g.updated_s + std::max(0.0, f.remaining_bytes) / g.level;
  }

  // Flows finishing at the earliest time `t` (and within kSameTime of it).
  // A group's flows share a rate and an update time, so they finish in the
  // order of their bytes left, in which Fill() sorted them. The finished
  // groups leave their links in the order of (island, index), and the tasks
  // move on in the order of theirs, so the totals do not depend on which
  // rank holds which flows. Then each island with finished flows is
  // refilled from the slowest of them up.
  void FinishFlows(double t) {
    now_ = std::max(now_, t);
    const double limit = t + kSameTime * std::max(t, 1e-12);
    finished_.clear();
    while (NextFinish() <= limit) {
      HeapEntry e = group_heap_.top();
      group_heap_.pop();
      Island& island = islands_[size_t(e.island)];
      Group& g = island.groups[size_t(e.id)];
      const size_t begin = g.cursor;
      while (g.cursor < g.end && Finish(g, island.flows[g.cursor]) <= limit) ++g.cursor;
      if (g.cursor > begin) finished_.push_back({e.island, size_t(e.id), begin, g.cursor, int64_t(g.cursor - begin)});
      PushGroup(e.island, size_t(e.id));
    }
    std::sort(finished_.begin(), finished_.end(), [](const Finished& a, const Finished& b) {
      return a.island < b.island || (a.island == b.island && a.group < b.group);
    });
    if (part_) MergeFinished();
    if (finished_.empty()) return;
    for (const Finished& f : finished_) islands_[size_t(f.island)].unfinished -= f.count;
    // The finished flows leave their links, unless none stay live in their
    // island: its next fill is then a full one, which starts from empty links.
    std::vector<Range>& ranges = batch_ranges_;
    ranges.clear();
    std::vector<const Finished*>& items = batch_finished_;
    items.clear();
    for (const Finished& f : finished_) {
      if (islands_[size_t(f.island)].unfinished == 0) continue;
      ranges.push_back({f.island, f.begin, f.end});
      items.push_back(&f);
    }
    CountBatch(ranges, [&](size_t k, int32_t l, int64_t c) {
      used_[l] -= double(c) * islands_[size_t(items[k]->island)].groups[items[k]->group].level;
    });
    FlowsDone();
    for (size_t k = 0; k < finished_.size();) {
      const int32_t i = finished_[k].island;
      double r_min = kInf;
      for (; k < finished_.size() && finished_[k].island == i; ++k) {
        r_min = std::min(r_min, islands_[size_t(i)].groups[finished_[k].group].level);
      }
      Use(i);
      assert(!is_->pending_full && "steps start from timers, and RefillStarted() follows at once");
      if (is_->unfinished > 0) {
        Refill(false, r_min);
      } else {
        Drain();
      }
    }
  }

  // The island's flows have all finished: its groups go and its flows'
  // memory goes back (islands take turns: the HB phase's, then the NIC
  // phase's). Its links are zeroed when a step joins it again.
  void Drain() {
    groups_total_ -= is_->groups.size();
    is_->groups.clear();
    is_->level_max.clear();
    is_->flows.Release();
  }

  // Over ranks: finished_ becomes every group with flows finished on any
  // rank, by (island, index), with their count over the ranks and this
  // rank's range (empty where it has none). Groups are numbered across the
  // islands, which every rank holds alike, for one collective.
  void MergeFinished() {
    std::vector<size_t>& base = group_base_;
    base.assign(islands_.size() + 1, 0);
    for (size_t i = 0; i < islands_.size(); ++i) base[i + 1] = base[i] + islands_[i].groups.size();
    auto number = [&](const Finished& f) { return base[size_t(f.island)] + f.group; };
    double window[2] = {kInf, kInf};  // the least group number, and minus the greatest
    if (!finished_.empty()) {
      window[0] = double(number(finished_.front()));
      window[1] = -double(number(finished_.back()));
    }
    MinAll(window);
    if (window[0] == kInf) return;
    const size_t lo = size_t(window[0]), hi = size_t(-window[1]);
    std::vector<int64_t>& counts = merge_counts_;
    counts.assign(hi - lo + 1, 0);
    for (const Finished& f : finished_) counts[number(f) - lo] = f.count;
    SumAll(counts);
    std::vector<Finished> merged;
    size_t mine = 0;
    for (size_t n = 0; n < counts.size(); ++n) {
      if (counts[n] == 0) continue;
      const size_t island = size_t(std::upper_bound(base.begin(), base.end(), lo + n) - base.begin()) - 1;
      Finished f{int32_t(island), lo + n - base[island], 0, 0, counts[n]};
      if (mine < finished_.size() && number(finished_[mine]) == lo + n) {
        f.begin = finished_[mine].begin;
        f.end = finished_[mine].end;
        ++mine;
      }
      merged.push_back(f);
    }
    finished_.swap(merged);
  }

  void PushGroup(int32_t island, size_t index) {
    const Island& is = islands_[size_t(island)];
    const Group& g = is.groups[index];
    if (g.cursor < g.end) group_heap_.push({Finish(g, is.flows[g.cursor]), int32_t(index), g.serial, island});
  }

  // The flows of finished_ are done: their tasks' steps move on, in the
  // order of the tasks' ids.
  void FlowsDone() {
    for (const Finished& f : finished_) {
      const FlowStore& flows = islands_[size_t(f.island)].flows;
      for (size_t i = f.begin; i < f.end; ++i) ++task_done_[flows[i].task()];
    }
    SumAll(task_done_);
    const int64_t before = flows_done_;
    for (size_t id = 0; id < tasks_.size(); ++id) {
      const int64_t c = task_done_[id];
      if (c == 0) continue;
      task_done_[id] = 0;
      flows_done_ += c;
      tasks_[id].flows_left -= c;
      assert(tasks_[id].flows_left >= 0 && "a step's flows finish once");
      if (tasks_[id].flows_left == 0) StepDone(int(id));
    }
    if (o_.progress && (before >> 20) != (flows_done_ >> 20)) {  // every 1 M flows
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
    int32_t path[net::kMaxRouteHops];
    comm::ForEachFlow(p, t_.gpus(), t_.params().hb_domain_size, [&](int64_t src, int64_t dst, double bytes) {
      const int n = PathOf(src, dst, path);
      for (int h = 0; h < n; ++h) bytes_[path[h]] += bytes * double(steps);
    });
  }

  void FinishTask(int id) {
    Task& task = tasks_[id];
    spans_[task.phase].end_s = std::max(spans_[task.phase].end_s, now_);
    for (int d : task.dependents) {
      if (--tasks_[d].deps_left == 0) Ready(d);
    }
  }

  // Reopens the island's groups[first, end): their live flows' bytes left
  // brought up to now_, moved together from groups[first].begin (the
  // finished ones dropped) and their rates taken off the links. Returns
  // where they start.
  size_t Unfreeze(size_t first) {
    Island& is = *is_;
    if (first == 0) {
      for (int32_t l : is.links) used_[l] = 0;
    }
    if (first == is.groups.size()) return is.groups.empty() ? 0 : is.groups.back().end;
    assert(is.flows.size() == is.groups.back().end && "no unfrozen flows while groups are reopened");
    const size_t start = is.groups[first].begin;
    if (first > 0) {
      std::vector<Range>& ranges = batch_ranges_;
      ranges.clear();
      for (size_t k = first; k < is.groups.size(); ++k) {
        ranges.push_back({island_, is.groups[k].cursor, is.groups[k].end});
      }
      CountBatch(ranges, [&](size_t k, int32_t l, int64_t c) { used_[l] -= double(c) * is.groups[first + k].level; });
    }
    size_t write = start;
    for (size_t k = first; k < is.groups.size(); ++k) {
      const Group& g = is.groups[k];
      const double sent_per_flow = g.level * (now_ - g.updated_s);
      for (size_t i = g.cursor; i < g.end; ++i) {
        Flow f = is.flows[i];
        f.remaining_bytes -= sent_per_flow;
        is.flows[write++] = f;
      }
    }
    is.flows.shrink(write);
    groups_total_ -= is.groups.size() - first;
    is.groups.resize(first);
    is.level_max.resize(first);
    return start;
  }

  // Max-min fair rates for the island's flows after its last group, by
  // progressive filling from the state of the grouped ones. A full refill
  // reopens every group; otherwise every flow slower than the slowest
  // finished one (r_min) keeps its rate, and the groups at or above it are
  // refilled.
  void Refill(bool full, double r_min) {
    ++events_;
    size_t first = 0;
    if (!full) {
      // Reopen from the first group at or above the threshold (refilling
      // slower groups after it gives them their rates again).
      const double threshold = r_min * (1 - 1e-12);
      first = size_t(std::lower_bound(is_->level_max.begin(), is_->level_max.end(), threshold) -
                     is_->level_max.begin());
    }
    Fill(Unfreeze(first));
    // Entries of reopened groups go stale in the completion heap; rebuild it
    // once they outnumber the live ones, so that schedules with many small
    // refills (ECMP, pipelined) do not sift through a growing heap.
    if (group_heap_.size() > 2 * groups_total_ + 64) {
      group_heap_ = MinHeap();
      for (size_t i = 0; i < islands_.size(); ++i) {
        for (size_t k = 0; k < islands_[i].groups.size(); ++k) PushGroup(int32_t(i), k);
      }
    } else {
      for (size_t k = first; k < is_->groups.size(); ++k) PushGroup(island_, k);
    }
  }

  // Fills the island's flows[start, end): the links' unfrozen flow counts
  // first (and the bytes of steps started since the last fill, in the same
  // pass, as counts times bytes so that the totals do not depend on the
  // order of the flows).
  void Fill(size_t start) {
    const size_t n = is_->flows.size();
    touched_.clear();
    auto count = [&](size_t begin, size_t end, double bytes_per_flow) {
      CountLinks(begin, end);
      for (int32_t l : counted_) {
        if (unfrozen_[l] == 0) touched_.push_back(l);
        const int64_t c = TakeCount(l);
        unfrozen_[l] += c;
        bytes_[l] += double(c) * bytes_per_flow;
      }
    };
    size_t counted_to = start;
    for (const NewFlows& added : is_->new_flows) {
      assert(added.begin >= counted_to && added.end <= n && "new flows are unfrozen");
      count(counted_to, added.begin, 0);
      count(added.begin, added.end, added.bytes_per_flow);
      if (added.other_bytes > 0) {
        // The flows of the other size (their bytes left are still their
        // bytes) make up the difference.
        CountLinks(added.begin, added.end, added.other_bytes);
        for (int32_t l : counted_) bytes_[l] += double(TakeCount(l)) * (added.other_bytes - added.bytes_per_flow);
      }
      counted_to = added.end;
    }
    count(counted_to, n, 0);
    is_->new_flows.clear();
    // Rounds settle the regular cases (d-mod-k, one rate per tier) in a few
    // passes with no memory per flow, and split over ranks; per-link lists
    // (filling link by link) cost one pass whatever the number of distinct
    // rates (ECMP), but every rank runs them whole. So a large fill starts
    // in rounds while each freezes at least half of what is left, and goes
    // on by lists once what is left fits them.
    bool rounds = false;
    int64_t before = 0;
    while (true) {
      ThrowIfInterrupted();  // a fill of millions of flows takes a second
      int64_t entries = 0;  // over all ranks: none left when every flow is frozen
      for (int32_t l : touched_) entries += unfrozen_[l];
      if (entries == 0) break;
      rounds = before == 0 ? entries >= o_.rounds_first_entries : rounds && 2 * entries <= before;
      before = entries;
      if (caps_.empty() && entries <= o_.max_list_entries && !rounds) {
        // Links frozen in the order of their ids when their shares tie.
        std::sort(touched_.begin(), touched_.end());
        if (part_) {
          FillGathered(start, n);
        } else {
          FillByLists(is_->flows.data() + start, n - start);
          for (size_t k = 0; k < levels_.size(); ++k) {
            if (list_group_[k + 1] > list_group_[k]) {
              NewGroup(levels_[k], start + list_group_[k], start + list_group_[k + 1]);
            }
          }
        }
        break;
      }
      start = FillRound(start, n);
    }
    for (int32_t l : touched_) {
      assert(unfrozen_[l] == 0);
      share_[l] = kInf;
    }
  }

  double Share(int32_t l) const {
    return std::max(0.0, capacity_[l] - used_[l]) / double(std::max<int64_t>(1, unfrozen_[l]));
  }

  // The smallest share on the flow's path and its cap.
  double LeastShare(const Flow& f, const int32_t* path, int n) const {
    double m = kInf;
    for (int h = 0; h < n; ++h) m = std::min(m, share_[path[h]]);
    const double cap = cap_[f.task()];
    return cap > 0 ? std::min(m, cap) : m;
  }

  // The index in levels_ of the rate the flow freezes at this round, or
  // levels_.size() if it stays unfrozen.
  size_t Bucket(const Flow& f) const {
    int32_t path[net::kMaxRouteHops];
    const int n = PathOf(f, path);
    const double m = LeastShare(f, path, n);
    const double cap = cap_[f.task()];
    bool frozen = cap > 0 && cap == m && cap <= bound_;
    for (int h = 0; h < n && !frozen; ++h) frozen = freeze_[path[h]];
    if (!frozen) return levels_.size();
    auto it = std::lower_bound(levels_.begin(), levels_.end(), m);
    assert(it != levels_.end() && *it == m && "a frozen flow's rate is its bottleneck's share");
    return size_t(it - levels_.begin());
  }

  // One filling round over the unfrozen is_->flows[start, n): freezes the flows
  // of every link whose share is the least among the links (and caps) its
  // flows cross, up to bound_, the least share of any other link or cap.
  // Returns where the unfrozen flows start afterwards.
  size_t FillRound(size_t start, size_t n) {
    for (int32_t l : touched_) share_[l] = unfrozen_[l] > 0 ? Share(l) : kInf;
    // Each link's least flow share: min over its flows of their path's least share.
    ParallelFor(start, n, [&](Worker& w, size_t b, size_t e) {
      int32_t path[net::kMaxRouteHops];
      for (size_t i = b; i < e; ++i) {
        if ((i & 0xffff) == 0 && InterruptRequested()) break;  // as CountLocal's pass
        const int hops = PathOf(is_->flows[i], path);
        const double m = LeastShare(is_->flows[i], path, hops);
        const double cap = cap_[is_->flows[i].task()];
        if (cap > m) w.cap_min = std::min(w.cap_min, cap);
        for (int h = 0; h < hops; ++h) w.least[path[h]] = std::min(w.least[path[h]], m);
      }
    });
    ThrowIfInterrupted();
    double cap_min = kInf;
    for (Worker& w : workers_) {
      cap_min = std::min(cap_min, w.cap_min);
      w.cap_min = kInf;
    }
    for (int32_t l : touched_) {
      double least = kInf;
      for (Worker& w : workers_) {
        least = std::min(least, w.least[l]);
        w.least[l] = kInf;
      }
      least_[l] = least;
    }
    if (part_) ReduceLeast(&cap_min);
    bound_ = cap_min;
    for (int32_t l : touched_) {
      if (unfrozen_[l] > 0 && share_[l] > least_[l]) bound_ = std::min(bound_, share_[l]);
    }
    levels_.clear();
    for (int32_t l : touched_) {
      freeze_[l] = unfrozen_[l] > 0 && share_[l] <= least_[l] && share_[l] <= bound_;
      if (freeze_[l]) levels_.push_back(share_[l]);
    }
    for (double cap : caps_) {
      if (cap <= bound_) levels_.push_back(cap);
    }
    std::sort(levels_.begin(), levels_.end());
    levels_.erase(std::unique(levels_.begin(), levels_.end()), levels_.end());
    const size_t unfrozen_bucket = levels_.size();
    // Flows per bucket, then each bucket's flows moved together in place.
    ParallelFor(start, n, [&](Worker& w, size_t b, size_t e) {
      w.buckets.assign(unfrozen_bucket + 1, 0);
      for (size_t i = b; i < e; ++i) ++w.buckets[Bucket(is_->flows[i])];
    });
    std::vector<size_t> next(unfrozen_bucket + 2, start);
    std::vector<int64_t> sizes(unfrozen_bucket + 1, 0);  // over all ranks
    for (size_t k = 0; k <= unfrozen_bucket; ++k) {
      size_t c = 0;
      for (Worker& w : workers_) c += k < w.buckets.size() ? size_t(w.buckets[k]) : 0;
      next[k + 1] = next[k] + c;
      sizes[k] = int64_t(c);
    }
    for (Worker& w : workers_) w.buckets.clear();
    SumAll(sizes);
    const std::vector<size_t> bucket_begin(next.begin(), next.end() - 1);
    const std::vector<size_t> bucket_end(next.begin() + 1, next.end());
    const size_t frozen_end = bucket_begin[unfrozen_bucket];
    assert(sizes[unfrozen_bucket] < std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) &&
           "the least share always freezes");
    PlaceInBuckets(&next, bucket_end);
    // The buckets' flows take their rates on their links, then become groups.
    std::vector<Range>& ranges = batch_ranges_;
    ranges.clear();
    for (size_t k = 0; k < unfrozen_bucket; ++k) ranges.push_back({island_, bucket_begin[k], bucket_end[k]});
    CountBatch(ranges, [&](size_t k, int32_t l, int64_t c) {
      used_[l] += double(c) * levels_[k];
      unfrozen_[l] -= c;
    });
    for (size_t k = 0; k < unfrozen_bucket; ++k) {
      if (sizes[k] > 0) NewGroup(levels_[k], bucket_begin[k], bucket_end[k]);
    }
    for (int32_t l : touched_) freeze_[l] = 0;
    return frozen_end;
  }

  // Over ranks: least_ of the touched links and the least cap above a
  // flow's share, their minima over the ranks.
  void ReduceLeast(double* cap_min) {
    std::vector<double>& v = reduce_least_;
    v.clear();
    for (int32_t l : touched_) v.push_back(least_[l]);
    v.push_back(*cap_min);
    MinAll(v);
    for (size_t i = 0; i < touched_.size(); ++i) least_[touched_[i]] = v[i];
    *cap_min = v.back();
  }

  // Progressive filling of the unfrozen flows[0, count) link by link, with
  // per-link lists of the flows built in one pass sized up front, and a lazy
  // min-heap of link shares (a share only grows while filling, so a stale
  // entry is re-keyed when popped). Requires no flow caps. Then each link's
  // newly frozen flows are moved together: group k at rate levels_[k] is
  // flows[list_group_[k], list_group_[k + 1]) (maybe empty), not yet sorted.
  void FillByLists(Flow* flows, size_t count) {
    // Buffers kept between calls: many small fills would otherwise pay for
    // allocating and zeroing them each time.
    std::vector<uint32_t>& list_begin = list_begin_;
    std::vector<uint32_t>& list = list_;
    std::vector<uint32_t>& at = list_at_;
    list_begin.assign(touched_.size() + 1, 0);
    for (size_t i = 0; i < touched_.size(); ++i) {
      slot_[touched_[i]] = int32_t(i);
      list_begin[i + 1] = list_begin[i] + uint32_t(unfrozen_[touched_[i]]);
    }
    list.resize(list_begin.back());
    at.assign(list_begin.begin(), list_begin.end() - 1);
    int32_t path[net::kMaxRouteHops];
    for (size_t i = 0; i < count; ++i) {
      const int hops = PathOf(flows[i], path);
      for (int h = 0; h < hops; ++h) list[at[slot_[path[h]]]++] = uint32_t(i);
    }
    constexpr uint32_t kUnfrozen = UINT32_MAX;
    std::vector<uint32_t>& group_of = group_of_;
    group_of.assign(count, kUnfrozen);
    std::vector<double>& levels = levels_;
    levels.clear();
    std::vector<HeapEntry>& items = heap_items_;
    items.clear();
    for (size_t i = 0; i < touched_.size(); ++i) {
      if (unfrozen_[touched_[i]] > 0) items.push_back({Share(touched_[i]), int32_t(i), 0});
    }
    MinHeap shares(std::greater<HeapEntry>(), std::move(items));
    double level = 0;
    while (!shares.empty()) {
      const HeapEntry e = shares.top();
      shares.pop();
      const int32_t l = touched_[e.id];
      if (unfrozen_[l] == 0) continue;
      const double share = Share(l);
      if (share > e.key * (1 + 1e-12) + 1e-300) {  // grew since pushed: re-key
        shares.push({share, e.id, 0});
        continue;
      }
      level = std::max(level, share);
      const uint32_t g = uint32_t(levels.size());
      levels.push_back(level);
      for (uint32_t k = list_begin[e.id]; k < list_begin[e.id + 1]; ++k) {
        const uint32_t i = list[k];
        if (group_of[i] != kUnfrozen) continue;
        group_of[i] = g;
        const int hops = PathOf(flows[i], path);
        for (int h = 0; h < hops; ++h) {
          used_[path[h]] += level;
          --unfrozen_[path[h]];
        }
      }
    }
    for (int32_t l : touched_) slot_[l] = -1;
    // Flows into their groups' ranges (cycle leader, as PlaceInBuckets).
    std::vector<size_t>& bounds = list_group_;
    bounds.assign(levels.size() + 1, 0);
    for (uint32_t g : group_of) ++bounds[g + 1];
    for (size_t g = 0; g < levels.size(); ++g) bounds[g + 1] += bounds[g];
    std::vector<size_t> next(bounds.begin(), bounds.end() - 1);
    for (size_t k = 0; k < levels.size(); ++k) {
      while (next[k] < bounds[k + 1]) {
        Flow f = flows[next[k]];
        uint32_t g = group_of[next[k]];
        while (g != k) {
          const size_t to = next[g]++;
          std::swap(f, flows[to]);
          std::swap(g, group_of[to]);
        }
        flows[next[k]] = f;
        group_of[next[k]] = uint32_t(k);
        ++next[k];
      }
    }
  }

  // FillByLists over ranks: every rank fills all the unfrozen flows, gathered
  // (is_->flows[start, n) of each), the same way, and keeps an even share of
  // every group in place of its own.
  void FillGathered(size_t start, size_t n) {
    std::vector<Flow> all;
    part_->GatherFlows({is_->flows.data() + start, n - start}, &all);
    FillByLists(all.data(), all.size());
    const size_t ranks = size_t(part_->size()), rank = size_t(part_->rank());
    auto share = [&](size_t k, size_t* from, size_t* to) {
      const size_t b = list_group_[k], e = list_group_[k + 1];
      *from = b + (e - b) * rank / ranks;
      *to = b + (e - b) * (rank + 1) / ranks;
      return e > b;
    };
    size_t kept = 0, from = 0, to = 0;
    for (size_t k = 0; k < levels_.size(); ++k) kept += share(k, &from, &to) ? to - from : 0;
    is_->flows.shrink(start);
    is_->flows.Reserve(start + kept);
    for (size_t k = 0; k < levels_.size(); ++k) {
      if (!share(k, &from, &to)) continue;
      const size_t begin = is_->flows.size();
      for (size_t i = from; i < to; ++i) is_->flows.push_back(all[i]);
      NewGroup(levels_[k], begin, is_->flows.size());
    }
  }

  // A group of the island's flows[begin, end) at rate `level`, sorted by
  // bytes left so that they finish front first.
  void NewGroup(double level, size_t begin, size_t end) {
    Flow* b = is_->flows.data() + begin;
    Flow* e = is_->flows.data() + end;
    auto by_remaining = [](const Flow& x, const Flow& y) { return x.remaining_bytes < y.remaining_bytes; };
    if (!std::is_sorted(b, e, by_remaining)) std::sort(b, e, by_remaining);
    is_->groups.push_back({level, now_, begin, end, begin, next_serial_++});
    is_->level_max.push_back(is_->level_max.empty() ? level : std::max(level, is_->level_max.back()));
    ++groups_total_;
  }

  // American flag sort: moves each flow of the round into its bucket's range
  // [next[k], end[k]) by following cycles, each flow moved at most once.
  void PlaceInBuckets(std::vector<size_t>* next, const std::vector<size_t>& end) {
    std::vector<size_t>& at = *next;
    for (size_t k = 0; k < end.size(); ++k) {
      while (at[k] < end[k]) {
        Flow f = is_->flows[at[k]];
        size_t b = Bucket(f);
        while (b != k) {
          std::swap(f, is_->flows[at[b]++]);
          b = Bucket(f);
        }
        is_->flows[at[k]++] = f;
      }
    }
  }

  SimResult Result() {
    SimResult r;
    r.time_s = now_;
    r.flows_simulated = flows_simulated_;
    r.flows_unroutable = unroutable_;
    SumAll({&r.flows_unroutable, 1});
    r.events = events_;
    for (int i = 0; i < plan_.count; ++i) {
      if (spans_[i].start_s == kInf) spans_[i].start_s = 0;
      r.flows_represented += spans_[i].flows * spans_[i].steps;
    }
    r.phases = spans_;
    const auto& links = t_.links();
    for (size_t d = 0; d < bytes_.size(); ++d) {
      if (bytes_[d] <= 0) continue;
      const net::Link& link = links[d / 2];
      LinkLoad load;
      load.link = net::LinkId(d / 2);
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

  const net::Topology& t_;
  const Plan& plan_;
  const SimOptions& o_;
  Partition* part_;  // null in one process
  // Per directed link (2 x link + direction).
  std::vector<double> capacity_, used_, bytes_;
  std::vector<int64_t> unfrozen_, count_;
  std::vector<int32_t> slot_;          // index in touched_ while building lists, else -1
  std::vector<double> share_, least_;  // this round's share; least flow share across it
  std::vector<uint8_t> freeze_;        // frozen this round
  std::vector<uint8_t> skip_;          // per link: PCIe, left out
  std::vector<int32_t> touched_, counted_;
  // Flows finishing in one event: flows[begin, end) of groups[group] of
  // islands_[island], and their count over all ranks.
  struct Finished {
    int32_t island;
    size_t group, begin, end;
    int64_t count;
  };
  std::vector<Finished> finished_;
  std::vector<const Finished*> batch_finished_;  // FinishFlows()' items of CountBatch()
  std::vector<size_t> group_base_;     // MergeFinished(): per island, its first group's number
  std::vector<int64_t> merge_counts_;  // MergeFinished()'s buffer
  std::vector<int64_t> task_done_;     // per task: flows finished this event
  std::vector<double> reduce_least_;   // ReduceLeast()'s buffer
  std::vector<int64_t> reduce_counts_;  // CountLinks()'s buffer over ranks
  // CountBatch()'s buffers.
  std::vector<Range> batch_ranges_;
  std::vector<int64_t> batch_mine_;
  std::vector<std::pair<int64_t, int64_t>> batch_pairs_;
  std::vector<Island> islands_;
  std::vector<int32_t> island_of_;     // per directed link: its island (-1: no flow crosses it)
  std::vector<std::vector<int32_t>> phase_islands_;  // per phase: the islands its flows are in
  std::vector<std::vector<int32_t>> source_island_;  // per phase and source GPU: its flows' island (empty: 0)
  Island* is_ = nullptr;               // the island being filled (Use())
  int32_t island_ = 0;                 // its index
  std::vector<int32_t> pending_;       // islands that steps started in since the last refill
  std::vector<int64_t> step_added_;    // StartStep()'s buffers
  std::vector<size_t> step_first_;
  size_t groups_total_ = 0;            // groups over all islands
  std::vector<double> levels_;  // rates frozen this round (or fill by lists), ascending
  std::vector<uint32_t> list_begin_, list_, list_at_, group_of_;  // FillByLists' buffers
  std::vector<size_t> list_group_;  // FillByLists' groups: group k is [list_group_[k], list_group_[k + 1])
  std::vector<HeapEntry> heap_items_;
  double bound_ = kInf;         // no rate above it freezes this round
  std::vector<Worker> workers_;
  int64_t flows_done_ = 0, flows_simulated_ = 0, events_ = 0, unroutable_ = 0;
  MinHeap group_heap_, timers_;
  uint32_t next_serial_ = 0;
  int active_tasks_ = 0;
  double now_ = 0;
  std::vector<Task> tasks_;
  std::vector<double> cap_;   // per task: its phase's flow cap (0 = none)
  std::vector<double> caps_;  // the distinct caps, ascending
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

int64_t EstimateMemoryBytes(const comm::Plan& plan, const net::Topology& topology, int threads, int ranks) {
  const int64_t links = int64_t(topology.links().size()), nodes = int64_t(topology.nodes().size());
  // The graph (nodes, links, per-GPU tables); per directed link 8 arrays of
  // 8 bytes; per thread and directed link a count and a least share.
  const int64_t graph = nodes * int64_t(sizeof(net::Node)) + links * int64_t(sizeof(net::Link)) + 24 * topology.gpus();
  const int64_t per_link = 2 * links * (8 * 8 + 2 * 8 * std::max(1, threads));
  // Program, libraries and allocator slack, measured at about 40 MB.
  constexpr int64_t kBase = int64_t{64} << 20;
  // Per-link lists: 4 bytes per flow and link crossed and 4 per flow, built
  // only up to SimOptions::max_list_entries entries (the default is
  // assumed). A stored path crosses at most 2 x tiers NIC-network links (PCIe
  // is left out) and two NVLink hops at each end (forwarding, at the far end
  // too when a failure forces it): 8 on two tiers, where kMaxRouteHops' 12
  // overstated the lists by half.
  const int64_t peak = PeakFlows(plan, topology.gpus());
  const int64_t path_links = std::min(2 * topology.tiers() + 4, net::kMaxRouteHops);
  const int64_t lists = std::min(peak * 4 * (path_links + 1), SimOptions().max_list_entries * 4 * 2);
  // Over ranks, a rank holds its share of the flows, and a fill by lists
  // gathers all its flows (each crosses two links at least).
  assert(ranks >= 1);
  const int64_t flows = ranks == 1 ? peak : (peak + ranks - 1) / ranks +
                                               std::min(peak, SimOptions().max_list_entries / 2);
  return int64_t(sizeof(Flow)) * flows + lists + graph + per_link + kBase;
}

SimResult Simulate(const net::Topology& topology, const comm::Plan& plan, const SimOptions& options) {
  Engine engine(topology, plan, options);
  return engine.Run();
}

}  // namespace railsim::sim
