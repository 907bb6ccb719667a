// `railsim alltoall` (the paper's forwarded all-to-all against the
// rail-optimized network) and `railsim collective` (any collective on a group
// placed as the performance model places it), analytic and simulated, in one
// process or, under mpirun, with the simulations' flows split over the ranks.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/mpi_ranks.h"
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
#include "railsim/study/collective_flags.h"
#include "railsim/mpi/partition.h"

namespace railsim::cli {
namespace {

using study::ClusterFlags;
using study::kAvailableMemory;
using study::kBaselineBySize;
using study::kSystemRouting;

// A progress line while `run` simulates, cleared afterwards.
template <typename Run>
auto WithProgress(Run run) {
  bool shown = false;
  auto result = run(ProgressLine("simulate", "of flows", &shown));
  if (shown) PrintStderr("\n");
  return result;
}

// Runs `run(progress, partition)` and hands its result to `print`. Under
// mpirun (MPI built in; cli/mpi_ranks.h) every rank runs it with its share
// of every simulation's flows (mpi/partition.h), and rank 0 alone
// shows progress and prints; otherwise one process runs it all.
template <typename Run, typename Print>
int RunOnRanks(Run run, Print print) {
  const mpi::MpiSession* ranks = RankSession();
  if (!ranks) {
    print(WithProgress([&](auto progress) { return run(progress, nullptr); }));
    return 0;
  }
  const mpi::MpiSession& mpi = *ranks;
  try {
    std::unique_ptr<sim::Partition> partition = mpi::NewMpiPartition(mpi);
    if (mpi.rank() == 0) {
      print(WithProgress([&](auto progress) { return run(progress, partition.get()); }));
    } else {
      run(std::function<void(double)>(), partition.get());
    }
  } catch (const Error& e) {
    EndRanks(mpi, fmt::format("railsim: error: {}\n", e.what()), 2);
  } catch (const std::exception& e) {
    EndRanks(mpi, fmt::format("railsim: internal error: {}\n", e.what()), 3);
  }
  return 0;
}

// Writes --export-links when it is given, and prints `text`.
void Emit(const ClusterFlags& cluster, const study::CollectiveOutcome& o, const std::string& text) {
  if (!cluster.export_links.empty()) WriteTextFile(cluster.export_links, report::LinksCsv(o), "--export-links");
  PrintStdout(text);
}

void AddClusterFlags(CLI::App* sub, ClusterFlags* f, std::string* format, bool ideal_allowed) {
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
  sub->add_option("--format", *format, "table or json")->capture_default_str();
}

Action SetupAllToAll(CLI::App* sub) {
  struct Flags : study::AllToAllFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddClusterFlags(sub, &f->cluster, &f->format, false);
  sub->add_option("--hb-bw", f->hb_bw, "HB bandwidth per GPU per direction, used as given (no efficiency, no latency)");
  sub->add_option("--nic-bw", f->nic_bw, "NIC bandwidth per GPU per direction, used as given");
  sub->add_option("--bytes-per-pair", f->bytes_per_pair, "bytes each GPU sends to every other GPU")->required();
  sub->add_option("--schedule", f->schedule, "Rail-only forwarding: sequential or pipelined")->capture_default_str();
  sub->add_option("--chunks", f->chunks, "chunks of the pipelined schedule")->capture_default_str();
  sub->add_option("--baseline", f->baseline,
                  "Rail-only with --simulate: simulate or analytic (time the rail-optimized baseline how)")
      ->capture_default_str();
  return [f]() {
    Format format = Format::kTable;
    return RunOnRanks(
        [&](const std::function<void(double)>& progress, sim::Partition* partition) {
          format = ParseFormatFlag(f->format, false);  // on every rank, so that it fails on each
          return study::RunAllToAllFlags(*f, progress, partition);
        },
        [&](const study::AllToAllRun& run) {
          const study::CollectiveOutcome& o = run.outcome;
          Emit(f->cluster, o, format == Format::kJson ? report::AllToAllJson(run.request, o, run.baseline)
                                                     : report::AllToAllTable(run.request, o, run.baseline));
        });
  };
}

Action SetupCollective(CLI::App* sub) {
  struct Flags : study::CollectiveFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddClusterFlags(sub, &f->cluster, &f->format, true);
  sub->add_option("--gpus-per-domain", f->cluster.gpus_per_domain,
                  "the ranks use N GPUs of each HB domain (default: all K); --gpus is a multiple of N, the domains "
                  "and the network are built whole");
  sub->add_option("--op", f->op,
                  "all-reduce, reduce-scatter, all-gather, all-to-all, broadcast, send-recv, or moe-dispatch "
                  "(one MoE layer's token dispatch of --model on the ep groups)")
      ->required();
  sub->add_option("--bytes", f->bytes, "buffer per member (all-to-all: what each member sends in total)");
  sub->add_option("--micro-batch-size", f->micro_batch, "moe-dispatch: sequences per micro-batch")
      ->capture_default_str();
  AddMoeFlags(sub, &f->moe);
  sub->add_option("--group", f->group, "tp, cp, ep, dp, pp or all: the groups as estimate places them")->required();
  sub->add_option("--algorithm", f->algorithm, "auto, ring, tree, hierarchical, in-switch, direct, forwarded, nvls-tree, pat or collnet")
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
  sub->add_option("--expert-tensor-parallel-size", f->etp,
                  "tensor-parallel degree of the routed experts, or tp (Megatron-Core's default): the ep groups "
                  "run over etp x ep x expert-dp (MoE parallel folding)")
      ->capture_default_str();
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
    Format format = Format::kTable;
    return RunOnRanks(
        [&](const std::function<void(double)>& progress, sim::Partition* partition) {
          format = ParseFormatFlag(f->format, false);  // on every rank, so that it fails on each
          return study::RunCollectiveFlags(*f, progress, partition);
        },
        [&](const study::CollectiveRun& run) {
          const study::CollectiveOutcome& o = run.outcome;
          Emit(f->cluster, o, format == Format::kJson ? report::CollectiveJson(run.request, o)
                                                     : report::CollectiveTable(run.request, o));
        });
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
