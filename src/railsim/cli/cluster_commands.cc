// `railsim cluster`: a job trace replayed on a shared cluster under scheduler
// policies, for each network design (study/cluster.h).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/report/cluster_report.h"
#include "railsim/study/cluster_flags.h"

namespace railsim::cli {
namespace {

Action SetupCluster(CLI::App* sub) {
  struct Flags : study::ClusterStudyFlags {
    std::string format = "table", out;
  };
  auto f = std::make_shared<Flags>();
  sub->add_option("--trace", f->trace,
                  "job trace CSV (submit_s,duration_s,gpus[,model,state,...]) or 'synthetic'")
      ->capture_default_str();
  sub->add_option("--topology", f->topology,
                  "switch map CSV (host,asw,psw,dsw) as the network, in place of --gpus/--network; GPUs per host = "
                  "the system's HB domain size");
  sub->add_option("--system", f->system, "system preset or JSON file")->capture_default_str();
  sub->add_option("--gpus", f->gpus, "total GPUs N of the cluster");
  sub->add_option("--hb-size", f->hb_size, "GPUs per HB domain K (default: the system's)");
  sub->add_option("--radix", f->radix, "switch radix (default 64, larger if 64 needs over three tiers)");
  sub->add_option("--port-speed", f->port_speed, "network link rate (default: the system's NIC)");
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio")->capture_default_str();
  sub->add_option("--network,--design", f->network, "rail-only, rail-optimized, fat-tree or all")->capture_default_str();
  sub->add_option("--policy", f->policy, "first-fit, domain-packing, fewest-leaves, block, wait-for-fit, a comma-separated list of them, or all")
      ->capture_default_str();
  sub->add_option("--segment", f->segment, "block: GPUs per segment, each inside one HB domain (default: K)");
  sub->add_option("--max-wait", f->max_wait, "wait-for-fit: longest wait for a packed placement")
      ->capture_default_str();
  sub->add_flag("--no-backfill", f->no_backfill, "strict FIFO: only the queue's head may start");
  sub->add_flag("--no-stretch", f->no_stretch,
                "runtime = the trace's duration (placement slowdown measured, not applied), as schedulers' "
                "simulations assume");
  sub->add_option("--samples", f->samples, "most moments at which contention is simulated, per run")
      ->capture_default_str();
  sub->add_option("--threads", f->threads, "runs (design x policy) side by side (default: all cores)");
  sub->add_option("--jobs", f->jobs, "synthetic: jobs")->capture_default_str();
  sub->add_option("--arrivals-per-hour", f->arrivals_per_hour, "synthetic: Poisson arrival rate")
      ->capture_default_str();
  sub->add_option("--size-mix", f->size_mix,
                  "synthetic: GPUs:share pairs, e.g. 8:0.5,64:0.5 (default: Lingjun's mix "
                  "1:0.093,8:0.463,32:0.341,128:0.102,1024:0.001)");
  sub->add_option("--duration-median", f->duration_median, "synthetic: median job duration (lognormal)")
      ->capture_default_str();
  sub->add_option("--duration-p90", f->duration_p90, "synthetic: 90th percentile of the duration")
      ->capture_default_str();
  sub->add_option("--seed", f->seed, "synthetic: generator seed")->capture_default_str();
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
    study::ClusterResult r = study::RunClusterFlags(*f, ProgressLine("cluster", "of events", &shown));
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
