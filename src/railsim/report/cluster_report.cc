#include "railsim/report/cluster_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

const char* const kAcross[] = {"hb_domains", "rails", "leaf_switches"};

Json Stat(const study::Stat3& s, bool p50 = true) {
  Json j;
  j["mean"] = s.mean;
  if (p50) j["p50"] = s.p50;
  j["p99"] = s.p99;
  return j;
}

Json RunObject(const study::ClusterRun& run) {
  Json j;
  j["design"] = run.design;
  j["policy"] = study::PolicyName(run.policy);
  j["occupancy_mean"] = run.occupancy_mean;
  j["queue_wait_s"] = Stat(run.queue_wait_s);
  j["jobs_contended_share"] = run.jobs_contended_share;
  j["gpu_time_contended_share"] = run.gpu_time_contended_share;
  j["contention_slowdown"] = Stat(run.contention_slowdown);
  j["jct_slowdown"] = Stat(run.jct_slowdown, false);
  j["placement_slowdown_mean"] = run.placement_slowdown_mean;
  Json jobs, time;
  for (size_t i = 0; i < 3; ++i) {
    jobs[kAcross[i]] = run.jobs_across[i];
    time[kAcross[i]] = run.gpu_time_across[i];
  }
  j["jobs_across"] = jobs;
  j["gpu_time_across"] = time;
  j["jobs_placed"] = run.jobs_placed;
  j["jobs_unplaceable"] = run.jobs_unplaceable;
  j["span_s"] = run.span_s;
  j["makespan_s"] = run.makespan_s;
  j["moments_sampled"] = run.moments_sampled;
  j["flows_simulated"] = run.flows_simulated;
  j["occupancy"] = run.occupancy;
  return j;
}

}  // namespace

std::vector<std::string> ClusterAssumptions(const study::ClusterResult& r) {
  std::vector<std::string> a = {
      "FIFO queue with backfill (up to 500 queued jobs tried per event, no reservation) unless --no-backfill.",
      "A job's dominant collective is its data-parallel ring all-reduce, one ring channel per GPU it holds in "
      "its emptiest HB domain, laid rail by rail across its domains as NCCL does; flows inside a domain are not "
      "simulated.",
      "Contention: at sampled moments (job starts) every running job's ring flows share the built network "
      "max-min fairly; the collectives are assumed to overlap in time (a worst case for phase-shifted jobs).",
      fmt::format("Placement and contention stretch only a job's communication share, from the performance "
                  "model's estimate of its class (tensor-, pipeline- and data-parallel communication exposed, "
                  "over the iteration): {:.1f}% (<= 8 GPUs, Llama-3.1-8B fine-tuning, tp 8), {:.1f}% (9-64, "
                  "Llama-3.1-8B, tp 8 on 64 GPUs), {:.1f}% (65-512, Llama-3-70B, tp 8 pp 4 on 512), {:.1f}% "
                  "(> 512, Llama-3-405B, tp 8 pp 2 on 1,024).",
                  100 * r.comm_shares[0], 100 * r.comm_shares[1], 100 * r.comm_shares[2], 100 * r.comm_shares[3]),
      "Replay: runtime = duration x placement slowdown (duration alone with --no-stretch); contention is "
      "measured, not fed back into the schedule.",
      "jct_slowdown = (wait + runtime x contention slowdown) / max(duration, 60 s), at least 1.",
  };
  if (!r.runs.empty() && r.runs[0].design == "switch-map") {
    a.push_back(fmt::format("Switch map: {} GPUs per host (the system's HB domain), hosts in file order, each "
                            "ToR with as many NIC-speed cables up as NICs below, split over its aggregation "
                            "switches, flows hashed onto them (the map gives no link counts or speeds).",
                            r.hb_domain_size));
  }
  return a;
}

// A queue wait as a person reads it (seconds to days); "-" when undefined.
std::string WaitText(double s) {
  if (!std::isfinite(s)) return "-";
  if (s < 60) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{:.1f} min", s / 60);
  if (s < 86400) return fmt::format("{:.1f} h", s / 3600);
  return fmt::format("{:.1f} d", s / 86400);
}

std::string ShareText(double share) { return std::isfinite(share) ? Percent(share) : "-"; }

std::string SlowdownText(double x) { return std::isfinite(x) ? fmt::format("{:.2f}x", x) : "-"; }

