// The failure study's impact analysis: what one failure set does to a design
// (GPUs removed, rerouted or narrowed, capacity left per tier, the job's
// iteration time, a collective checked in the simulator) and what each
// component's failure does, which the Monte Carlo (failure_monte_carlo.cc)
// draws from.
#include "railsim/study/failures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "railsim/comm/algorithms.h"
#include "railsim/core/error.h"
#include "railsim/core/interrupt.h"
#include "railsim/net/builder.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/groups.h"
#include "railsim/perf/iteration_comm.h"
#include "railsim/sim/simulator.h"

namespace railsim::study {
namespace {

constexpr double kSecondsPerYear = 365.25 * 86400;
// The collective check simulates at most this many flows at once.
constexpr int64_t kMaxCheckFlows = int64_t{1} << 22;
// Without a job, the check all-reduces this much per GPU.
constexpr double kCheckBytes = 256.0 * 1024 * 1024;

// Live share of one switch's uplinks, or -1 when the switch is down or has
// no live uplink (its GPUs then count as cut off, not narrowed).
double LiveUplinkFraction(const net::Topology& t, const net::FailureSet& f, const net::UplinkBundle& up) {
  if (up.count <= 0) return -1;
  if (f.node_down[t.links()[up.first_link].a]) return -1;
  int32_t live = 0;
  for (int32_t i = 0; i < up.count; ++i) live += f.link_down[up.first_link + i] ? 0 : 1;
  return live == 0 ? -1 : double(live) / double(up.count);
}

// The collective the check times: the job's largest data-parallel call (or
// its largest call spanning HB domains), else an all-reduce across domains
// on every rail.
struct CheckCall {
  std::string name;
  perf::CommCall call;
  comm::GroupLayout layout;
};

std::optional<CheckCall> ChooseCheckCall(const ClusterSetup& setup, const DesignSetup& d) {
  // The job's GPUs, in domains of the GPUs it uses of each (comm::DomainUse).
  const int64_t k = d.context.fabrics.hb_domain_size;
  if (!setup.model) {
    const int64_t domains = d.context.gpus / k;
    if (domains < 2) return std::nullopt;
    perf::CommCall all_reduce{perf::Parallelism::kDp, perf::GroupKind::kDp, comm::Op::kAllReduce,
                              perf::PointToPoint::kNone, kCheckBytes, {1}, std::nullopt, comm::MoeAllToAll::kAuto};
    return CheckCall{"all-reduce across HB domains on every rail (256 MiB per GPU)", all_reduce,
                     comm::LayoutOf(domains, k, k)};
  }
  if (d.context.placement.map) return std::nullopt;  // groups are not one strided family
  const perf::ParallelGroups groups = perf::PlaceGroups(d.context, setup.strategy);
  std::optional<CheckCall> best;
  bool best_dp = false;
  for (const perf::CommCall& call : perf::IterationComm(d.context, setup.strategy)) {
    if (call.p2p != perf::PointToPoint::kNone) continue;
    const comm::GroupLayout& layout = groups[call.group];
    if (layout.domains < 2) continue;
    // The simulator runs every group of the layout's family (comm::
    // GroupFamily), which tiles the GPUs only when size x stride divides
    // them: the tied embedding's pair of first and last stage does not (pp 8
    // of tp 8 on 64 GPUs: members 8 and 64 of a 64-GPU cluster).
    if (!comm::GroupFamily{layout.size, layout.stride}.Tiles(d.context.gpus)) continue;
    const bool dp = call.parallelism == perf::Parallelism::kDp;
    if (best && (best_dp && !dp)) continue;
    if (best && best_dp == dp && call.bytes <= best->call.bytes) continue;
    best = CheckCall{fmt::format("{} {} on the {} groups", perf::ParallelismName(call.parallelism),
                                 comm::OpName(call.op), perf::GroupKindName(call.group)),
                     call, layout};
    best_dp = dp;
  }
  return best;
}

std::optional<CollectiveCheck> CheckCollective(const ClusterSetup& setup, const DesignSetup& d,
                                               const net::FailureSet& failures, const comm::ClusterFabrics& after) {
  std::optional<CheckCall> call = ChooseCheckCall(setup, d);
  if (!call) return std::nullopt;
  CollectiveCheck check;
  check.name = call->name;
  std::optional<comm::Plan> before_plan =
      perf::CallPlan(call->call, call->layout, d.context.fabrics, &check.analytic_before_s);
  std::optional<comm::Plan> after_plan = perf::CallPlan(call->call, call->layout, after, &check.analytic_after_s);
  const int64_t n = d.context.gpus;
  if (std::max(sim::PeakFlows(*before_plan, n), sim::PeakFlows(*after_plan, n)) > kMaxCheckFlows) return std::nullopt;
  sim::SimOptions so;
  so.domain_use = d.context.domain_use;
  so.route = {setup.system.nic_routing == "d-mod-k" ? net::Routing::kDModK : net::Routing::kEcmp, 0};
  so.hb_efficiency = d.context.fabrics.hb.efficiency;
  so.nic_efficiency = d.context.fabrics.nic.efficiency;
  check.simulated_before_s = sim::Simulate(d.topology, *before_plan, so).time_s;
  so.failures = &failures;
  sim::SimResult r = sim::Simulate(d.topology, *after_plan, so);
  check.simulated_after_s = r.time_s;
  check.flows = r.flows_simulated;
  check.flows_unroutable = r.flows_unroutable;
  return check;
}

}  // namespace

const char* NetworkTierName(int tier) {
  static const char* kNames[] = {"nic_to_leaf", "leaf_to_spine", "spine_to_core"};
  return tier >= 0 && tier < kNetworkTiers ? kNames[tier] : "?";
}

comm::ClusterFabrics DegradedFabrics(const DesignSetup& d, const FailureImpact& impact) {
  comm::ClusterFabrics f = d.context.fabrics;
  if (impact.max_forwarder_load > 1) {  // a job GPU is rerouted
    // Every GPU of a domain sends at once in the collectives that leave it,
    // so a forwarder's NIC is shared by all it carries; forwarded bytes also
    // cross NVLink once more (at both ends on Rail-only).
    f.nic.bw_Bps /= impact.max_forwarder_load;
    f.nic.latency_s += f.hb.latency_s * (d.design == net::Design::kRailOnly ? 2 : 1);
  }
  if (impact.worst_uplink_fraction < 1 && f.leaf_gpus > 0) f.leaf_uplink_ratio /= impact.worst_uplink_fraction;
  return f;
}

FailureImpact AnalyzeFailures(const ClusterSetup& setup, const DesignSetup& d, const net::FailureSet& failures,
                              SparePolicy policy, bool simulate) {
  const net::Topology& t = d.topology;
  FailureImpact r;
  r.design = d.design;
  r.policy = policy;
  r.devices = failures.devices;
  r.nic_bw_Bps = t.params().port_speed_Bps / t.params().gpus_per_nic;  // a GPU's share of its NIC
  r.tiers_built = t.tiers();
  std::vector<uint8_t> degraded(size_t(t.gpus()), 0);
  // A job on part of each HB domain (comm::DomainUse) loses nothing when an
  // idle GPU fails: only the job's GPUs interrupt or slow it.
  const comm::DomainUse& use = d.context.domain_use;
  bool job_gpu_lost = false;
  for (int64_t g = 0; g < t.gpus(); ++g) {
    const bool job = use.JobGpu(g) >= 0;
    if (failures.gpu_removed[g]) {
      r.removed.push_back(g);
      job_gpu_lost = job_gpu_lost || job;
    } else if (!failures.nic_path_ok[g]) {
      r.disconnected.push_back(g);
      job_gpu_lost = job_gpu_lost || job;
      if (failures.forwarder[g] >= 0) {
        r.rerouted.push_back(g);
        if (!job) continue;
        degraded[size_t(g)] = 1;
        degraded[size_t(failures.forwarder[g])] = 1;
        r.max_forwarder_load = std::max(r.max_forwarder_load, 1 + failures.forwarded_for[failures.forwarder[g]]);
      } else {
        ++r.unreachable;
      }
    }
  }
  r.affected_gpu_bw_Bps = r.nic_bw_Bps / r.max_forwarder_load;
  for (const net::ClosFabric& fabric : t.fabrics()) {
    for (const auto* bundles : {&fabric.leaf_up, &fabric.agg_up}) {
      for (const net::UplinkBundle& up : *bundles) {
        double live = LiveUplinkFraction(t, failures, up);
        if (live >= 0) r.worst_uplink_fraction = std::min(r.worst_uplink_fraction, live);
        if (live < 0 && up.count > 0 && !failures.node_down[t.links()[up.first_link].a]) ++r.switches_without_uplinks;
      }
    }
  }
  for (int64_t g = 0; g < t.gpus(); ++g) {
    const net::ClosFabric& fabric = t.fabrics()[t.fabric_of(g)];
    if (failures.gpu_removed[g] || fabric.tiers < 2) continue;
    double live = LiveUplinkFraction(t, failures, fabric.leaf_up[t.leaf_of(g)]);
    if (live >= 0 && live < 1) degraded[size_t(g)] = 1;
  }
  for (int64_t g = 0; g < t.gpus(); ++g) {
    if (degraded[size_t(g)]) r.degraded.push_back(g);
  }
  for (net::LinkId l = 0; l < static_cast<net::LinkId>(t.links().size()); ++l) {
    const net::Link& link = t.links()[l];
    if (!net::IsNetworkLink(link.kind)) continue;
    TierCapacity& tier = r.tiers[size_t(int(link.kind) - int(net::LinkKind::kNicToLeaf))];
    tier.before_Bps += link.capacity_Bps;
    if (!failures.link_down[l]) tier.after_Bps += link.capacity_Bps;
  }
  r.partitioned_domains = net::PartitionedDomains(t, failures);
  r.interrupts = job_gpu_lost || r.partitioned_domains > 0;
  if (r.unreachable > 0 || r.partitioned_domains > 0) {
    // GPUs with no path at all get no bandwidth to share.
    r.affected_gpu_bw_Bps = 0;
  }
  const comm::ClusterFabrics after = DegradedFabrics(d, r);
  if (setup.model && r.partitioned_domains == 0) {
    r.has_job = true;
    r.iteration_time_s_before = perf::EstimateIteration(d.context, setup.strategy).iteration_time_s;
    perf::PerfContext degraded_context = d.context;
    degraded_context.fabrics = after;
    r.iteration_time_s_after = perf::EstimateIteration(degraded_context, setup.strategy).iteration_time_s;
  }
  // With every GPU removed there is nothing left to send.
  if (simulate && r.unreachable == 0 && r.partitioned_domains == 0 && int64_t(r.removed.size()) < t.gpus()) {
    r.check = CheckCollective(setup, d, failures, after);
  }
  return r;
}

std::vector<ComponentEffect> ComponentEffects(const ClusterSetup& setup, const DesignSetup& d,
                                              const spec::FailureCatalog& catalog, double days) {
  const net::Topology& t = d.topology;
  // The job's GPUs, NICs and hosts are counted: an idle GPU of a domain the
  // job uses part of (comm::DomainUse) fails without stopping it.
  const comm::DomainUse& use = d.context.domain_use;
  const int64_t n = use.JobGpus(t.gpus());
  const int64_t k = t.params().hb_domain_size;
  int64_t host_gpus = std::min<int64_t>(k, catalog.gpus_per_host);
  if (k % host_gpus != 0) host_gpus = k;
  const int64_t hosts = t.gpus() / k * (((use.whole() ? k : use.used) + host_gpus - 1) / host_gpus);
  std::vector<ComponentEffect> out;
  // One failure of the first instance, analysed with the job; kinds that
  // fail the same device (GPU and HBM, a tier's transceiver and cable) share
  // one analysis.
  std::map<std::vector<std::string>, ComponentEffect> analysed;
  auto add = [&](spec::Component c, std::string name, int64_t count, const std::vector<std::string>& devices) {
    if (count <= 0) return;
    ComponentEffect e;
    e.component = c;
    e.name = std::move(name);
    e.count = count;
    e.rate_per_year = catalog.of(c).rate_per_year;
    e.mttr_hours = catalog.of(c).mttr_hours;
    e.expected_failures = double(count) * e.rate_per_year * days * 86400 / kSecondsPerYear;
    if (c == spec::Component::kHost) {
      e.interrupts = true;
      e.spare_gpus = int(host_gpus);
    } else {
      auto [it, fresh] = analysed.try_emplace(devices);
      ComponentEffect& effect = it->second;
      if (fresh) {
        FailureImpact impact = AnalyzeFailures(setup, d, net::ResolveFailures(t, devices, "--failure-catalog"),
                                               SparePolicy::kAny, false);
        effect.interrupts = impact.interrupts;
        effect.spare_gpus = int(impact.removed.size() + size_t(impact.unreachable));
        if (impact.has_job && impact.iteration_time_s_before > 0) {
          effect.slowdown = std::max(1.0, impact.iteration_time_s_after / impact.iteration_time_s_before);
        }
      }
      e.interrupts = effect.interrupts;
      e.spare_gpus = effect.spare_gpus;
      e.slowdown = effect.slowdown;
    }
    out.push_back(std::move(e));
  };
  add(spec::Component::kGpu, "gpu", n, {"gpu0"});
  add(spec::Component::kHbm, "hbm", n, {"gpu0"});
  add(spec::Component::kHost, "host", hosts, {});
  add(spec::Component::kNic, "nic", n, {"nic0"});
  // Links by tier: the first of each, and its count.
  std::array<int64_t, kNetworkTiers> links{};
  std::array<net::LinkId, kNetworkTiers> first{-1, -1, -1};
  for (net::LinkId l = 0; l < static_cast<net::LinkId>(t.links().size()); ++l) {
    if (!net::IsNetworkLink(t.links()[l].kind)) continue;
    const size_t tier = size_t(int(t.links()[l].kind) - int(net::LinkKind::kNicToLeaf));
    if (links[tier]++ == 0) first[tier] = l;
  }
  // The NIC-to-leaf cables of idle GPUs carry none of the job's bytes; the
  // switches and the tiers above are counted whole.
  if (!use.whole()) links[0] = links[0] / t.gpus() * n;
  for (int tier = 0; tier < kNetworkTiers; ++tier) {
    if (links[size_t(tier)] == 0) continue;
    const std::string link = net::LinkName(t, first[size_t(tier)]);
    add(spec::Component::kTransceiver, fmt::format("transceiver ({})", NetworkTierName(tier)),
        2 * links[size_t(tier)], {link});
    add(spec::Component::kCable, fmt::format("cable ({})", NetworkTierName(tier)), links[size_t(tier)], {link});
  }
  // Switch chassis by tier: a chassis failure takes every partition in it.
  for (net::Tier tier : {net::Tier::kLeaf, net::Tier::kSpine, net::Tier::kCore}) {
    std::set<int32_t> chassis;
    int32_t first_chassis = -1;
    for (const net::Node& node : t.nodes()) {
      if (node.kind != net::NodeKind::kSwitch || node.tier != tier) continue;
      if (chassis.empty()) first_chassis = node.chassis;
      chassis.insert(node.chassis);
    }
    std::vector<std::string> devices;
    for (net::NodeId id = 0; id < static_cast<net::NodeId>(t.nodes().size()); ++id) {
      const net::Node& node = t.nodes()[id];
      if (node.kind == net::NodeKind::kSwitch && node.tier == tier && node.chassis == first_chassis) {
        devices.push_back("switch:" + t.NodeName(id));
      }
    }
    const spec::Component c = tier == net::Tier::kLeaf    ? spec::Component::kLeafSwitch
                              : tier == net::Tier::kSpine ? spec::Component::kSpineSwitch
                                                          : spec::Component::kCoreSwitch;
    add(c, spec::ComponentName(c), int64_t(chassis.size()), devices);
  }
  return out;
}

}  // namespace railsim::study
