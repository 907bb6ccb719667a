// `railsim cluster` as its user gives it: text values named by their flags
// (from the command line or the Python module), validated and loaded in one
// place, then the study run. Every function throws Error naming the flag.
#pragma once

#include <functional>
#include <string>

#include "railsim/study/cluster.h"

namespace railsim::request {

struct ClusterStudyFlags {
  std::string trace = "synthetic";  ///< a trace CSV, or "synthetic"
  std::string topology;             ///< a switch map CSV (host,asw,psw,dsw); replaces --network
  std::string system = "dgx-h100";
  std::string gpus, hb_size, radix, port_speed;
  std::string oversubscription = "1";
  std::string network = "all";  ///< rail-only, rail-optimized, fat-tree or all
  std::string policy = "all";   ///< a policy or all
  std::string segment, max_wait = "1h", samples = "2000", threads;
  bool no_backfill = false;
  bool no_stretch = false;
  // Synthetic traces.
  std::string jobs = "1000", arrivals_per_hour = "10", size_mix, duration_median = "420s",
              duration_p90 = "17940s", seed = "1";
};


/// Loads the trace, builds the networks and replays (threads: one per run,
/// up to --threads). `progress` may be empty.
study::ClusterResult RunClusterFlags(const ClusterStudyFlags& f, const std::function<void(double)>& progress = {});

}  // namespace railsim::request