std::string ClusterTable(const study::ClusterResult& r) {
  TextTable t;
  // The shares are of the placed jobs (and of their GPU-time).
  for (const char* h : {"design", "policy", "occupancy", "wait mean", "wait p99", "jobs across domains",
                        "jobs misaligned", "jobs above leaf", "jobs contended", "GPU-time contended", "JCT slowdown",
                        "JCT p99"}) {
    t.AddColumn(h, std::string_view(h) == "design" || std::string_view(h) == "policy" ? TextTable::Align::kLeft : TextTable::Align::kRight);
  }
  for (const study::ClusterRun& run : r.runs) {
    t.AddRow({run.design, study::PolicyName(run.policy), Percent(run.occupancy_mean), WaitText(run.queue_wait_s.mean),
              WaitText(run.queue_wait_s.p99), ShareText(run.jobs_across[0]), ShareText(run.jobs_across[1]),
              ShareText(run.jobs_across[2]), ShareText(run.jobs_contended_share),
              ShareText(run.gpu_time_contended_share), SlowdownText(run.jct_slowdown.mean),
              SlowdownText(run.jct_slowdown.p99)});
  }
  std::string out = fmt::format("railsim cluster: {} ({} jobs) on {} GPUs in HB domains of {}\n\n", r.trace,
                                r.trace_jobs, r.gpus, r.hb_domain_size);
  out += t.Render();
  if (!r.runs.empty() && r.runs[0].jobs_unplaceable > 0) {
    out += fmt::format("\n{} jobs larger than the cluster were never placed.\n", r.runs[0].jobs_unplaceable);
  }
  out += "\n";
  for (const std::string& a : ClusterAssumptions(r)) out += Wrap("- " + a, 110, "  ");
  return out;
}

std::string ClusterJson(const study::ClusterResult& r) {
  Json j;
  j["trace"] = r.trace;
  j["jobs"] = r.trace_jobs;
  j["gpus"] = r.gpus;
  j["hb_domain_size"] = r.hb_domain_size;
  j["assumptions"] = ClusterAssumptions(r);
  Json classes = Json::array();
  for (int i = 0; i < study::kJobClasses; ++i) {
    const study::JobClass& c = study::JobClassAt(i);
    classes.push_back({{"model", c.model}, {"gpus", c.gpus}, {"tp", c.tp}, {"pp", c.pp},
                       {"comm_share", r.comm_shares[size_t(i)]}});
  }
  j["job_classes"] = classes;
  Json runs = Json::array();
  for (const study::ClusterRun& run : r.runs) runs.push_back(RunObject(run));
  j["runs"] = runs;
  return j.dump(2) + "\n";
}

std::string ClusterCsv(const study::ClusterResult& r) {
  CsvTable t({"design", "policy", "occupancy_mean", "queue_wait_mean_s", "queue_wait_p50_s", "queue_wait_p99_s",
              "jobs_across_hb_domains", "jobs_across_rails", "jobs_across_leaf_switches", "jobs_contended_share",
              "gpu_time_contended_share", "contention_slowdown_mean", "jct_slowdown_mean", "jct_slowdown_p99",
              "placement_slowdown_mean", "jobs_placed", "jobs_unplaceable"});
  for (const study::ClusterRun& run : r.runs) {
    t.AddRow({run.design, study::PolicyName(run.policy), CsvNumber(run.occupancy_mean),
              CsvNumber(run.queue_wait_s.mean), CsvNumber(run.queue_wait_s.p50), CsvNumber(run.queue_wait_s.p99),
              CsvNumber(run.jobs_across[0]), CsvNumber(run.jobs_across[1]), CsvNumber(run.jobs_across[2]),
              CsvNumber(run.jobs_contended_share), CsvNumber(run.gpu_time_contended_share),
              CsvNumber(run.contention_slowdown.mean), CsvNumber(run.jct_slowdown.mean),
              CsvNumber(run.jct_slowdown.p99), CsvNumber(run.placement_slowdown_mean),
              CsvNumber(double(run.jobs_placed)), CsvNumber(double(run.jobs_unplaceable))});
  }
  return t.Render();
}

void WriteClusterJobsCsv(const study::ClusterResult& r, const std::function<void(std::string_view)>& write) {
  write("design,policy,job,gpus,submit_s,start_s,end_s,wait_s,domains,leaves,rail_misaligned,above_leaf,"
        "placement_slowdown,contention_slowdown,moments,jct_slowdown\n");
  for (const study::ClusterRun& run : r.runs) {
    std::string block;
    for (const study::JobRecord& j : run.jobs) {
      if (!j.placed()) {
        block += fmt::format("{},{},{},{},{},,,,,,,,,,,\n", run.design, study::PolicyName(run.policy), j.id, j.gpus,
                             CsvNumber(j.submit_s));
        continue;
      }
      block += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", run.design,
                           study::PolicyName(run.policy), j.id, j.gpus, CsvNumber(j.submit_s), CsvNumber(j.start_s),
                           CsvNumber(j.end_s), CsvNumber(j.wait_s()), j.domains, j.leaves, int(j.rail_misaligned),
                           int(j.above_leaf), CsvNumber(j.placement_slowdown), CsvNumber(j.contention_slowdown),
                           j.moments, CsvNumber(j.jct_slowdown()));
      if (block.size() > (1 << 16)) {
        write(block);
        block.clear();
      }
    }
    write(block);
  }
}

}  // namespace railsim::report
