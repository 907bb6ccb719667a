#include "railsim/request/collective_flags.h"


#include <algorithm>

#include <fmt/format.h>

#include "railsim/comm/moe.h"
#include "railsim/core/error.h"
#include "railsim/core/memory.h"
#include "railsim/core/units.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/presets.h"
#include "railsim/study/flag_values.h"

namespace railsim::request {
namespace {

// --baseline's default: the rail-optimized baseline of a Rail-only
// all-to-all is simulated up to this many GPUs (16.8 M flows, about 10 s and
// 300 MB) and timed analytically above.
constexpr int64_t kSimulateBaselineMaxGpus = 4096;

int64_t DefaultMaxMemoryBytes() {
  const int64_t available = AvailableMemoryBytes();
  return std::max<int64_t>(available - std::max<int64_t>(available / 10, int64_t{512} << 20), int64_t{256} << 20);
}

comm::NetworkKind ParseNetworkKind(const std::string& text, bool ideal_allowed) {
  std::vector<std::string> allowed = {"rail-only", "rail-optimized"};
  if (ideal_allowed) allowed.push_back("ideal");
  std::string n = study::ParseChoiceFlag("--network", text, allowed);
  if (n == "rail-only") return comm::NetworkKind::kRailOnly;
  if (n == "ideal") return comm::NetworkKind::kIdeal;
  return comm::NetworkKind::kRailOptimized;
}

study::CollectiveRequest ParseCluster(const ClusterFlags& f, bool ideal_allowed) {
  study::CollectiveRequest r;
  r.gpus = study::ParseIntFlag("--gpus", f.gpus, 1, spec::kMaxModelGpus);
  r.hb_domain_size = f.hb_size.empty() ? 0 : study::ParseIntFlag("--hb-size", f.hb_size, 1, spec::kMaxModelGpus);
  r.network = ParseNetworkKind(f.network, ideal_allowed);
  r.network_options.radix = f.radix.empty() ? 0 : int(study::ParseIntFlag("--radix", f.radix, 2, 65536));
  r.network_options.oversubscription = study::ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  if (!f.gpus_per_domain.empty()) {
    r.network_options.gpus_per_domain = study::ParseIntFlag("--gpus-per-domain", f.gpus_per_domain, 1, spec::kMaxModelGpus);
  }
  r.simulate = f.simulate;
  if (f.routing != kSystemRouting) {
    r.routing = *net::ParseRouting(study::ParseChoiceFlag("--routing", f.routing, {"ecmp", "d-mod-k"}));
  }
  r.seed = static_cast<uint64_t>(study::ParseIntFlag("--seed", f.seed, 0, INT64_MAX));
  if (f.max_memory == kAvailableMemory) {
    r.max_memory_bytes = DefaultMaxMemoryBytes();
  } else {
    const double bytes = units::ParseBytes(f.max_memory, "--max-memory");
    if (!(bytes >= 1 << 20) || bytes > 1e18) {
      throw Error("--max-memory", fmt::format("expected a size in [1MiB, 1EB], got {}", Quoted(f.max_memory)));
    }
    r.max_memory_bytes = int64_t(bytes);
  }
  static_assert(study::kMaxThreads <= sim::kMaxThreads, "the simulator takes every thread --threads accepts");
  r.threads = study::ParseThreadsFlag(f.threads);
  r.max_gpus = study::ParseIntFlag("--max-gpus", f.max_gpus, 1, net::kHardMaxBuildGpus);
  if (!f.export_links.empty() && !f.simulate) {
    throw Error("--export-links", "needs --simulate (the link loads come from the simulation)");
  }
  r.system = spec::LoadSystem(f.system, "--system");
  return r;
}

}  // namespace

AllToAllRun RunAllToAllFlags(const AllToAllFlags& f, const std::function<void(double)>& progress,
                             sim::Partition* partition) {
  AllToAllRun run;
  study::CollectiveRequest& r = run.request;
  r = ParseCluster(f.cluster, false);
  if (!f.hb_bw.empty()) r.hb_bw_Bps = study::ParseBandwidthFlag("--hb-bw", f.hb_bw);
  if (!f.nic_bw.empty()) r.nic_bw_Bps = study::ParseBandwidthFlag("--nic-bw", f.nic_bw);
  double per_pair = study::ParseBytesFlag("--bytes-per-pair", f.bytes_per_pair, 1e12);
  r.plan_options.pipelined = study::ParseChoiceFlag("--schedule", f.schedule, {"sequential", "pipelined"}) == "pipelined";
  r.plan_options.chunks = int(study::ParseIntFlag("--chunks", f.chunks, 2, comm::kMaxForwardChunks));
  r.op = comm::Op::kAllToAll;
  r.group = {r.gpus, 1};
  r.bytes = per_pair * double(r.gpus);
  bool simulate_baseline = r.simulate && r.gpus <= kSimulateBaselineMaxGpus;
  if (f.baseline != kBaselineBySize) {
    simulate_baseline = study::ParseChoiceFlag("--baseline", f.baseline, {"simulate", "analytic"}) == "simulate";
    if (r.network != comm::NetworkKind::kRailOnly || !r.simulate) {
      throw Error("--baseline", "applies to --network rail-only with --simulate (the baseline is rail-optimized)");
    }
  }
  r.progress = progress;
  r.partition = partition;
  run.outcome = study::RunCollective(r);
  if (r.network == comm::NetworkKind::kRailOnly) {
    study::CollectiveRequest opt = r;
    opt.network = comm::NetworkKind::kRailOptimized;
    opt.simulate = simulate_baseline;
    run.baseline = study::RunCollective(opt);
  }
  return run;
}

CollectiveRun RunCollectiveFlags(const CollectiveFlags& f, const std::function<void(double)>& progress,
                                 sim::Partition* partition) {
  CollectiveRun run;
  study::CollectiveRequest& r = run.request;
  r = ParseCluster(f.cluster, true);
  r.plan_options.chunks = int(study::ParseIntFlag("--chunks", f.chunks, 2, comm::kMaxForwardChunks));
  std::vector<std::string> ops = comm::OpNames();
  ops.push_back("moe-dispatch");
  const std::string op = study::ParseChoiceFlag("--op", f.op, ops);
  const bool moe = op == "moe-dispatch";
  if (!moe) r.op = *comm::ParseOp(op);
  r.algorithm = *comm::ParseAlgorithm(study::ParseChoiceFlag("--algorithm", f.algorithm, comm::AlgorithmNames()));
  r.plan_options.protocol = *comm::ParseProtocol(study::ParseChoiceFlag("--protocol", f.protocol, comm::ProtocolNames()));
  if (moe && !f.bytes.empty()) {
    throw Error("--bytes", "moe-dispatch sends what --model's tokens need; leave --bytes out");
  }
  if (!moe) {
    if (f.bytes.empty()) throw Error("--bytes", "needed: the buffer per member");
    r.bytes = study::ParseBytesFlag("--bytes", f.bytes, 1e15);
  }
  const std::string schedule = study::ParseChoiceFlag("--schedule", f.schedule, {"auto", "sequential", "pipelined"});
  r.plan_options.pipelined = schedule == "pipelined" || (schedule == "auto" && moe);
  // Every flag is checked, also those only moe-dispatch reads.
  const int64_t micro_batch = study::ParseIntFlag("--micro-batch-size", f.micro_batch, 1, spec::kMaxGlobalBatch);
  spec::Strategy s;
  ParseMoeFlags(f.moe, &s);
  s.tp = int(study::ParseIntFlag("--tp", f.tp, 1, 1 << 20));
  s.pp = int(study::ParseIntFlag("--pp", f.pp, 1, 1 << 20));
  s.cp = int(study::ParseIntFlag("--cp", f.cp, 1, 1 << 20));
  s.ep = int(study::ParseIntFlag("--ep", f.ep, 1, 1 << 20));
  s.etp = ParseExpertTpFlag("--expert-tensor-parallel-size", f.etp);
  std::optional<spec::ModelSpec> model;
  CheckSeqLengthNeedsModel(f.model);
  if (!f.model.model.empty()) {
    model = LoadModelFlags(f.model);
    spec::ValidateDegrees(*model, s);
  }
  const int64_t others = int64_t{s.tp} * s.pp * s.cp;
  s.dp = study::ParseDpFlag(f.dp, s.tp, s.pp, s.cp, r.gpus);
  if (others * s.dp != r.gpus) {
    throw Error("--dp", fmt::format("tp x pp x dp x cp = {} must equal --gpus {}", others * s.dp, r.gpus));
  }
  if (std::string problem = spec::ExpertFoldingProblem(s); !problem.empty()) {
    throw Error(s.expert_tp() != s.tp ? "--expert-tensor-parallel-size" : "--ep", problem);
  }
  const std::string g = study::ParseChoiceFlag("--group", f.group, study::GroupKindNames());
  const spec::Placement placement = spec::LoadPlacement(f.placement, "--placement");
  spec::ValidatePlacement(placement, s, "--placement");
  const auto kind =
      study::GroupKind(std::find(study::GroupKindNames().begin(), study::GroupKindNames().end(), g) - study::GroupKindNames().begin());
  r.group = study::PlacedGroupFamily(s, placement, kind, study::JobDomainSize(r));
  if (moe) {
    if (!model || !model->is_moe()) throw Error("--model", "moe-dispatch needs an MoE model (num_experts > 0)");
    if (g != "ep") throw Error("--group", "moe-dispatch runs on the ep groups: --group ep");
    spec::ValidateMoeOptions(*model, s);
    comm::MoeDispatch d;
    // With tp > 1 MoE layers run sequence-parallel: each TP rank dispatches 1/tp of the tokens.
    d.tokens = double(micro_batch) * model->seq_length / s.cp / s.tp;
    d.bytes_per_token = comm::DispatchBytesPerToken(model->hidden_size, s.moe_dispatch_precision);
    d.experts = model->num_experts;
    d.topk = model->moe_router_topk;
    d.max_domains = s.moe_max_domains;
    d.imbalance = s.expert_load_imbalance();
    d.chunks = r.plan_options.pipelined ? r.plan_options.chunks : 1;
    r.moe = d;
    r.moe_algorithm = s.moe_alltoall;
    r.bytes = d.tokens * d.bytes_per_token * d.topk;
  }
  r.progress = progress;
  r.partition = partition;
  run.outcome = study::RunCollective(r);
  // Only now that nothing was refused (a bad flag gives its error alone).
  if (model) PrintWarning(ModelDefaultsWarning(f.model, *model));
  return run;
}

}  // namespace railsim::request
