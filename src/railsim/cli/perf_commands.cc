// `railsim estimate` (one strategy: iteration time, MFU, memory),
// `railsim search` (every valid strategy, ranked) and `railsim traffic`
// (who talks to whom in one iteration of a strategy, over which links).
#include <unistd.h>


#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/flag_rows.h"
#include "railsim/cli/model_flags.h"
#include "railsim/cli/strategy_flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/report/heatmap.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/trace.h"
#include "railsim/report/traffic_report.h"
#include "railsim/search/search.h"
#include "railsim/spec/launcher_args.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/presets.h"
#include "railsim/study/idle_search.h"
#include "railsim/request/job_flags.h"
#include "railsim/study/traffic.h"

namespace railsim::cli {
namespace {

// Flags shared by estimate, search and traffic: the job, the cluster, the format.
struct JobFlags {
  request::JobFlags job;
  std::string format = "table";
};

// `network_flag`: --network (what estimate and search time), or --design
// (traffic: the built network whose links carry the bytes).
void AddJobFlags(CLI::App* sub, JobFlags* flags, bool design_flag = false, bool search = false) {
  request::JobFlags* f = &flags->job;
  AddModelFlags(sub, &f->model, "the model", true);
  AddFlagRows(sub, request::JobFlagTable(design_flag, search), f);
  sub->add_option("--format", flags->format,
                  design_flag ? "table or json"
                              : "table, json, megatron-args or nemo-overrides (the strategy as launcher flags; "
                                "search: also csv)")
      ->capture_default_str();
}

// The output --format asks for: a launcher's flags, or else table, json (or csv).
struct Output {
  Format format = Format::kTable;
  std::optional<spec::Launcher> launcher;  ///< --format megatron-args or nemo-overrides
};

// `launchers`: the command prints strategies, so it also offers the launchers' formats.
Output ParseOutput(const std::string& text, bool csv_allowed, bool launchers) {
  std::vector<std::string> formats = {"table", "json"};
  if (csv_allowed) formats.push_back("csv");
  if (launchers) formats.insert(formats.end(), {"megatron-args", "nemo-overrides"});
  const std::string name = ParseChoiceFlag("--format", text, formats);
  Output out;
  if (name == "megatron-args") out.launcher = spec::Launcher::kMegatron;
  if (name == "nemo-overrides") out.launcher = spec::Launcher::kNemo;
  if (!out.launcher) out.format = ParseFormatFlag(name, csv_allowed);
  return out;
}

Action SetupEstimate(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    StrategyFlags strategy;
    CLI::Option* sharding = nullptr;
    std::string trace, trace_png;
  };
  auto f = std::make_shared<Flags>();
  AddJobFlags(sub, &f->job);
  f->sharding = AddStrategyFlags(sub, &f->strategy);
  sub->add_option("--trace", f->trace,
                  "write the modelled iteration as a Chrome trace event file (open in Perfetto or chrome://tracing)");
  sub->add_option("--trace-png", f->trace_png, "draw the same timeline to FILE.png");
  return [f]() {
    f->strategy.optimizer.data_parallel_sharding_given = f->sharding->count() > 0;
    Output out = ParseOutput(f->job.format, false, true);
    if (!f->trace_png.empty() && !f->trace_png.ends_with(".png")) {
      throw Error("--trace-png", fmt::format("expected a file name ending in .png, got {}", Quoted(f->trace_png)));
    }
    request::Job job = request::ParseJob(f->job.job);
    spec::Strategy s = ParseStrategy(f->strategy, job.context, job.global_batch, job.attention, job.cuda_graph_impl);
    PrintStderr(job.warning);
    perf::Estimate e = perf::EstimateIteration(job.context, s);
    if (!f->trace.empty() || !f->trace_png.empty()) {
      report::IterationTrace trace = report::BuildIterationTrace(job.context, s, e);
      if (!f->trace.empty()) WriteTextFile(f->trace, report::TraceJson(trace), "--trace");
      if (!f->trace_png.empty()) WriteTextFile(f->trace_png, report::TracePng(trace), "--trace-png");
    }
    if (out.launcher) {
      PrintStdout(spec::LauncherArgs(*out.launcher, s, job.context.model));
      return 0;
    }
    PrintStdout(out.format == Format::kJson ? report::EstimateJson(job.context, s, e)
                                            : report::EstimateTable(job.context, s, e));
    return 0;
  };
}

Action SetupTraffic(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    StrategyFlags strategy;
    CLI::Option* sharding = nullptr;
    std::string heatmap, export_path;
  };
  auto f = std::make_shared<Flags>();
  AddJobFlags(sub, &f->job, true);
  f->sharding = AddStrategyFlags(sub, &f->strategy);
  sub->add_option("--heatmap", f->heatmap, "draw the GPU x GPU traffic picture to FILE.png or FILE.svg");
  sub->add_option("--export", f->export_path, "write one CSV row per communicating GPU pair to this file");
  return [f]() {
    f->strategy.optimizer.data_parallel_sharding_given = f->sharding->count() > 0;
    Output out = ParseOutput(f->job.format, false, false);
    study::TrafficOptions o;
    request::Job job = request::ParseTrafficJob(f->job.job, &o.design);
    spec::Strategy s = ParseStrategy(f->strategy, job.context, job.global_batch, job.attention, job.cuda_graph_impl);
    PrintStderr(job.warning);
    study::TrafficResult r = study::AnalyzeTraffic(job.context, s, o);
    if (!f->heatmap.empty()) {
      report::WriteHeatmap(f->heatmap, r, {report::TrafficTitle(job.context), report::StrategyLine(s),
                                           report::TrafficSetting(job.context, r)});
    }
    if (!f->export_path.empty()) {
      OutputFile file(f->export_path, "--export");
      report::WriteTrafficPairsCsv(r, [&file](std::string_view block) { file.Write(block); });
      file.Commit();
    }
    PrintStdout(out.format == Format::kJson ? report::TrafficJson(job.context, s, r)
                                            : report::TrafficTable(job.context, s, r));
    return 0;
  };
}

