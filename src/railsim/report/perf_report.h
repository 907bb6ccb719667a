// Formatting iteration-time estimates and search results (`railsim estimate`,
// `railsim search`): tables for people, one JSON document for scripts.
#pragma once

#include <string>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/search/search.h"
#include "railsim/spec/strategy.h"

namespace railsim::report {

/// "gpt3-175b (sequence length 2,048)": the model as every header names it,
/// with the length it trains at (a Hugging Face config's is its context).
std::string ModelLine(const spec::ModelSpec& m);
/// "tp 8 pp 16 dp 32 cp 1 vp 4, micro-batch 1 x 64, recompute none, sp, dist-opt"
std::string StrategyLine(const spec::Strategy& s);
/// The degrees alone: "tp 8 pp 16 dp 32 cp 1 vp 4" (ep and vp when above 1).
std::string StrategyDegrees(const spec::Strategy& s);
/// What StrategyLine adds to the degrees and micro-batching: the switches
/// and settings ("sp, tp-overlap, dist-opt"), "" when there are none.
std::string StrategySettings(const spec::Strategy& s);
/// `railsim estimate`'s strategy flags that give `s` on `stack` ("--tp 8
/// --pp 8 --micro-batch-size 1 --sequence-parallel --tp-comm-overlap"):
/// every setting that is not the stack's default. The data-parallel degree
/// is left out (it follows from --gpus).
std::string EstimateStrategyFlags(const spec::Strategy& s, spec::Stack stack);
/// `text` as one shell word: as it is when it holds only characters no
/// shell treats specially, else in single quotes.
std::string ShellWord(const std::string& text);
/// "rail-optimized network (radix 64, 3 tiers, 2:1 leaves)".
std::string NetworkLine(const perf::PerfContext& c);
/// "4 HB domains of 72, 64 GPUs used in each (32 idle)" when the job uses
/// part of each HB domain (--gpus-per-domain), else "".
std::string DomainUseLine(const perf::PerfContext& c);
/// The same for a job of `gpus` GPUs using `used` of each domain of `k`.
std::string DomainUseLine(int64_t gpus, int64_t used, int64_t k);
/// The stack profile: its name, what it sets and where its fixed costs come from.
std::string StackLine(const perf::PerfContext& c);
/// The largest loss against pure compute, as a short clause from the
/// estimate's breakdown: "pipeline bubble 62% (64 stages, 1 micro-batch per
/// pipeline)", "TP communication across HB domains 48% (tp 16 > K 8)", ...
/// `brief`: a few words for a table cell ("bubble 27% (pp 64, 64 mb)").
std::string LargestLoss(int64_t hb_domain_size, const spec::Strategy& s, const perf::Estimate& e, bool brief = false);

/// Strategy, time breakdown, throughput and memory as a readable report.
std::string EstimateTable(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e);

/// One JSON document with at least: iteration_time_s,
/// model_flops_per_iteration, mfu, hfu, tflops_per_gpu, memory_per_gpu_bytes,
/// memory_fits, breakdown{compute_s, recompute_s, tp_comm_s, pp_comm_s,
/// dp_comm_s, bubble_s, optimizer_s, ...}, memory{...}, strategy{...}.
std::string EstimateJson(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e);

/// The top strategies, one row each.
std::string SearchTable(const perf::PerfContext& c, const search::SearchResult& r);
/// {"evaluated", "pruned", "elapsed_s", "threads", "results": [{"strategy",
/// "estimate"}, ...]} plus the model, system and network searched.
/// With `timing`, also "elapsed_s" and "threads" (measurements that differ
/// between runs; without them the document is byte-identical run to run).
std::string SearchJson(const perf::PerfContext& c, const search::SearchResult& r, bool timing = false);
/// One CSV row per ranked strategy: its degrees and options, time, MFU, memory.
std::string SearchCsv(const search::SearchResult& r);

}  // namespace railsim::report
