#include "railsim/study/cluster_fabric.h"

#include <algorithm>
#include <map>
#include <queue>

#include "railsim/net/builder.h"

namespace railsim::study {
namespace {

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

}  // namespace

std::shared_ptr<const ClusterFabric> ClusterFabric::Built(const net::TopologyParams& params) {
  std::shared_ptr<ClusterFabric> f(new ClusterFabric());
  f->topology_ = std::make_unique<net::Topology>(net::BuildTopology(params));
  const net::Topology& t = *f->topology_;
  f->design_ = net::DesignName(params.design);
  f->gpus_ = params.gpus;
  f->hb_domain_size_ = params.hb_domain_size;
  f->nic_bw_Bps_ = params.port_speed_Bps;
  f->hb_bw_Bps_ = params.hb_bw_Bps;
  std::map<net::NodeId, int32_t> leaf_ids;
  f->gpu_leaf_.resize(size_t(params.gpus));
  for (int64_t g = 0; g < params.gpus; ++g) {
    const net::ClosFabric& fabric = t.fabrics()[size_t(t.fabric_of(g))];
    net::NodeId leaf = fabric.leaves[size_t(t.leaf_of(g))];
    auto [it, added] = leaf_ids.emplace(leaf, static_cast<int32_t>(leaf_ids.size()));
    f->gpu_leaf_[size_t(g)] = it->second;
  }
  f->leaf_count_ = static_cast<int32_t>(leaf_ids.size());
  const std::vector<net::Link>& links = t.links();
  f->capacity_Bps_.resize(2 * links.size());
  f->above_leaf_.resize(2 * links.size());
  for (size_t l = 0; l < links.size(); ++l) {
    bool above = links[l].kind == net::LinkKind::kLeafToSpine || links[l].kind == net::LinkKind::kSpineToCore;
    for (size_t d = 0; d < 2; ++d) {
      f->capacity_Bps_[2 * l + d] = links[l].capacity_Bps;
      f->above_leaf_[2 * l + d] = above;
    }
  }
  return f;
}

std::shared_ptr<const ClusterFabric> ClusterFabric::FromSwitchMap(const spec::SwitchMap& map, int gpus_per_host,
                                                                  double nic_bw_Bps, double hb_bw_Bps) {
  std::shared_ptr<ClusterFabric> f(new ClusterFabric());
  f->design_ = "switch-map";
  f->hb_domain_size_ = gpus_per_host;
  f->gpus_ = map.hosts() * gpus_per_host;
  f->nic_bw_Bps_ = nic_bw_Bps;
  f->hb_bw_Bps_ = hb_bw_Bps;
  f->gpu_leaf_.resize(size_t(f->gpus_));
  std::vector<int64_t> tor_hosts(map.tor_names.size(), 0);
  for (int64_t h = 0; h < map.hosts(); ++h) {
    ++tor_hosts[size_t(map.tor_of[size_t(h)])];
    for (int g = 0; g < gpus_per_host; ++g) f->gpu_leaf_[size_t(h * gpus_per_host + g)] = map.tor_of[size_t(h)];
  }
  f->leaf_count_ = static_cast<int32_t>(map.tor_names.size());
  f->tor_psws_ = map.tor_psws;
  // Directed links: NVLink per GPU [0, 2N), NIC-ToR per GPU [2N, 4N), then
  // ToR-aggregation per (ToR, aggregation), then aggregation-core per aggregation.
  const int64_t n = f->gpus_;
  f->capacity_Bps_.assign(size_t(4 * n), nic_bw_Bps);
  std::fill(f->capacity_Bps_.begin(), f->capacity_Bps_.begin() + 2 * n, hb_bw_Bps);
  f->above_leaf_.assign(size_t(4 * n), 0);
  std::vector<double> psw_capacity(map.psw_names.size(), 0);
  for (size_t t = 0; t < map.tor_psws.size(); ++t) {
    f->tor_first_up_.push_back(static_cast<int32_t>(f->capacity_Bps_.size()));
    // Full bisection: as many NIC-speed cables up as NICs below, split
    // evenly over the ToR's aggregation switches; each flow hashes to one.
    const int64_t psws = static_cast<int64_t>(map.tor_psws[t].size());
    const int32_t cables = static_cast<int32_t>((tor_hosts[t] * gpus_per_host + psws - 1) / psws);
    f->tor_cables_.push_back(cables);
    for (int32_t p : map.tor_psws[t]) {
      psw_capacity[size_t(p)] += double(cables) * nic_bw_Bps;
      for (int32_t c = 0; c < 2 * cables; ++c) {
        f->capacity_Bps_.push_back(nic_bw_Bps);
        f->above_leaf_.push_back(1);
      }
    }
  }
  f->psw_first_up_ = static_cast<int32_t>(f->capacity_Bps_.size());
  for (double c : psw_capacity) {
    for (int d = 0; d < 2; ++d) {
      f->capacity_Bps_.push_back(c);
      f->above_leaf_.push_back(1);
    }
  }
  return f;
}

int ClusterFabric::SwitchMapPath(int64_t src, int64_t dst, int32_t* out) const {
  const int64_t n = gpus_;
  const int64_t k = hb_domain_size_;
  int hops = 0;
  if (src / k == dst / k) {
    out[hops++] = static_cast<int32_t>(2 * src);
    out[hops++] = static_cast<int32_t>(2 * dst + 1);
    return hops;
  }
  out[hops++] = static_cast<int32_t>(2 * n + 2 * src);
  const int32_t ts = gpu_leaf_[size_t(src)], td = gpu_leaf_[size_t(dst)];
  if (ts != td) {
    const std::vector<int32_t>& a = tor_psws_[size_t(ts)];
    const std::vector<int32_t>& b = tor_psws_[size_t(td)];
    std::vector<int32_t> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    uint64_t h = Mix(static_cast<uint64_t>(src) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(dst));
    // The cable between `tor` and `psw` the pair hashes to, in direction `dir`.
    auto up_link = [&](int32_t tor, int32_t psw, int dir) {
      const std::vector<int32_t>& list = tor_psws_[size_t(tor)];
      const int32_t index = static_cast<int32_t>(std::lower_bound(list.begin(), list.end(), psw) - list.begin());
      const int32_t cables = tor_cables_[size_t(tor)];
      const int32_t cable = static_cast<int32_t>(Mix(h + static_cast<uint64_t>(tor)) % static_cast<uint64_t>(cables));
      return tor_first_up_[size_t(tor)] + 2 * (index * cables + cable) + dir;
    };
    if (!common.empty()) {
      int32_t p = common[h % common.size()];
      out[hops++] = up_link(ts, p, 0);
      out[hops++] = up_link(td, p, 1);
    } else {
      int32_t pa = a[h % a.size()], pb = b[(h >> 20) % b.size()];
      out[hops++] = up_link(ts, pa, 0);
      out[hops++] = psw_first_up_ + 2 * pa;
      out[hops++] = psw_first_up_ + 2 * pb + 1;
      out[hops++] = up_link(td, pb, 1);
    }
  }
  out[hops++] = static_cast<int32_t>(2 * n + 2 * dst + 1);
  return hops;
}

int ClusterFabric::Path(int64_t src, int64_t dst, int32_t* out) const {
  if (!topology_) return SwitchMapPath(src, dst, out);
  net::Hop hops[net::kMaxRouteHops];
  int n = topology_->RouteInto(src, dst, net::RouteOptions{}, hops);
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    // PCIe (GPU to its own NIC) is private to the GPU and never the
    // bottleneck: left out.
    if (topology_->links()[size_t(hops[i].link)].kind == net::LinkKind::kPcie) continue;
    out[kept++] = 2 * hops[i].link + (hops[i].upward ? 0 : 1);
  }
  return kept;
}

