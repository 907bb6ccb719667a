// `railsim cluster`: a job trace replayed on a shared cluster under scheduler
// policies, for each network design (study/cluster.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flag_rows.h"
#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/report/cluster_report.h"
#include "railsim/request/cluster_flags.h"

namespace railsim::cli {
namespace {

Action SetupCluster(CLI::App* sub) {
  struct Flags : request::ClusterStudyFlags {
    std::string format = "table", out;
  };
  auto f = std::make_shared<Flags>();
  AddFlagRows(sub, request::ClusterStudyFlagTable(), static_cast<request::ClusterStudyFlags*>(f.get()));
  sub->add_option("--format", f->format, "table, json or csv")->capture_default_str();
  sub->add_option("--out", f->out, "write the per-job table (CSV) to this file");
  return [f, sub]() {
    Format format = ParseFormatFlag(f->format, true);
    // Flags that shape what a trace file already gives, or a policy not run,
    // would be ignored: refused instead.
    if (f->trace != "synthetic") {
      for (const char* flag : {"--jobs", "--arrivals-per-hour", "--size-mix", "--duration-median", "--duration-p90",
                               "--seed"}) {
        if (sub->count(flag) > 0) throw Error(flag, "shapes a synthetic trace; drop it with --trace FILE");
      }
    }
    for (auto [flag, policy] : {std::pair{"--max-wait", "wait-for-fit"}, {"--segment", "block"}}) {
      if (sub->count(flag) > 0 && f->policy != "all" && f->policy.find(policy) == std::string::npos) {
        throw Error(flag, fmt::format("applies to the {} policy; add it to --policy (or drop {})", policy, flag));
      }
    }
    if (!f->out.empty()) CheckOutputPath(f->out, "--out");
    bool shown = false;
    study::ClusterResult r = request::RunClusterFlags(*f, ProgressLine("cluster", "of events", &shown));
    if (shown) PrintStderr("\n");
    if (!f->out.empty()) {
      OutputFile file(f->out, "--out");
      report::WriteClusterJobsCsv(r, [&file](std::string_view block) { file.Write(block); });
      file.Commit();
    }
    PrintStdout(format == Format::kJson  ? report::ClusterJson(r)
                : format == Format::kCsv ? report::ClusterCsv(r)
                                         : report::ClusterTable(r));
    return 0;
  };
}

}  // namespace

std::vector<Command> ClusterCommands() {
  return {
      {"cluster",
       "a job trace on a shared cluster: occupancy, queueing, placement and contention per network design and "
       "scheduler policy",
       SetupCluster,
       "  railsim cluster --trace tests/data/job-traces/lingjun2023-jobs.csv --gpus 8192 --policy all\n"
       "  railsim cluster --trace tests/data/job-traces/lingjun2023-jobs.csv \\\n"
       "      --topology tests/data/job-traces/lingjun2023-topo.csv --policy first-fit\n"
       "  railsim cluster --trace synthetic --jobs 100000 --arrivals-per-hour 200 --gpus 32768"},
  };
}

}  // namespace railsim::cli
