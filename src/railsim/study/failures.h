// Failures: what one failure does to a running job on each design, and what
// a training run's worth of failures costs (`railsim failures`).
//
// Explicit failures (net/failures.h names) are resolved on the built graph:
// which GPUs are removed, which lose their own NIC path and are rerouted
// through their HB domain (PXN-style forwarding), the capacity left per
// network tier, and the job's iteration time with the degraded bandwidths:
// the performance model run on fabrics whose NIC bandwidth is divided by the
// busiest forwarder's load and whose leaves keep only their live uplinks.
// The data-parallel collective is then simulated flow by flow on the failed
// graph (routes around the failures) to check that analytic reading.
//
// The Monte Carlo draws each component kind's failures over the run as a
// Poisson process (rates from spec/failure_catalog.h, counts from the built
// graph, exponential repair times, the cluster starting in its steady state
// of parts under repair). A failure that removes a GPU or cuts one off its
// NIC interrupts the job: the work since the last checkpoint is lost and the
// restart costs --restart-time. A failure that only narrows the network
// (spine, uplink) degrades the job for its repair time by the explicit
// analysis's slowdown. Removed GPUs are replaced from spares by the design's
// policy; the spares needed are those that cover the parts under repair for
// the target fraction of the run.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/net/failures.h"
#include "railsim/net/topology.h"
#include "railsim/perf/context.h"
#include "railsim/study/design_setup.h"
#include "railsim/spec/failure_catalog.h"
#include "railsim/spec/model.h"
#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"

