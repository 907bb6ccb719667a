// `railsim alltoall` (the paper's forwarded all-to-all against the
// rail-optimized network) and `railsim collective` (any collective on a group
// placed as the performance model places it), analytic and simulated.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/model_flags.h"
#include "railsim/cli/strategy_flags.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/report/collective_report.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/strategy.h"
#include "railsim/study/collective_study.h"

namespace railsim::cli {
namespace {

// --routing's default: whatever the system's preset says.
constexpr const char* kSystemRouting = "(the system's nic_routing)";
// --max-memory's default: what the kernel says is available, less a margin
// for the rest of the machine (a tenth, at least 512 MiB).
constexpr const char* kAvailableMemory = "(available memory less 10%)";
// --baseline's default: the rail-optimized baseline of a Rail-only
// all-to-all is simulated up to this many GPUs (16.8 M flows, about 10 s and
// 300 MB) and timed analytically above.
constexpr int64_t kSimulateBaselineMaxGpus = 4096;
constexpr const char* kBaselineBySize = "(simulate up to 4096 GPUs, analytic above)";

// MemAvailable from /proc/meminfo; physical memory where that is missing.
int64_t AvailableMemoryBytes() {
  if (FILE* in = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, in)) {
      if (std::sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    }
    std::fclose(in);
    if (kib > 0) return int64_t{kib} * 1024;
  }
  return int64_t{sysconf(_SC_PHYS_PAGES)} * sysconf(_SC_PAGESIZE);
}

int64_t DefaultMaxMemoryBytes() {
  const int64_t available = AvailableMemoryBytes();
  return std::max<int64_t>(available - std::max<int64_t>(available / 10, int64_t{512} << 20), int64_t{256} << 20);
}

// Flags both commands share: the cluster, the network, the simulation.
struct ClusterFlags {
  std::string system, gpus, hb_size;
  std::string network = "rail-optimized";
  std::string radix, oversubscription = "1";
  bool simulate = false;
  std::string routing = kSystemRouting, seed = "0";
  std::string max_memory = kAvailableMemory, threads = "1";
  std::string max_gpus = std::to_string(net::kMaxBuildGpus);
  std::string export_links;
  std::string format = "table";
};

void AddClusterFlags(CLI::App* sub, ClusterFlags* f, bool ideal_allowed) {
  sub->add_option("--system", f->system, "system preset or JSON file")->required();
  sub->add_option("--gpus", f->gpus, "total GPUs N")->required();
  sub->add_option("--hb-size", f->hb_size, "override the system's HB domain size K");
  sub->add_option("--network,--design", f->network,
                  ideal_allowed ? "rail-only, rail-optimized or ideal" : "rail-only or rail-optimized")
      ->capture_default_str();
  sub->add_option("--radix", f->radix, "switch radix (default 64, larger if 64 needs over three tiers)");
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio")->capture_default_str();
  sub->add_flag("--simulate", f->simulate, "also simulate every flow on the built network");
  sub->add_option("--routing", f->routing, "ecmp or d-mod-k")->capture_default_str();
  sub->add_option("--seed", f->seed, "ECMP hash seed")->capture_default_str();
  sub->add_option("--max-memory", f->max_memory, "refuse simulations estimated to need more memory than this")
      ->capture_default_str();
  sub->add_option("--threads", f->threads, "simulator threads (the results do not depend on them)")
      ->capture_default_str();
  sub->add_option("--max-gpus", f->max_gpus, "refuse to build graphs larger than this")->capture_default_str();
  sub->add_option("--export-links", f->export_links, "with --simulate: one CSV row per directed link");
  sub->add_option("--format", f->format, "table or json")->capture_default_str();
}

comm::NetworkKind ParseNetworkKind(const std::string& text, bool ideal_allowed) {
  std::vector<std::string> allowed = {"rail-only", "rail-optimized"};
  if (ideal_allowed) allowed.push_back("ideal");
  std::string n = ParseChoiceFlag("--network", text, allowed);
  if (n == "rail-only") return comm::NetworkKind::kRailOnly;
  if (n == "ideal") return comm::NetworkKind::kIdeal;
  return comm::NetworkKind::kRailOptimized;
}

study::CollectiveRequest ParseCluster(const ClusterFlags& f, bool ideal_allowed, Format* format) {
  *format = ParseFormatFlag(f.format, false);
  study::CollectiveRequest r;
  r.gpus = ParseIntFlag("--gpus", f.gpus, 1, spec::kMaxModelGpus);
  r.hb_domain_size = f.hb_size.empty() ? 0 : ParseIntFlag("--hb-size", f.hb_size, 1, spec::kMaxModelGpus);
  r.network = ParseNetworkKind(f.network, ideal_allowed);
  r.network_options.radix = f.radix.empty() ? 0 : int(ParseIntFlag("--radix", f.radix, 2, 65536));
  r.network_options.oversubscription = ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  r.simulate = f.simulate;
  if (f.routing != kSystemRouting) {
    r.routing = *net::ParseRouting(ParseChoiceFlag("--routing", f.routing, {"ecmp", "d-mod-k"}));
  }
  r.seed = static_cast<uint64_t>(ParseIntFlag("--seed", f.seed, 0, INT64_MAX));
  if (f.max_memory == kAvailableMemory) {
    r.max_memory_bytes = DefaultMaxMemoryBytes();
  } else {
    const double bytes = units::ParseBytes(f.max_memory, "--max-memory");
    if (!(bytes >= 1 << 20) || bytes > 1e18) {
      throw Error("--max-memory", fmt::format("expected a size in [1MiB, 1EB], got {}", Quoted(f.max_memory)));
    }
    r.max_memory_bytes = int64_t(bytes);
  }
  r.threads = int(ParseIntFlag("--threads", f.threads, 1, sim::kMaxThreads));
  r.max_gpus = ParseIntFlag("--max-gpus", f.max_gpus, 1, net::kHardMaxBuildGpus);
  if (!f.export_links.empty() && !f.simulate) {
    throw Error("--export-links", "needs --simulate (the link loads come from the simulation)");
  }
  r.system = spec::LoadSystem(f.system, "--system");
  return r;
}

// Runs the request with a progress line, clearing it afterwards.
study::CollectiveOutcome RunWithProgress(study::CollectiveRequest r) {
  bool shown = false;
  r.progress = ProgressLine("simulate", "of flows", &shown);
  study::CollectiveOutcome o = study::RunCollective(r);
  if (shown) PrintStderr("\n");
  return o;
}

Action SetupAllToAll(CLI::App* sub) {
  struct Flags {
    ClusterFlags cluster;
    std::string hb_bw, nic_bw, bytes_per_pair;
    std::string schedule = "sequential";
    std::string chunks = std::to_string(comm::kDefaultForwardChunks);
    std::string baseline = kBaselineBySize;
  };
  auto f = std::make_shared<Flags>();
  AddClusterFlags(sub, &f->cluster, false);
  sub->add_option("--hb-bw", f->hb_bw, "HB bandwidth per GPU per direction, used as given (no efficiency, no latency)");
  sub->add_option("--nic-bw", f->nic_bw, "NIC bandwidth per GPU per direction, used as given");
  sub->add_option("--bytes-per-pair", f->bytes_per_pair, "bytes each GPU sends to every other GPU")->required();
  sub->add_option("--schedule", f->schedule, "Rail-only forwarding: sequential or pipelined")->capture_default_str();
  sub->add_option("--chunks", f->chunks, "chunks of the pipelined schedule")->capture_default_str();
  sub->add_option("--baseline", f->baseline,
                  "Rail-only with --simulate: simulate or analytic (time the rail-optimized baseline how)")
      ->capture_default_str();
  return [f]() {
    Format format;
    study::CollectiveRequest r = ParseCluster(f->cluster, false, &format);
    if (!f->hb_bw.empty()) r.hb_bw_Bps = ParseBandwidthFlag("--hb-bw", f->hb_bw);
    if (!f->nic_bw.empty()) r.nic_bw_Bps = ParseBandwidthFlag("--nic-bw", f->nic_bw);
    double per_pair = ParseBytesFlag("--bytes-per-pair", f->bytes_per_pair, 1e12);
    r.plan_options.pipelined = ParseChoiceFlag("--schedule", f->schedule, {"sequential", "pipelined"}) == "pipelined";
    r.plan_options.chunks = int(ParseIntFlag("--chunks", f->chunks, 2, comm::kMaxForwardChunks));
    r.op = comm::Op::kAllToAll;
    r.group = {r.gpus, 1};
    r.bytes = per_pair * double(r.gpus);
    bool simulate_baseline = r.simulate && r.gpus <= kSimulateBaselineMaxGpus;
    if (f->baseline != kBaselineBySize) {
      simulate_baseline = ParseChoiceFlag("--baseline", f->baseline, {"simulate", "analytic"}) == "simulate";
      if (r.network != comm::NetworkKind::kRailOnly || !r.simulate) {
        throw Error("--baseline", "applies to --network rail-only with --simulate (the baseline is rail-optimized)");
      }
    }
    study::CollectiveOutcome o = RunWithProgress(r);
    std::optional<study::CollectiveOutcome> baseline;
    if (r.network == comm::NetworkKind::kRailOnly) {
      study::CollectiveRequest opt = r;
      opt.network = comm::NetworkKind::kRailOptimized;
      opt.simulate = simulate_baseline;
      baseline = RunWithProgress(opt);
    }
    if (!f->cluster.export_links.empty()) {
      WriteTextFile(f->cluster.export_links, report::LinksCsv(o), "--export-links");
    }
    PrintStdout(format == Format::kJson ? report::AllToAllJson(r, o, baseline) : report::AllToAllTable(r, o, baseline));
    return 0;
  };
}

Action SetupCollective(CLI::App* sub) {
  struct Flags {
    ClusterFlags cluster;
    std::string op, bytes, group;
    std::string algorithm = "auto";
    std::string protocol = "auto";
    ModelFlags model;
    std::string tp = "1", pp = "1", dp, cp = "1", ep = "1";
    std::string schedule = "auto";
    std::string chunks = std::to_string(comm::kDefaultForwardChunks);
    std::string micro_batch = "1";
    std::string placement = "tp-cp-ep-dp-pp";
    MoeFlags moe;
  };
  auto f = std::make_shared<Flags>();
  AddClusterFlags(sub, &f->cluster, true);
  sub->add_option("--op", f->op,
                  "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send-recv, or moe-dispatch "
                  "(one MoE layer's token dispatch of --model on the ep groups)")
      ->required();
  sub->add_option("--bytes", f->bytes, "buffer per member (all-to-all: what each member sends in total)");
  sub->add_option("--micro-batch-size", f->micro_batch, "moe-dispatch: sequences per micro-batch")
      ->capture_default_str();
  AddMoeFlags(sub, &f->moe);
  sub->add_option("--group", f->group, "tp, cp, ep, dp, pp or all: the groups as estimate places them")->required();
  sub->add_option("--algorithm", f->algorithm, "auto, ring, tree, hierarchical, in-switch, direct or forwarded")
      ->capture_default_str();
  sub->add_option("--protocol", f->protocol,
                  "NCCL protocol: ll, ll128, simple, or auto (NCCL's least estimated time; needs the system's "
                  "NCCL model)")
      ->capture_default_str();
  AddModelFlags(sub, &f->model, "the model (checks the degrees against it)", false);
  sub->add_option("--tp", f->tp, "tensor-parallel degree")->capture_default_str();
  sub->add_option("--pp", f->pp, "pipeline-parallel degree")->capture_default_str();
  sub->add_option("--dp", f->dp, "data-parallel degree (default N / (tp x pp x cp))");
  sub->add_option("--cp", f->cp, "context-parallel degree")->capture_default_str();
  sub->add_option("--ep", f->ep, "expert-parallel degree")->capture_default_str();
  sub->add_option("--schedule", f->schedule,
                  "forwarded all-to-all and moe-dispatch: sequential, pipelined, or auto (sequential for "
                  "all-to-all, pipelined for moe-dispatch as DeepEP runs it)")
      ->capture_default_str();
  sub->add_option("--chunks", f->chunks, "chunks of the pipelined schedule")->capture_default_str();
  sub->add_option("--placement", f->placement,
                  "rank order fastest first (tp-cp-ep-dp-pp is Megatron's) or a placement file, as estimate "
                  "takes it: where the group's members sit")
      ->capture_default_str();
  return [f]() {
    Format format;
    study::CollectiveRequest r = ParseCluster(f->cluster, true, &format);
    r.plan_options.chunks = int(ParseIntFlag("--chunks", f->chunks, 2, comm::kMaxForwardChunks));
    std::vector<std::string> ops = comm::OpNames();
    ops.push_back("moe-dispatch");
    const std::string op = ParseChoiceFlag("--op", f->op, ops);
    const bool moe = op == "moe-dispatch";
    if (!moe) r.op = *comm::ParseOp(op);
    r.algorithm = *comm::ParseAlgorithm(ParseChoiceFlag("--algorithm", f->algorithm, comm::AlgorithmNames()));
    r.plan_options.protocol = *comm::ParseProtocol(ParseChoiceFlag("--protocol", f->protocol, comm::ProtocolNames()));
    if (moe && !f->bytes.empty()) {
      throw Error("--bytes", "moe-dispatch sends what --model's tokens need; leave --bytes out");
    }
    if (!moe) {
      if (f->bytes.empty()) throw Error("--bytes", "needed: the buffer per member");
      r.bytes = ParseBytesFlag("--bytes", f->bytes, 1e15);
    }
    const std::string schedule = ParseChoiceFlag("--schedule", f->schedule, {"auto", "sequential", "pipelined"});
    r.plan_options.pipelined = schedule == "pipelined" || (schedule == "auto" && moe);
    // Every flag is checked, also those only moe-dispatch reads.
    const int64_t micro_batch = ParseIntFlag("--micro-batch-size", f->micro_batch, 1, spec::kMaxGlobalBatch);
    spec::Strategy s;
    ParseMoeFlags(f->moe, &s);
    s.tp = int(ParseIntFlag("--tp", f->tp, 1, 1 << 20));
    s.pp = int(ParseIntFlag("--pp", f->pp, 1, 1 << 20));
    s.cp = int(ParseIntFlag("--cp", f->cp, 1, 1 << 20));
    s.ep = int(ParseIntFlag("--ep", f->ep, 1, 1 << 20));
    std::optional<spec::ModelSpec> model;
    CheckSeqLengthNeedsModel(f->model);
    if (!f->model.model.empty()) {
      model = LoadModelFlags(f->model);
      spec::ValidateDegrees(*model, s);
    }
    const int64_t others = int64_t{s.tp} * s.pp * s.cp;
    s.dp = ParseDpFlag(f->dp, s.tp, s.pp, s.cp, r.gpus);
    if (others * s.dp != r.gpus) {
      throw Error("--dp", fmt::format("tp x pp x dp x cp = {} must equal --gpus {}", others * s.dp, r.gpus));
    }
    if (s.dp % s.ep != 0) throw Error("--ep", fmt::format("expected a divisor of dp {}, got {}", s.dp, s.ep));
    const std::string g = ParseChoiceFlag("--group", f->group, study::GroupKindNames());
    const spec::Placement placement = spec::LoadPlacement(f->placement, "--placement");
    spec::ValidatePlacement(placement, s, "--placement");
    const auto kind = study::GroupKind(std::find(study::GroupKindNames().begin(), study::GroupKindNames().end(), g) -
                                       study::GroupKindNames().begin());
    r.group = study::PlacedGroupFamily(s, placement, kind, r.hb_domain_size ? r.hb_domain_size
                                                                             : r.system.hb_domain_size);
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
    study::CollectiveOutcome o = RunWithProgress(r);
    if (!f->cluster.export_links.empty()) {
      WriteTextFile(f->cluster.export_links, report::LinksCsv(o), "--export-links");
    }
    PrintStdout(format == Format::kJson ? report::CollectiveJson(r, o) : report::CollectiveTable(r, o));
    return 0;
  };
}

}  // namespace

std::vector<Command> CommCommands() {
  return {
      {"alltoall", "uniform all-to-all on Rail-only (forwarded) or rail-optimized, analytic and simulated",
       SetupAllToAll, "  railsim alltoall --system dgx-a100 --gpus 72 --hb-bw 300GB/s --nic-bw 200Gbps \\\n      --bytes-per-pair 1MB --network rail-only --simulate"},
      {"collective", "one collective on a parallel group as estimate places it, analytic and simulated",
       SetupCollective, "  railsim collective --op moe-dispatch --model deepseek-v3 --system dgx-h100 --gpus 2048 \\\n      --group ep --ep 64 --pp 16 --moe-max-domains 4 --network rail-only --simulate"},
  };
}

}  // namespace railsim::cli
