#include "railsim/study/collective_study.h"

#include <array>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/mpi/session.h"

namespace railsim::study {
namespace {

// "17.09 GiB", "64 MiB": memory sizes in refusals.
std::string Memory(int64_t bytes) {
  constexpr double kMiB = 1024.0 * 1024;
  if (bytes < (int64_t{1} << 30)) return fmt::format("{:.0f} MiB", double(bytes) / kMiB);
  return fmt::format("{:.2f} GiB", double(bytes) / (1024 * kMiB));
}

net::Routing RoutingOf(const CollectiveRequest& r) {
  if (r.routing) return *r.routing;
  return r.system.nic_routing == "d-mod-k" ? net::Routing::kDModK : net::Routing::kEcmp;
}

}  // namespace

const std::vector<std::string>& GroupKindNames() {
  static const std::vector<std::string> names = {"tp", "cp", "ep", "dp", "pp", "all"};
  return names;
}

comm::GroupFamily PlacedGroupFamily(const spec::Strategy& s, const spec::Placement& p, GroupKind kind,
                                    int64_t hb_domain_size) {
  if (kind == GroupKind::kAll) return {s.gpus(), 1};
  using spec::Dim;
  const int64_t size = kind == GroupKind::kTp   ? s.tp
                       : kind == GroupKind::kCp ? s.cp
                       : kind == GroupKind::kEp ? s.ep
                       : kind == GroupKind::kDp ? s.dp
                                                : s.pp;
  // The expert-parallel group is the expert layers' (spec/placement.h).
  const spec::Layers grid = kind == GroupKind::kEp ? spec::Layers::kExpert : spec::Layers::kAttention;
  std::vector<int64_t> members;
  for (int64_t j = 0; j < size; ++j) {
    std::array<int64_t, spec::kDims> index = {};
    switch (kind) {
      case GroupKind::kTp: index[int(Dim::kTp)] = j; break;
      case GroupKind::kCp: index[int(Dim::kCp)] = j; break;
      case GroupKind::kEp: index[int(Dim::kEp)] = j; break;
      case GroupKind::kPp: index[int(Dim::kPp)] = j; break;
      case GroupKind::kDp: index[int(Dim::kDp)] = j; break;
      case GroupKind::kAll: break;
    }
    members.push_back(spec::GpuOf(p, s, index, grid));
  }
  const comm::GroupLayout g = comm::LayoutOfMembers(members.data(), size, hb_domain_size);
  return {g.size, g.stride};
}

int64_t JobDomainSize(const CollectiveRequest& r) {
  if (r.network_options.gpus_per_domain > 0) return r.network_options.gpus_per_domain;
  return r.hb_domain_size > 0 ? r.hb_domain_size : r.system.hb_domain_size;
}

CollectiveOutcome RunCollective(const CollectiveRequest& r) {
  CollectiveOutcome out;
  out.cluster = perf::MakeClusterNetwork(r.system, r.gpus, r.network, r.hb_domain_size, r.network_options);
  comm::ClusterFabrics& f = out.cluster.fabrics;
  if (r.hb_bw_Bps) f.hb = {*r.hb_bw_Bps, 1, 0};
  if (r.nic_bw_Bps) f.nic = {*r.nic_bw_Bps, 1, 0};
  // Line-rate analyses leave NCCL's latencies and protocol factors out too.
  if (r.hb_bw_Bps || r.nic_bw_Bps) f.nccl.enabled = false;
  if (!r.group.Tiles(r.gpus)) {
    throw Error("--gpus", fmt::format("a group of {} ranks {} apart does not tile {} GPUs", r.group.size,
                                      r.group.stride, r.gpus));
  }
  const comm::GroupLayout layout = comm::LayoutOf(r.group.size, r.group.stride, f.hb_domain_size);
  if (r.moe) {
    out.plan = comm::MoeDispatchPlan(*r.moe, r.moe_algorithm, layout, f, &out.analytic_s);
  } else {
    std::string why = comm::AlgorithmInapplicable(r.op, r.algorithm, layout, f);
    if (!why.empty()) {
      throw Error("--algorithm", fmt::format("{} cannot run {} here: {}", comm::AlgorithmName(r.algorithm),
                                             comm::OpName(r.op), why));
    }
    why = comm::ProtocolInapplicable(r.op, r.algorithm, r.plan_options.protocol, layout, f);
    if (!why.empty()) {
      throw Error("--protocol", fmt::format("{} cannot run {} by {} here: {}",
                                            comm::ProtocolName(r.plan_options.protocol), comm::OpName(r.op),
                                            comm::AlgorithmName(r.algorithm), why));
    }
    out.plan = *comm::MakePlan(r.op, r.algorithm, r.bytes, layout, f, r.plan_options, &out.analytic_s);
  }
  for (int i = 0; i < out.plan.count; ++i) out.phase_analytic_s[i] = comm::PhaseTime(out.plan.phases[i], f);
  if (!r.simulate) return out;

  if (r.network == comm::NetworkKind::kIdeal) {
    throw Error("--simulate", "the ideal network has no graph to simulate; use rail-only or rail-optimized");
  }
  // The whole domains are built; the plan's ranks are the GPUs used in each.
  const net::TopologyParams p = perf::GraphParams(
      r.system, out.cluster,
      r.network == comm::NetworkKind::kRailOnly ? net::Design::kRailOnly : net::Design::kRailOptimized, r.gpus);
  net::ValidateTopologyParams(p, r.max_gpus > 0 ? r.max_gpus : net::kMaxBuildGpus);
  out.topology = net::BuildTopology(p);
  const int ranks = r.partition ? r.partition->size() : 1;
  const int64_t memory = sim::EstimateMemoryBytes(out.plan, out.topology, r.threads, ranks);
  if (r.max_memory_bytes > 0 && memory > r.max_memory_bytes) {
    throw Error("--max-memory",
                fmt::format("the simulation would hold {} flows at once and need about {}{}, more than the limit {}; "
                            "fewer GPUs, a larger --max-memory on a machine that has it, or more MPI ranks (mpirun "
                            "-np P: each holds about 1/P of the flows{}) can help",
                            sim::PeakFlows(out.plan, r.gpus), Memory(memory),
                            ranks > 1 ? fmt::format(" on each of {} ranks", ranks) : "", Memory(r.max_memory_bytes),
                            mpi::MpiCompiledIn() ? "" : "; this railsim needs a build with -DRAILSIM_MPI=ON"));
  }
  out.routing = RoutingOf(r);
  out.seed = r.seed;
  sim::SimOptions so;
  so.route = {out.routing, r.seed};
  so.hb_efficiency = f.hb.efficiency;
  so.nic_efficiency = f.nic.efficiency;
  so.domain_use = out.cluster.domain_use;
  so.threads = r.threads;
  so.progress = r.progress;
  so.partition = r.partition;
  out.sim = sim::Simulate(out.topology, out.plan, so);
  out.simulated = true;
  return out;
}

}  // namespace railsim::study
