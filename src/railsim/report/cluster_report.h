// `railsim cluster`'s outputs: the runs (one per design and policy) as a
// text table, a JSON document or CSV rows, and the per-job table as CSV.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "railsim/study/cluster.h"

namespace railsim::report {

/// What the study simulates and what it assumes, one sentence each (the
/// JSON's "assumptions", the table's footer).
std::vector<std::string> ClusterAssumptions(const study::ClusterResult& r);

std::string ClusterTable(const study::ClusterResult& r);
/// Keys: trace, jobs, gpus, hb_domain_size, assumptions, runs[] with design,
/// policy, occupancy_mean, occupancy, queue_wait_s {mean, p50, p99},
/// jobs_contended_share, gpu_time_contended_share, contention_slowdown,
/// jct_slowdown {mean, p99}, placement_slowdown_mean, jobs_across and
/// gpu_time_across {hb_domains, rails, leaf_switches}, counts.
std::string ClusterJson(const study::ClusterResult& r);
/// One row per run, the JSON's scalar keys as columns.
std::string ClusterCsv(const study::ClusterResult& r);
/// Every job of every run (design, policy, job, gpus, submit_s, start_s,
/// end_s, wait_s, domains, leaves, rail_misaligned, above_leaf,
/// placement_slowdown, contention_slowdown, moments, jct_slowdown), written
/// in blocks to `write`.
void WriteClusterJobsCsv(const study::ClusterResult& r, const std::function<void(std::string_view)>& write);

}  // namespace railsim::report
