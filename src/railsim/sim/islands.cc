#include "railsim/sim/islands.h"

#include <algorithm>
#include <numeric>

#include "railsim/sim/memory_estimate.h"

namespace railsim::sim {
namespace {

// Union-find over directed link ids; a root is its piece's least link.
class LinkUnion {
 public:
  explicit LinkUnion(size_t links) : parent_(links) { std::iota(parent_.begin(), parent_.end(), 0); }

  int32_t Root(int32_t x) {
    while (parent_[size_t(x)] != x) x = parent_[size_t(x)] = parent_[size_t(parent_[size_t(x)])];
    return x;
  }
  void Join(int32_t x, int32_t y) {
    const int32_t a = Root(x), b = Root(y);
    if (a != b) parent_[size_t(std::max(a, b))] = std::min(a, b);
  }

 private:
  std::vector<int32_t> parent_;
};

// Every directed link in one island, which every phase's flows are in.
Islands OneIsland(const comm::Plan& plan, const FlowRouter& router, const comm::DomainUse& use) {
  Islands islands;
  islands.all = std::vector<Island>(1);
  Island& island = islands.all[0];
  island.links.resize(router.directed_links());
  std::iota(island.links.begin(), island.links.end(), 0);
  island.peak = PeakFlows(plan, use.JobGpus(router.topology().gpus()));
  islands.of_phase.assign(size_t(plan.count), std::vector<int32_t>{0});
  islands.of_source.assign(size_t(plan.count), std::vector<int32_t>());
  return islands;
}

}  // namespace

Islands FindIslands(const comm::Plan& plan, const FlowRouter& router, const comm::DomainUse& use) {
  const net::Topology& topology = router.topology();
  if (topology.params().design != net::Design::kRailOnly && plan.count <= 1) return OneIsland(plan, router, use);
  const size_t directed = router.directed_links(), phases = size_t(plan.count);
  Islands islands;
  islands.of_phase.assign(phases, {});
  islands.of_source.assign(phases, {});
  LinkUnion pieces(directed);
  std::vector<uint8_t> crossed(directed, 0);
  // Per phase and directed link: the phase's flows whose path starts there.
  std::vector<std::vector<int64_t>> starts(phases, std::vector<int64_t>(directed, 0));
  int32_t path[net::kMaxRouteHops];
  for (size_t i = 0; i < phases; ++i) {
    std::vector<int32_t>& first_link = islands.of_source[i];  // per source: a link of its flows, for now
    first_link.assign(size_t(topology.gpus()), -1);
    auto join = [&](int64_t src, int64_t dst, double) {
      const int n = router.PathOf(src, dst, path);
      if (n <= 0) return;  // no live path around the failures
      ++starts[i][size_t(path[0])];
      int32_t& first = first_link[size_t(src)];
      if (first < 0) first = path[0];
      pieces.Join(first, path[0]);
      for (int h = 0; h < n; ++h) {
        crossed[size_t(path[h])] = 1;
        pieces.Join(path[0], path[h]);
      }
    };
    comm::ForEachGraphFlow(plan.phases[i], topology.gpus(), topology.params().hb_domain_size, use, join);
  }
  // Islands numbered in the order of their least link.
  std::vector<int32_t> number(directed, -1), island_of(directed, -1);
  int32_t count = 0;
  for (size_t l = 0; l < directed; ++l) {
    if (!crossed[l]) continue;
    int32_t& n = number[size_t(pieces.Root(int32_t(l)))];
    if (n < 0) n = count++;
    island_of[l] = n;
  }
  islands.all = std::vector<Island>(size_t(std::max(count, 1)));
  for (size_t l = 0; l < directed; ++l) {
    if (island_of[l] >= 0) islands.all[size_t(island_of[l])].links.push_back(int32_t(l));
  }
  for (std::vector<int32_t>& island_of_source : islands.of_source) {
    for (int32_t& link : island_of_source) link = link < 0 ? 0 : island_of[size_t(link)];
  }
  // Each phase's flows per island: the islands it joins, and their peaks.
  std::vector<std::vector<int64_t>> flows(phases, std::vector<int64_t>(islands.all.size(), 0));
  for (size_t i = 0; i < phases; ++i) {
    for (size_t l = 0; l < directed; ++l) {
      if (starts[i][l] > 0) flows[i][size_t(island_of[l])] += starts[i][l];
    }
    for (size_t k = 0; k < islands.all.size(); ++k) {
      if (flows[i][k] == 0) continue;
      islands.of_phase[i].push_back(int32_t(k));
      const bool pipelined = i > 0 && plan.phases[i].chunks > 1;
      Island& island = islands.all[k];
      island.peak = std::max(island.peak, flows[i][k] + (pipelined ? flows[i - 1][k] : 0));
    }
  }
  return islands;
}

}  // namespace railsim::sim
