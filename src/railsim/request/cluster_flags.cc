#include "railsim/request/cluster_flags.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/net/builder.h"
#include "railsim/spec/presets.h"
#include "railsim/study/flag_values.h"

namespace railsim::request {
namespace {

spec::JobTrace LoadTrace(const ClusterStudyFlags& f) {
  if (f.trace != "synthetic") return spec::LoadJobTrace(f.trace, "--trace");
  spec::SyntheticTraceOptions o;
  o.jobs = study::ParseIntFlag("--jobs", f.jobs, 1, spec::kMaxTraceJobs);
  o.arrivals_per_hour = study::ParseNumberFlag("--arrivals-per-hour", f.arrivals_per_hour, 1e-6, 1e6);
  if (!f.size_mix.empty()) spec::ParseSizeMix(f.size_mix, "--size-mix", &o);
  o.duration_median_s = study::ParseDurationFlag("--duration-median", f.duration_median, 1, spec::kMaxTraceSeconds);
  o.duration_p90_s = study::ParseDurationFlag("--duration-p90", f.duration_p90, 1, spec::kMaxTraceSeconds);
  o.seed = static_cast<uint64_t>(study::ParseIntFlag("--seed", f.seed, 0, INT64_MAX));
  return spec::MakeSyntheticTrace(o);
}

std::vector<net::Design> Designs(const std::string& text) {
  if (text.empty() || text == "all") {
    return {net::Design::kRailOnly, net::Design::kRailOptimized, net::Design::kFatTree};
  }
  std::vector<std::string> names = net::DesignNames();
  names.push_back("all");
  return {*net::ParseDesign(study::ParseChoiceFlag("--network", text, names))};
}

std::vector<std::shared_ptr<const study::ClusterFabric>> BuildFabrics(const ClusterStudyFlags& f, const spec::SystemSpec& system,
                                                               int64_t hb_size, double port_speed_Bps) {
  if (!f.topology.empty()) {
    if (!f.network.empty() && f.network != "all") throw Error("--network", "--topology gives the network; drop --network");
    if (!f.gpus.empty()) throw Error("--gpus", "--topology gives the GPUs (hosts x the HB domain size); drop --gpus");
    if (!f.radix.empty()) throw Error("--radix", "--topology gives the switches; drop --radix");
    if (f.oversubscription != "1") {
      throw Error("--oversubscription", "--topology gives the uplinks (one NIC-speed cable up per NIC below); drop "
                                        "--oversubscription");
    }
    spec::SwitchMap map = spec::LoadSwitchMap(f.topology, "--topology");
    if (map.hosts() * hb_size > study::kMaxClusterGpus) throw Error("--topology", "more than 262,144 GPUs");
    return {study::ClusterFabric::FromSwitchMap(map, static_cast<int>(hb_size), port_speed_Bps, system.hb_bw_Bps)};
  }
  if (f.gpus.empty()) throw Error("--gpus", "expected the cluster's GPU count (or --topology FILE)");
  std::vector<net::Design> designs = Designs(f.network);
  net::TopologyParams p;
  p.gpus = study::ParseIntFlag("--gpus", f.gpus, 1, study::kMaxClusterGpus);
  if (f.hb_size.empty() && p.gpus % hb_size != 0) {
    throw Error("--gpus", fmt::format("expected a multiple of {}'s HB domain size {} (or give --hb-size), got {}",
                                      system.name, hb_size, p.gpus));
  }
  p.hb_domain_size = static_cast<int>(hb_size);
  p.port_speed_Bps = port_speed_Bps;
  p.gpus_per_nic = system.gpus_per_nic;
  p.hb_bw_Bps = system.hb_bw_Bps;
  if (!f.radix.empty()) {
    p.radix = static_cast<int>(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  } else {  // 64, doubled while some design needs more than three tiers
    p.radix = 64;
    for (net::Design d : designs) {
      net::TopologyParams q = p;
      q.design = d;
      while (net::TiersNeeded(q) > 3 && q.radix < 65536) q.radix *= 2;
      p.radix = std::max(p.radix, q.radix);
    }
  }
  p.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, std::max(1, p.radix - 1));
  return study::BuildDesignFabrics(p, designs);
}

}  // namespace

study::ClusterResult RunClusterFlags(const ClusterStudyFlags& f, const std::function<void(double)>& progress) {
  spec::SystemSpec system = spec::LoadSystem(f.system, "--system");
  const int64_t hb_size =
      f.hb_size.empty() ? system.hb_domain_size : study::ParseIntFlag("--hb-size", f.hb_size, 1, 4096);
  const double port_speed = f.port_speed.empty() ? system.nic_bw_Bps : study::ParseBandwidthFlag("--port-speed", f.port_speed);
  study::ClusterOptions o;
  o.policies.clear();
  if (f.policy == "all") {
    for (const std::string& name : study::PolicyNames()) o.policies.push_back(study::ParsePolicy(name, "--policy"));
  } else {  // one policy or a comma-separated list of distinct ones
    for (const std::string& name : study::SplitFlagList("--policy", f.policy, 8)) {
      const study::SchedulerPolicy p = study::ParsePolicy(name, "--policy");
      if (std::find(o.policies.begin(), o.policies.end(), p) != o.policies.end()) {
        throw Error("--policy", "policy '" + name + "' is listed twice");
      }
      o.policies.push_back(p);
    }
  }
  o.backfill = !f.no_backfill;
  o.stretch = !f.no_stretch;
  if (!f.segment.empty()) o.segment_gpus = study::ParseIntFlag("--segment", f.segment, 1, hb_size);
  o.max_wait_s = study::ParseDurationFlag("--max-wait", f.max_wait, 0, spec::kMaxTraceSeconds);
  o.samples = study::ParseIntFlag("--samples", f.samples, 1, study::kMaxSamples);
  o.threads = f.threads.empty() ? study::DefaultThreads() : static_cast<int>(study::ParseIntFlag("--threads", f.threads, 1, 1024));
  o.progress = progress;
  o.comm_shares = study::EstimateCommShares(system, nullptr);
  spec::JobTrace trace = LoadTrace(f);
  std::vector<std::shared_ptr<const study::ClusterFabric>> fabrics = BuildFabrics(f, system, hb_size, port_speed);
  return study::RunCluster(trace, fabrics, o);
}

}  // namespace railsim::request
