// `railsim estimate` (one strategy: iteration time, MFU, memory),
// `railsim search` (every valid strategy, ranked) and `railsim traffic`
// (who talks to whom in one iteration of a strategy, over which links).
#include <unistd.h>


#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/model_flags.h"
#include "railsim/cli/strategy_flags.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/report/heatmap.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/traffic_report.h"
#include "railsim/search/search.h"
#include "railsim/spec/launcher_args.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/presets.h"
#include "railsim/study/idle_search.h"
#include "railsim/study/traffic.h"

namespace railsim::cli {
namespace {

// Flags shared by estimate and search: the job and the cluster.
struct JobFlags {
  ModelFlags model;
  std::string system, gpus, global_batch;
  std::string network = "rail-optimized";
  std::string hb_size;
  std::string attention = "flash";
  std::string radix, oversubscription = "1";
  std::string placement = "tp-cp-ep-dp-pp";
  std::string format = "table";
};

// `network_flag`: --network (what estimate and search time), or --design
// (traffic: the built network whose links carry the bytes).
void AddJobFlags(CLI::App* sub, JobFlags* f, bool design_flag = false) {
  AddModelFlags(sub, &f->model, "the model", true);
  sub->add_option("--system", f->system, "system preset or JSON file")->required();
  sub->add_option("--gpus", f->gpus, "total GPUs N")->required();
  sub->add_option("--global-batch-size", f->global_batch, "sequences per iteration")->required();
  if (design_flag) {
    sub->add_option("--design,--network", f->network, "rail-optimized, rail-only or fat-tree")->capture_default_str();
  } else {
    sub->add_option("--network,--design", f->network, "rail-only, rail-optimized or ideal (one HB domain, K = N)")
        ->capture_default_str();
  }
  sub->add_option("--placement", f->placement,
                  "rank order fastest first (tp-cp-ep-dp-pp is Megatron's; e.g. dp-tp-pp) or a placement JSON file")
      ->capture_default_str();
  sub->add_option("--hb-size", f->hb_size, "override the system's HB domain size K (what-if)");
  sub->add_option("--attention", f->attention, "flash or classic (materialised softmax)")
      ->capture_default_str();
  sub->add_option("--radix", f->radix,
                  "switch radix of the NIC network timed (default 64, larger if 64 needs over three tiers)");
  sub->add_option("--oversubscription", f->oversubscription, "leaf down:up ratio of the NIC network")
      ->capture_default_str();
  sub->add_option("--format", f->format,
                  design_flag ? "table or json"
                              : "table, json, megatron-args or nemo-overrides (the strategy as launcher flags; "
                                "search: also csv)")
      ->capture_default_str();
}

comm::NetworkKind ParseNetwork(const std::string& text) {
  std::string n = ParseChoiceFlag("--network", text, {"rail-only", "rail-optimized", "ideal"});
  if (n == "rail-only") return comm::NetworkKind::kRailOnly;
  if (n == "ideal") return comm::NetworkKind::kIdeal;
  return comm::NetworkKind::kRailOptimized;
}

struct Job {
  perf::PerfContext context;
  int64_t global_batch;
  spec::Attention attention;
  Format format;
  std::optional<spec::Launcher> launcher;  ///< --format megatron-args or nemo-overrides
};

// `launchers`: the command prints strategies, so it also offers the launchers' formats.
Job ParseJob(const JobFlags& f, bool csv_allowed, bool launchers, std::optional<net::Design> design = std::nullopt) {
  std::vector<std::string> formats = {"table", "json"};
  if (csv_allowed) formats.push_back("csv");
  if (launchers) formats.insert(formats.end(), {"megatron-args", "nemo-overrides"});
  const std::string format_name = ParseChoiceFlag("--format", f.format, formats);
  std::optional<spec::Launcher> launcher;
  if (format_name == "megatron-args") launcher = spec::Launcher::kMegatron;
  if (format_name == "nemo-overrides") launcher = spec::Launcher::kNemo;
  Format format = launcher ? Format::kTable : ParseFormatFlag(format_name, csv_allowed);
  int64_t gpus = ParseIntFlag("--gpus", f.gpus, 1, spec::kMaxModelGpus);
  int64_t batch = ParseIntFlag("--global-batch-size", f.global_batch, 1, spec::kMaxGlobalBatch);
  comm::NetworkKind network = design ? (*design == net::Design::kRailOnly ? comm::NetworkKind::kRailOnly
                                                                          : comm::NetworkKind::kRailOptimized)
                                     : ParseNetwork(f.network);
  int64_t hb = f.hb_size.empty() ? 0 : ParseIntFlag("--hb-size", f.hb_size, 1, spec::kMaxModelGpus);
  spec::Attention attention =
      ParseChoiceFlag("--attention", f.attention, {"flash", "classic"}) == "classic" ? spec::Attention::kClassic
                                                                                     : spec::Attention::kFlash;
  perf::NetworkOptions net;
  net.radix = f.radix.empty() ? 0 : int(ParseIntFlag("--radix", f.radix, 2, 65536));
  net.oversubscription = ParseNumberFlag("--oversubscription", f.oversubscription, 1, 65535);
  spec::ModelSpec model = LoadModelFlags(f.model);
  spec::SystemSpec system = spec::LoadSystem(f.system, "--system");
  spec::Placement placement = spec::LoadPlacement(f.placement, "--placement");
  perf::PerfContext context = perf::MakePerfContext(model, system, gpus, network, hb, net);
  context.placement = placement;
  if (design == net::Design::kFatTree) context.fabrics.rail_leaves = false;
  return {context, batch, attention, format, launcher};
}

Action SetupEstimate(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    StrategyFlags strategy;
  };
  auto f = std::make_shared<Flags>();
  AddJobFlags(sub, &f->job);
  AddStrategyFlags(sub, &f->strategy);
  return [f]() {
    Job job = ParseJob(f->job, false, true);
    spec::Strategy s = ParseStrategy(f->strategy, job.context, job.global_batch, job.attention);
    if (job.launcher) {
      PrintStdout(spec::LauncherArgs(*job.launcher, s, job.context.model));
      return 0;
    }
    perf::Estimate e = perf::EstimateIteration(job.context, s);
    PrintStdout(job.format == Format::kJson ? report::EstimateJson(job.context, s, e)
                                            : report::EstimateTable(job.context, s, e));
    return 0;
  };
}

Action SetupTraffic(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    StrategyFlags strategy;
    std::string heatmap, export_path;
  };
  auto f = std::make_shared<Flags>();
  AddJobFlags(sub, &f->job, true);
  AddStrategyFlags(sub, &f->strategy);
  sub->add_option("--heatmap", f->heatmap, "draw the GPU x GPU traffic picture to FILE.png or FILE.svg");
  sub->add_option("--export", f->export_path, "write one CSV row per communicating GPU pair to this file");
  return [f]() {
    std::string design_name =
        ParseChoiceFlag("--design", f->job.network, {"rail-optimized", "rail-only", "fat-tree"});
    const net::Design design = *net::ParseDesign(design_name);
    Job job = ParseJob(f->job, false, false, design);
    if (job.context.gpus > net::kMaxBuildGpus) {
      throw Error("--gpus", fmt::format("the traffic analysis routes on the built network, at most {} GPUs; got {}",
                                        net::kMaxBuildGpus, job.context.gpus));
    }
    spec::Strategy s = ParseStrategy(f->strategy, job.context, job.global_batch, job.attention);
    study::TrafficOptions o;
    o.design = design;
    study::TrafficResult r = study::AnalyzeTraffic(job.context, s, o);
    if (!f->heatmap.empty()) {
      report::WriteHeatmap(f->heatmap, r, {report::TrafficTitle(job.context), report::StrategyLine(s),
                                           report::TrafficSetting(job.context, r)});
    }
    if (!f->export_path.empty()) {
      AtomicFile file(f->export_path, "--export");
      report::WriteTrafficPairsCsv(r, [&file](std::string_view block) { file.Write(block); });
      file.Commit();
    }
    PrintStdout(job.format == Format::kJson ? report::TrafficJson(job.context, s, r)
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
    out += fmt::format("{}# {}: {:.4f} s per iteration, MFU {:.1f}%{}\n", i ? "\n" : "", i + 1,
                       x.estimate.iteration_time_s, 100 * x.estimate.mfu,
                       gpus < c.gpus ? fmt::format(", {} of the {} GPUs", gpus, c.gpus) : "");
    out += spec::LauncherArgs(launcher, x.strategy, c.model);
  }
  if (r.results.empty()) out = "# no strategy fits in memory\n";
  return out;
}

// Strategies a search may print: each kept one holds its estimate and
// memory breakdown per worker thread, and nobody reads 10,000 rows (the
// 100,000 once accepted took 4.2 GB).
constexpr int64_t kMaxTop = 10000;

// A search larger than this would run for many minutes; refuse it up front.
constexpr int64_t kDefaultMaxStrategies = 200'000'000;

Action SetupSearch(CLI::App* sub) {
  struct Flags {
    JobFlags job;
    std::string top = "10";
    std::string threads;
    std::string max_strategies = std::to_string(kDefaultMaxStrategies);
    std::string precision = "bf16";
    bool no_tp_comm_overlap = false;
    bool explore_optimizer = false;
    MoeFlags moe;
    std::string allow_idle = "0";
    bool timing = false;
  };
  auto f = std::make_shared<Flags>();
  AddJobFlags(sub, &f->job);
  sub->add_option("--top", f->top, "how many of the best strategies to print")->capture_default_str();
  sub->add_option("--threads", f->threads, "worker threads (default: all cores)");
  sub->add_option("--max-strategies", f->max_strategies, "refuse searches larger than this")
      ->capture_default_str();
  sub->add_option("--precision", f->precision, "GEMM precision to explore: bf16, fp8 or any (both)")
      ->capture_default_str();
  sub->add_flag("--no-tp-comm-overlap", f->no_tp_comm_overlap,
                "sequence-parallel strategies without TP-communication overlap (frameworks without it)");
  sub->add_flag("--explore-optimizer", f->explore_optimizer,
                "also try every data-parallel sharding (ZeRO-0 to 3) and optimizer precision (main grads, "
                "master weights, Adam moments)");
  AddMoeFlags(sub, &f->moe);
  sub->add_option("--allow-idle-gpus", f->allow_idle,
                  "also search layouts that leave up to this many GPUs idle (whole HB domains), reporting how many")
      ->capture_default_str();
  sub->add_flag("--timing", f->timing,
                "JSON: add elapsed_s and threads (they differ run to run; without them the output is deterministic)");
  return [f]() {
    Job job = ParseJob(f->job, true, true);
    if (job.context.placement.map) {
      throw Error("--placement", "a placement file fixes one strategy's degrees; search takes a rank order "
                                 "(such as tp-cp-dp-pp)");
    }
    search::SearchOptions o;
    o.global_batch = job.global_batch;
    o.attention = job.attention;
    o.tp_comm_overlap = !f->no_tp_comm_overlap;
    o.explore_optimizer = f->explore_optimizer;
    ParseMoeFlags(f->moe, &o.moe);
    spec::ValidateMoeOptions(job.context.model, o.moe);  // said once, not by every strategy
    std::string precision = ParseChoiceFlag("--precision", f->precision, {"bf16", "fp8", "any"});
    if (precision == "any") {
      o.precisions = {spec::Precision::kBf16, spec::Precision::kFp8};
    } else {
      o.precisions = {ParsePrecision(precision, job.context)};
    }
    o.top_k = int(ParseIntFlag("--top", f->top, 1, kMaxTop));
    o.threads = f->threads.empty() ? DefaultThreads() : int(ParseIntFlag("--threads", f->threads, 1, 1024));
    if (o.threads > DefaultThreads()) {
      PrintStderr(fmt::format("railsim: warning: --threads {} is more than the {} hardware threads here; using {}\n",
                              o.threads, DefaultThreads(), DefaultThreads()));
      o.threads = DefaultThreads();
    }
    int64_t limit = ParseIntFlag("--max-strategies", f->max_strategies, 1, INT64_MAX);
    const int64_t idle = ParseIntFlag("--allow-idle-gpus", f->allow_idle, 0, job.context.gpus / 2);
    const int64_t count = study::CountStrategiesAllowingIdle(job.context, o, idle);
    if (count > limit) {
      throw Error("--max-strategies", fmt::format("the search would enumerate {} strategies, more than the "
                                                  "limit {}; raise --max-strategies to run it anyway",
                                                  count, limit));
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
    search::SearchResult r = study::SearchAllowingIdle(job.context, o, idle);
    if (shown) PrintStderr("\n");
    if (job.launcher) {
      PrintStdout(LauncherLines(*job.launcher, job.context, r));
      return 0;
    }
    PrintStdout(job.format == Format::kJson  ? report::SearchJson(job.context, r, f->timing)
                : job.format == Format::kCsv ? report::SearchCsv(r)
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