std::vector<double> MaxMinRates(const ClusterFabric& fabric, const FlowSet& flows) {
  const int64_t nf = flows.size();
  std::vector<double> rate(size_t(nf), 0);
  // Dense local ids for the links the flows use, in first-use order (a
  // per-thread map over the fabric's links, reset after).
  thread_local std::vector<int32_t> local_of;
  if (local_of.size() < size_t(fabric.directed_links())) local_of.assign(size_t(fabric.directed_links()), -1);
  std::vector<int32_t> used;
  std::vector<int32_t> flow_local(flows.links.size());
  for (size_t i = 0; i < flows.links.size(); ++i) {
    int32_t& id = local_of[size_t(flows.links[i])];
    if (id < 0) {
      id = static_cast<int32_t>(used.size());
      used.push_back(flows.links[i]);
    }
    flow_local[i] = id;
  }
  for (int32_t link : used) local_of[size_t(link)] = -1;
  const size_t nl = used.size();
  std::vector<double> left(nl);
  std::vector<int64_t> count(nl, 0);
  std::vector<int64_t> first(nl + 1, 0);
  for (int32_t l : flow_local) ++first[size_t(l) + 1];
  for (size_t l = 0; l < nl; ++l) {
    left[l] = fabric.capacity(used[l]);
    count[l] = first[l + 1];
    first[l + 1] += first[l];
  }
  std::vector<int64_t> on_link(flows.links.size());
  std::vector<int64_t> fill(first.begin(), first.end() - 1);
  for (int64_t f = 0; f < nf; ++f) {
    for (int64_t i = flows.starts[size_t(f)]; i < flows.starts[size_t(f) + 1]; ++i) {
      on_link[size_t(fill[size_t(flow_local[size_t(i)])]++)] = f;
    }
  }
  std::vector<uint8_t> frozen(size_t(nf), 0);
  for (int64_t f = 0; f < nf; ++f) {
    if (flows.starts[size_t(f)] == flows.starts[size_t(f) + 1]) {
      rate[size_t(f)] = fabric.nic_bw_Bps();
      frozen[size_t(f)] = 1;
    }
  }
  // Progressive filling with a heap of (fair share, link), stale entries
  // skipped: freezing flows at the lowest share never lowers another link's
  // share, so the popped shares only grow. Ties go by link: deterministic.
  auto share = [&](size_t l) { return std::max(0.0, left[l]) / double(count[l]); };
  using Entry = std::pair<double, size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
  for (size_t l = 0; l < nl; ++l) {
    if (count[l] > 0) heap.emplace(share(l), l);
  }
  while (!heap.empty()) {
    auto [level, l] = heap.top();
    heap.pop();
    if (count[l] == 0 || share(l) != level) continue;
    for (int64_t i = first[l]; i < first[l + 1]; ++i) {
      int64_t f = on_link[size_t(i)];
      if (frozen[size_t(f)]) continue;
      frozen[size_t(f)] = 1;
      rate[size_t(f)] = level;
      for (int64_t j = flows.starts[size_t(f)]; j < flows.starts[size_t(f) + 1]; ++j) {
        size_t m = size_t(flow_local[size_t(j)]);
        left[m] -= level;
        --count[m];
        if (count[m] > 0 && m != l) heap.emplace(share(m), m);
      }
    }
  }
  return rate;
}

}  // namespace railsim::study
