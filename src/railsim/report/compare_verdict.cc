// compare's verdict: the sentences under the tables that say what Rail-only
// saves and costs at each HB domain size, for the dense and the MoE job, and
// on the scenario's shared cluster.
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/units.h"
#include "railsim/report/compare_cases.h"
#include "railsim/report/compare_report.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

// Some job was timed on both rail-optimized and Rail-only.
bool Compared(const study::CompareResult& result) {
  for (const study::TrainingCase& t : result.training) {
    if (t.rail_optimized.fits && t.rail_only.fits) return true;
  }
  for (const study::MoeCase& m : result.moe) {
    if (m.rail_optimized.found() && m.rail_only.found()) return true;
  }
  return false;
}

// The verdict's shared-cluster sentence with the scenario's trace's numbers:
// per policy, Rail-only's job completion slowdown and contended share
// against rail-optimized's (and fat-tree's).
std::string SharedClusterSentence(const study::ClusterResult& r) {
  std::vector<std::string> parts;
  for (const study::ClusterRun& only : r.runs) {
    if (only.design != "rail-only" || only.jobs_placed == 0) continue;
    const study::ClusterRun* opt = r.RunOf("rail-optimized", only.policy);
    if (!opt || opt->jobs_placed == 0) continue;
    const study::ClusterRun* fat = r.RunOf("fat-tree", only.policy);
    parts.push_back(fmt::format(
        "with {} placement a job on Rail-only takes {:.2f}x as long as alone on an empty cluster on average (p99 "
        "{:.2f}x), against {:.2f}x (p99 {:.2f}x) on rail-optimized{}; {:.0f}% of Rail-only's jobs are slowed by "
        "other jobs' traffic, against {:.0f}% on rail-optimized, and {:.0f}% have ring hops between rails",
        study::PolicyName(only.policy), only.jct_slowdown.mean, only.jct_slowdown.p99, opt->jct_slowdown.mean,
        opt->jct_slowdown.p99,
        fat && fat->jobs_placed > 0 ? fmt::format(" and {:.2f}x on fat-tree", fat->jct_slowdown.mean) : "",
        100 * only.jobs_contended_share, 100 * opt->jobs_contended_share, 100 * only.jobs_across[1]));
  }
  if (parts.empty()) return "";
  return fmt::format("On the shared cluster of {} GPUs in HB domains of {} running the job trace '{}' ({} jobs; "
                     "railsim cluster): {}.",
                     Grouped(r.gpus), r.hb_domain_size, r.trace, Grouped(r.trace_jobs),
                     fmt::join(parts, "; "));
}

}  // namespace