// The ranked strategies as launcher arguments, each after a comment line
// saying its rank, time and MFU (and the GPUs it uses when fewer than N).
std::string LauncherLines(spec::Launcher launcher, const perf::PerfContext& c, const search::SearchResult& r) {
  std::string out;
  for (size_t i = 0; i < r.results.size(); ++i) {
    const search::RankedStrategy& x = r.results[i];
    const int64_t gpus = x.strategy.gpus();
    out += fmt::format("{}# {}: {:.4f} s per iteration, MFU {:.1f}%{}{}\n", i ? "\n" : "", i + 1,
                       x.estimate.iteration_time_s, 100 * x.estimate.mfu,
                       gpus < c.gpus ? fmt::format(", {} of the {} GPUs", gpus, c.gpus) : "",
                       x.gpus_per_domain < c.domain_use.size
                           ? fmt::format(", {} GPUs of each HB domain of {} (a Slurm segment)", x.gpus_per_domain,
                                         c.domain_use.size)
                           : "");
    // A strategy the launcher cannot run as railsim models it says why.
    const std::string problem = spec::LauncherProblem(launcher, x.strategy, c.model);
    out += problem.empty() ? spec::LauncherArgs(launcher, x.strategy, c.model) : "# " + problem + "\n";
  }
  if (r.results.empty()) out = "# no strategy fits in memory\n";
  return out;
}

Action SetupSearch(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    request::SearchFlags search;
    bool timing = false;
  };
  auto f = std::make_shared<Flags>();
  request::SearchFlags* s = &f->search;
  AddJobFlags(sub, &f->job, false, true);
  AddFlagRows(sub, request::SearchFlagTable(), s);
  sub->add_flag("--timing", f->timing,
                "JSON: add elapsed_s and threads (they differ run to run; without them the output is deterministic)");
  return [f]() {
    Output out = ParseOutput(f->job.format, true, true);
    const std::vector<request::Job> jobs = request::ParseSearchJobs(f->job.job);
    const request::Job& job = jobs.front();
    request::SearchRequest request = request::ParseSearch(f->search, jobs);
    PrintStderr(job.warning);
    search::SearchOptions& o = request.options;
    if (request.threads_asked > o.threads) {
      PrintStderr(fmt::format("railsim: warning: --threads {} is more than the {} hardware threads here; using {}\n",
                              request.threads_asked, o.threads, o.threads));
    }
    bool tty = ProgressAllowed();
    auto start = std::chrono::steady_clock::now();
    bool shown = false;
    if (tty) {
      o.progress = [&](int64_t done, int64_t total) {
        double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (elapsed < 1.0) return;
        shown = true;
        PrintStderr(fmt::format("\rsearch: {}/{} parallel layouts ({:.0f}%), {:.1f} s", done, total,
                                total ? 100.0 * done / total : 100.0, elapsed));
      };
    }
    std::vector<perf::PerfContext> contexts;
    for (const request::Job& j : jobs) contexts.push_back(j.context);
    search::SearchResult r = study::SearchSegments(contexts, o, request.idle_gpus);
    if (shown) PrintStderr("\n");
    if (out.launcher) {
      PrintStdout(LauncherLines(*out.launcher, job.context, r));
      return 0;
    }
    PrintStdout(out.format == Format::kJson  ? report::SearchJson(job.context, r, f->timing)
                : out.format == Format::kCsv ? report::SearchCsv(r)
                                             : report::SearchTable(job.context, r));
    return 0;
  };
}

}  // namespace

std::vector<Command> PerfCommands() {
  return {
      {"estimate", "iteration time, MFU and memory of one parallelisation strategy", SetupEstimate, "  railsim estimate --model megatron-1t --system dgx-h100 --gpus 32768 --tp 8 --pp 64 \\\n      --micro-batch-size 1 --global-batch-size 4096 --sequence-parallel --network rail-only"},
      {"search", "every valid strategy, memory-infeasible ones dropped, ranked by iteration time",
       SetupSearch, "  railsim search --model gpt3-175b --system dgx-h100 --gpus 1024 --global-batch-size 1536 \\\n      --network rail-only --top 5"},
      {"traffic", "who talks to whom in one iteration: bytes per GPU pair, parallelism, class and tier; heatmap",
       SetupTraffic, "  railsim traffic --model megatron-1t --system dgx-h100 --gpus 32768 --tp 8 --pp 64 \\\n      --micro-batch-size 1 --global-batch-size 4096 --design rail-only --heatmap traffic.png"},
  };
}

}  // namespace railsim::cli
