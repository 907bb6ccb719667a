// `railsim collective` and `railsim alltoall` as their user gives them: text
// values named by their flags (from the command line or the Python module),
// validated into a CollectiveRequest and run, analytic and simulated.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "railsim/comm/algorithms.h"
#include "railsim/net/builder.h"
#include "railsim/study/collective_study.h"
#include "railsim/request/job_flags.h"

namespace railsim::request {

/// --routing's default: whatever the system's preset says.
inline constexpr const char* kSystemRouting = "(the system's nic_routing)";
/// --max-memory's default: what the kernel says is available, less a margin
/// for the rest of the machine (a tenth, at least 512 MiB).
inline constexpr const char* kAvailableMemory = "(available memory less 10%)";
/// --baseline's default: simulate the rail-optimized baseline of a Rail-only
/// all-to-all up to 4096 GPUs, time it analytically above.
inline constexpr const char* kBaselineBySize = "(simulate up to 4096 GPUs, analytic above)";

// Flags both commands share: the cluster, the network, the simulation.
struct ClusterFlags {
  std::string system, gpus, hb_size;
  std::string gpus_per_domain;  ///< collective's --gpus-per-domain ("": all K)
  std::string network = "rail-optimized";
  std::string radix, oversubscription = "1";
  bool simulate = false;
  std::string routing = kSystemRouting, seed = "0";
  std::string max_memory = kAvailableMemory, threads = "1";
  std::string max_gpus = std::to_string(net::kMaxBuildGpus);
  std::string export_links;  ///< checked here (it needs --simulate), written by the caller
};

struct AllToAllFlags {
  ClusterFlags cluster;
  std::string hb_bw, nic_bw, bytes_per_pair;
  std::string schedule = "sequential";
  std::string chunks = std::to_string(comm::kDefaultForwardChunks);
  std::string baseline = kBaselineBySize;
};

struct AllToAllRun {
  study::CollectiveRequest request;
  study::CollectiveOutcome outcome;
  std::optional<study::CollectiveOutcome> baseline;  ///< rail-optimized, for a Rail-only request
};

/// Validates every flag (Error naming the flag) and runs the all-to-all.
/// `progress` (may be empty) gets the share of the simulated flows done;
/// `partition` (may be null, not owned) splits the simulations' flows over
/// processes (CollectiveRequest::partition).
AllToAllRun RunAllToAllFlags(const AllToAllFlags& f, const std::function<void(double)>& progress = {},
                             sim::Partition* partition = nullptr);

struct CollectiveFlags {
  ClusterFlags cluster;
  std::string op, bytes, group;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  ModelFlags model;
  std::string tp = "1", pp = "1", dp, cp = "1", ep = "1";
  std::string etp = "tp";  ///< --expert-tensor-parallel-size: "tp" or a degree
  std::string schedule = "auto";
  std::string chunks = std::to_string(comm::kDefaultForwardChunks);
  std::string micro_batch = "1";
  std::string placement = "tp-cp-ep-dp-pp";
  MoeFlags moe;
};

struct CollectiveRun {
  study::CollectiveRequest request;
  study::CollectiveOutcome outcome;
};

/// Validates every flag (Error naming the flag) and runs the collective;
/// `progress` and `partition` as RunAllToAllFlags takes them.
CollectiveRun RunCollectiveFlags(const CollectiveFlags& f, const std::function<void(double)>& progress = {},
                                 sim::Partition* partition = nullptr);

}  // namespace railsim::request