std::vector<std::string> CompareVerdict(const study::CompareResult& result) {
  std::vector<std::string> lines;
  for (int64_t k : result.scenario.hb_domain_sizes) {
    std::vector<std::string> saves, costs, nothing;
    for (const study::NetworkCase* c : CasesAt(result, k)) {
      const study::DesignResult* opt = DesignOf(*c, net::Design::kRailOptimized);
      const study::DesignResult* only = DesignOf(*c, net::Design::kRailOnly);
      if (!opt || !only) continue;
      const double usd = opt->bom.cost_usd - only->bom.cost_usd;
      if (std::fabs(only->cost_saving) < 0.0005) {
        nothing.push_back(fmt::format("radix {} ({} switch tier{} on both)", c->params.radix, only->bom.tiers,
                                      only->bom.tiers == 1 ? "" : "s"));
      } else if (usd > 0) {
        saves.push_back(fmt::format("{} ({}) of network cost and {} ({}) of power at radix {}", Dollars(usd),
                                    Percent(only->cost_saving), Watts(opt->bom.power_w - only->bom.power_w),
                                    Percent(only->power_saving), c->params.radix));
      } else {
        costs.push_back(fmt::format("{} (+{}) more at radix {} ({} switches against {})", Dollars(-usd),
                                    Percent(-only->cost_saving), c->params.radix, Grouped(only->bom.switches),
                                    Grouped(opt->bom.switches)));
      }
    }
    std::vector<std::string> parts;
    if (!saves.empty()) parts.push_back(fmt::format("saves {}", fmt::join(saves, ", ")));
    if (!costs.empty()) parts.push_back(fmt::format("costs {}", fmt::join(costs, ", ")));
    if (!nothing.empty()) parts.push_back(fmt::format("saves nothing at {}", fmt::join(nothing, ", ")));
    std::string line = fmt::format("HB domain {}: Rail-only {}", k, fmt::join(parts, "; "));
    std::vector<std::string> batches;
    for (const study::TrainingCase& t : result.training) {
      if (t.hb_domain_size != k || !t.rail_optimized.fits || !t.rail_only.fits) continue;
      batches.push_back(fmt::format("{} at batch {}", Change(t.rail_only.time_s() / t.rail_optimized.time_s()),
                                    Grouped(t.global_batch)));
    }
    std::vector<std::string> times;
    if (!batches.empty()) times.push_back(fmt::format("by {} for {}", fmt::join(batches, " and "), result.model_name));
    const study::MoeCase* m = MoeAt(result, k);
    if (m && m->rail_only.found() && m->rail_optimized.found()) {
      times.push_back(fmt::format("by {:+.1f}% for {}", 100 * MoeOverhead(*m), result.moe_model_name));
    }
    if (!times.empty()) {
      line += fmt::format("; its iteration time changes {} against rail-optimized", fmt::join(times, ", "));
    }
    lines.push_back(line + ".");
    for (const study::TrainingCase& t : result.training) {
      if (t.hb_domain_size != k) continue;
      const std::string why = NoFitSentence(result, t);
      if (!why.empty()) lines.push_back(fmt::format("HB domain {}: railsim cannot time {} at batch {} everywhere: {}.", k,
                                                    result.model_name, Grouped(t.global_batch), why));
    }
    if (m && m->alltoall_gpus > 0) {
      const double base = m->alltoall_rail_optimized_s;
      std::string all_to_all = fmt::format("HB domain {}: a uniform all-to-all of one {} dispatch over {} GPUs takes ",
                                           k, result.moe_model_name, Grouped(m->alltoall_gpus));
      if (m->alltoall_sequential_s < 1.0005 * base) {
        all_to_all += fmt::format("the same {} on both networks.", Seconds(base));
      } else {
        all_to_all += fmt::format("{} on Rail-only with the forwarding in sequence ({}) and {} pipelined ({}), "
                                  "against {} on rail-optimized.",
                                  Seconds(m->alltoall_sequential_s), Change(m->alltoall_sequential_s / base),
                                  Seconds(m->alltoall_pipelined_s), Change(m->alltoall_pipelined_s / base),
                                  Seconds(base));
      }
      lines.push_back(all_to_all);
    }
  }
  // What the HB domain buys: Rail-only against the ideal network per batch.
  for (int64_t batch : result.scenario.global_batch_sizes) {
    std::vector<std::string> shares;
    for (const study::TrainingCase& t : result.training) {
      if (t.global_batch != batch || !t.rail_only.fits || !t.ideal.fits) continue;
      const std::string share = Percent(t.ideal.time_s() / t.rail_only.time_s());
      shares.push_back(shares.empty() ? fmt::format("{} of the ideal network's speed (one HB domain of every GPU) "
                                                    "with HB domain {}",
                                                    share, t.hb_domain_size)
                                      : fmt::format("{} with HB domain {}", share, t.hb_domain_size));
    }
    if (shares.size() < 2) continue;
    lines.push_back(fmt::format("On Rail-only, {} at batch {} reaches {}.", result.model_name, Grouped(batch),
                                fmt::join(shares, " and ")));
  }
  // What the larger HB domain buys against the smallest, both on Rail-only:
  // time and, with servers known, the cost per PFLOP/s-day (each domain
  // size on its own system when the scenario names one per size).
  {
    const std::vector<int>& sizes = result.scenario.hb_domain_sizes;
    const int small = *std::min_element(sizes.begin(), sizes.end());
    const int large = *std::max_element(sizes.begin(), sizes.end());
    auto named = [&](int k) {
      const std::string system = result.SystemNameFor(k);
      return result.scenario.hb_domain_systems.empty() ? std::to_string(k) : fmt::format("{} ({})", k, system);
    };
    std::vector<std::string> gains;
    auto gain = [&](const std::string& job, double small_s, double large_s, double small_usd, double large_usd) {
      std::string g = fmt::format("{} takes {:.1f}% {} time ({} against {})", job,
                                  100 * std::abs(1 - large_s / small_s), large_s <= small_s ? "less" : "more",
                                  Seconds(large_s), Seconds(small_s));
      if (small_usd > 0 && large_usd > 0) {
        g += fmt::format(" at {} against {} per PFLOP/s-day", Dollars(large_usd), Dollars(small_usd));
      }
      gains.push_back(g);
    };
    for (int64_t batch : result.scenario.global_batch_sizes) {
      const study::TrainingCase *a = nullptr, *b = nullptr;
      for (const study::TrainingCase& t : result.training) {
        if (t.global_batch != batch || !t.rail_only.fits) continue;
        if (t.hb_domain_size == small) a = &t;
        if (t.hb_domain_size == large) b = &t;
      }
      if (!a || !b || small == large) continue;
      gain(fmt::format("{} at batch {}", result.model_name, Grouped(batch)), a->rail_only.time_s(),
           b->rail_only.time_s(), a->rail_only.usd_per_pflops_day, b->rail_only.usd_per_pflops_day);
    }
    const study::MoeCase* ma = MoeAt(result, small);
    const study::MoeCase* mb = MoeAt(result, large);
    if (ma && mb && small != large && ma->rail_only.found() && mb->rail_only.found()) {
      gain(result.moe_model_name, ma->rail_only.found()->estimate.iteration_time_s,
           mb->rail_only.found()->estimate.iteration_time_s, 0, 0);
    }
    if (!gains.empty()) {
      lines.push_back(fmt::format("HB domain {} against {}, both on Rail-only: {}.", named(large), named(small),
                                  fmt::join(gains, "; ")));
    }
  }
  // Where Rail-only is the wrong choice: its worst job.
  std::string worst;
  double worst_overhead = 0.01;
  for (const study::TrainingCase& t : result.training) {
    if (!t.rail_optimized.fits || !t.rail_only.fits) continue;
    const double o = t.rail_only.time_s() / t.rail_optimized.time_s() - 1;
    if (o <= worst_overhead) continue;
    worst_overhead = o;
    worst = fmt::format("{} at batch {} with HB domain {} runs {:+.1f}% slower (best layouts: {} on rail-optimized, "
                        "{} on Rail-only)",
                        result.model_name, Grouped(t.global_batch), t.hb_domain_size, 100 * o,
                        StrategyDegrees(t.rail_optimized.best.strategy), StrategyDegrees(t.rail_only.best.strategy));
  }
  for (const study::MoeCase& m : result.moe) {
    const double o = MoeOverhead(m);
    if (o <= worst_overhead) continue;
    worst_overhead = o;
    worst = fmt::format("{} with HB domain {} runs {:+.1f}% slower", result.moe_model_name, m.hb_domain_size, 100 * o);
  }
  if (!worst.empty()) {
    lines.push_back("Rail-only is the wrong choice where a job's fastest layout sends between rails: here " + worst +
                    ".");
  } else if (!Compared(result)) {
    if (!result.training.empty() || !result.moe.empty()) {
      lines.push_back("No job of this scenario could be timed on both rail-optimized and Rail-only (see above), so "
                      "railsim cannot judge what Rail-only costs in iteration time here; the network side stands.");
    }
  } else {
    // The worst uniform all-to-all forwarded in sequence.
    std::string all_to_all;
    double worst_all_to_all = 0.01;
    for (const study::MoeCase& m : result.moe) {
      if (m.alltoall_gpus == 0) continue;
      const double o = m.alltoall_sequential_s / m.alltoall_rail_optimized_s - 1;
      if (o <= worst_all_to_all) continue;
      worst_all_to_all = o;
      all_to_all = fmt::format(" (here {:+.1f}% for a uniform all-to-all at HB domain {})", 100 * o,
                               m.hb_domain_size);
    }
    lines.push_back("No job of this scenario runs more than 1% slower on Rail-only. It is the wrong choice for jobs "
                    "bound by all-to-all that cannot overlap or pipeline the forwarding" +
                    all_to_all +
                    ", for libraries that need every NIC to reach every NIC (DeepEP's low-latency kernels), and "
                    "for shared clusters whose jobs are not placed rail-aligned" +
                    std::string(result.shared_cluster ? " (the scenario's job trace, next)." : "."));
  }
  if (result.shared_cluster) {
    if (std::string line = SharedClusterSentence(*result.shared_cluster); !line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace railsim::report
