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
#include "railsim/cli/flag_rows.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/mpi_ranks.h"
#include "railsim/cli/model_flags.h"
#include "railsim/perf/layer_cost.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/units.h"
#include "railsim/net/builder.h"
#include "railsim/report/collective_report.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/strategy.h"
#include "railsim/request/collective_flags.h"
#include "railsim/mpi/partition.h"

namespace railsim::cli {
namespace {

using request::ClusterFlags;

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

// The outputs: the CLI's alone, so not rows of the commands' tables.
void AddOutputFlags(CLI::App* sub, ClusterFlags* f, std::string* format) {
  sub->add_option("--export-links", f->export_links, "with --simulate: one CSV row per directed link");
  sub->add_option("--format", *format, "table or json")->capture_default_str();
}

Action SetupAllToAll(CLI::App* sub) {
  struct Flags : request::AllToAllFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddFlagRows(sub, request::AllToAllFlagTable(), static_cast<request::AllToAllFlags*>(f.get()));
  AddOutputFlags(sub, &f->cluster, &f->format);
  return [f]() {
    Format format = Format::kTable;
    return RunOnRanks(
        [&](const std::function<void(double)>& progress, sim::Partition* partition) {
          format = ParseFormatFlag(f->format, false);  // on every rank, so that it fails on each
          return request::RunAllToAllFlags(*f, progress, partition);
        },
        [&](const request::AllToAllRun& run) {
          const study::CollectiveOutcome& o = run.outcome;
          Emit(f->cluster, o, format == Format::kJson ? report::AllToAllJson(run.request, o, run.baseline)
                                                     : report::AllToAllTable(run.request, o, run.baseline));
        });
  };
}

Action SetupCollective(CLI::App* sub) {
  struct Flags : request::CollectiveFlags {
    std::string format = "table";
  };
  auto f = std::make_shared<Flags>();
  AddFlagRows(sub, request::CollectiveFlagTable(), static_cast<request::CollectiveFlags*>(f.get()));
  AddModelFlags(sub, &f->model, "the model (checks the degrees against it)", false);
  AddOutputFlags(sub, &f->cluster, &f->format);
  return [f]() {
    Format format = Format::kTable;
    return RunOnRanks(
        [&](const std::function<void(double)>& progress, sim::Partition* partition) {
          format = ParseFormatFlag(f->format, false);  // on every rank, so that it fails on each
          return request::RunCollectiveFlags(*f, progress, partition);
        },
        [&](const request::CollectiveRun& run) {
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