namespace railsim::study {

/// Where a failed GPU's replacement comes from:
///   any        any idle GPU (needs a network joining all rails)
///   same-rail  a spare GPU of the same local rank (rail)
///   domain     the whole HB domain migrates to a spare one
///   ocs        a spare GPU is patched into the failed GPU's rail port by an
///              optical circuit switch layer with spare ports per rail
enum class SparePolicy : uint8_t { kAny, kSameRail, kDomain, kOcs };
const char* SparePolicyName(SparePolicy p);
std::optional<SparePolicy> ParseSparePolicy(std::string_view name);
std::vector<std::string> SparePolicyNames();
/// rail-optimized and fat-tree: any; Rail-only: same-rail.
SparePolicy DefaultSparePolicy(net::Design design);

/// Network tiers whose capacity is reported.
constexpr int kNetworkTiers = 3;
const char* NetworkTierName(int tier);  ///< "nic_to_leaf", "leaf_to_spine", "spine_to_core"

struct TierCapacity {
  double before_Bps = 0;  ///< sum of the tier's link capacities, one direction
  double after_Bps = 0;   ///< over the live links
};

/// The data-parallel collective (or, without a job, an all-reduce across the
/// HB domains on every rail) timed before and after, analytic and simulated.
struct CollectiveCheck {
  std::string name;
  double analytic_before_s = 0, analytic_after_s = 0;
  double simulated_before_s = 0, simulated_after_s = 0;
  int64_t flows = 0;             ///< flows simulated after the failure
  int64_t flows_unroutable = 0;  ///< after the failure, with no live path
};

struct FailureImpact {
  net::Design design = net::Design::kRailOptimized;
  SparePolicy policy = SparePolicy::kAny;
  std::vector<std::string> devices;
  std::vector<int64_t> removed;        ///< GPUs down (replaced from spares)
  std::vector<int64_t> disconnected;   ///< live GPUs that lost their own NIC path
  std::vector<int64_t> rerouted;       ///< of those, forwarded through their HB domain
  std::vector<int64_t> degraded;       ///< rerouted GPUs, their forwarders, GPUs under narrowed leaves
  /// Disconnected with no live peer to forward for them: replaced from spares.
  int64_t unreachable = 0;
  double nic_bw_Bps = 0;               ///< per GPU, healthy
  /// The NIC bandwidth the worst affected GPU gets when every GPU of its
  /// domain sends: its forwarder's NIC shared by all it carries.
  double affected_gpu_bw_Bps = 0;
  int max_forwarder_load = 1;          ///< GPUs sharing the busiest forwarder's NIC
  double worst_uplink_fraction = 1;    ///< live share of the narrowest switch's uplinks (of those with one)
  int64_t switches_without_uplinks = 0;  ///< live switches whose every uplink is down
  std::array<TierCapacity, kNetworkTiers> tiers{};
  int tiers_built = 0;
  /// HB domains the network no longer joins to every other (no route at all,
  /// even forwarding): the job cannot run on this network until repaired.
  int64_t partitioned_domains = 0;
  bool interrupts = false;             ///< the running job stops (a GPU removed or cut off)
  bool has_job = false;
  double iteration_time_s_before = 0, iteration_time_s_after = 0;
  std::optional<CollectiveCheck> check;
};

/// The fabrics the performance model sees on `d` after the failures that
/// `impact` describes.
comm::ClusterFabrics DegradedFabrics(const DesignSetup& d, const FailureImpact& impact);

/// Analyses `failures` on design `d` (with its job, if the setup has one).
/// `simulate`: also run the collective check (needs the flows to fit).
FailureImpact AnalyzeFailures(const ClusterSetup& setup, const DesignSetup& d, const net::FailureSet& failures,
                              SparePolicy policy, bool simulate);

struct MonteCarloOptions {
  int64_t trials = 10000;
  double days = 30;
  uint64_t seed = 1;
  double checkpoint_interval_s = 1200;
  double restart_time_s = 300;
  double target_availability = 0.999;
  spec::FailureCatalog catalog;
  std::function<void(double)> progress;  ///< fraction of trials done (may be empty)
};

/// One kind of component as the Monte Carlo sees it on a design.
struct ComponentEffect {
  spec::Component component = spec::Component::kGpu;
  std::string name;        ///< "gpu", "leaf_switch", "transceiver (leaf_to_spine)", ...
  int64_t count = 0;
  double rate_per_year = 0, mttr_hours = 0;
  bool interrupts = false;
  double slowdown = 1;     ///< iteration time while it is under repair, relative
  int spare_gpus = 0;      ///< GPUs each failure takes out (replaced from spares)
  double expected_failures = 0;  ///< per run
};

/// What a Monte Carlo will cost before it runs: failure events drawn in all
/// (each also a repair), and the most in one trial (held in memory at once).
struct MonteCarloWork {
  double events = 0;
  double events_per_trial = 0;
};
MonteCarloWork EstimateMonteCarloWork(const std::vector<ComponentEffect>& components, SparePolicy policy,
                                      const MonteCarloOptions& o);

/// Bounds on a Monte Carlo, checked before it starts: about 20 M events a
/// second on one core (BENCHMARKS.md), so 2e9 events is minutes; and one
/// trial's events are held at once (two 16-byte changes each). Throws Error
/// naming `trials_field` (too many trials) or `catalog_field` (one trial
/// too large: rates or repair times out of proportion).
void CheckMonteCarloWork(const MonteCarloWork& w, const MonteCarloOptions& o, const std::string& trials_field,
                         const std::string& catalog_field);

struct MonteCarloResult {
  net::Design design = net::Design::kRailOptimized;
  SparePolicy policy = SparePolicy::kAny;
  int64_t trials = 0;
  double days = 0;
  uint64_t seed = 0;
  std::vector<ComponentEffect> components;
  double interruptions_mean = 0, interruptions_ci95 = 0;  ///< mean and its 95% half-width
  int64_t interruptions_p05 = 0, interruptions_p95 = 0;
  double gpu_hours_lost_mean = 0;
  double goodput = 0;        ///< useful training time / run time, mean
  double network_share = 0;  ///< interruptions caused by network parts
  int64_t spares_needed = 0; ///< GPUs
  int64_t spare_domains = 0; ///< HB domains (servers) holding them
  int64_t ocs_ports_per_rail = 0, ocs_ports = 0;  ///< policy ocs
  double ocs_cost_usd = 0, ocs_power_w = 0;
  bool slowdowns_timed = false;  ///< with a job: degradations priced by the model
};

/// The component kinds of `d` with their effects: counts from the graph,
/// slowdowns from analysing one of each (first instance) with the job.
std::vector<ComponentEffect> ComponentEffects(const ClusterSetup& setup, const DesignSetup& d,
                                              const spec::FailureCatalog& catalog, double days);

/// The Monte Carlo of `options.trials` runs. Throws Interrupted (core/
/// interrupt.h) between trials when a stop was asked for.
MonteCarloResult RunMonteCarlo(const DesignSetup& d, const std::vector<ComponentEffect>& components,
                               SparePolicy policy, const MonteCarloOptions& options);

}  // namespace railsim::study
