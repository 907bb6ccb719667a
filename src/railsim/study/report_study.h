// The numbers behind `railsim report`: the compare study of a scenario plus
// the sweeps its figures draw (best iteration time against HB domain size,
// Rail-only against ideal over global batch, traffic by tier, all-to-all
// overhead against the NIC/HB bandwidth ratio, failures per design, network
// cost against iteration time for every design and radix, and the MoE
// dispatch against EP degree). report/html_report.h turns them into a page.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/spec/catalog.h"
#include "railsim/spec/failure_catalog.h"
#include "railsim/spec/model.h"
#include "railsim/spec/scenario.h"
#include "railsim/spec/system.h"
#include "railsim/study/compare.h"
#include "railsim/study/failures.h"
#include "railsim/study/traffic.h"

namespace railsim::study {

struct ReportInputs {
  spec::Scenario scenario;
  spec::PortClass port_class;
  spec::PortClass hb_port_class;  ///< prices HB domains larger than a server (EstimateHbFabricCost)
  std::optional<spec::ModelSpec> model, moe_model;
  /// The scenario's system on every HB domain size but those of its
  /// hb_domain_systems.
  ScenarioSystems systems;
  spec::FailureCatalog failure_catalog;
  int threads = 1;
  /// What the inputs left out or replaced (ScenarioInputs::notes).
  std::vector<std::string> notes;
  /// Called now and then with a short label of the step under way and the
  /// share of the whole study done (0 to 1); may be empty.
  std::function<void(const std::string& step, double done)> progress;
};

/// Best iteration time of the scenario's model at one HB domain size.
struct HbSweepPoint {
  int64_t hb_domain_size = 0;
  double rail_optimized_s = 0, rail_only_s = 0;  ///< 0 when nothing fits
};

/// Rail-only's best against the ideal network's at one global batch.
struct BatchSweepPoint {
  int64_t hb_domain_size = 0;
  int64_t global_batch = 0;
  double rail_only_s = 0, ideal_s = 0;  ///< 0 when nothing fits
};

/// One design at one (HB domain, radix): its network cost and power and
/// the best iteration time of the scenario's model on it.
struct ParetoPoint {
  net::Design design = net::Design::kRailOptimized;
  int64_t hb_domain_size = 0;
  int radix = 0;
  double cost_usd = 0, power_w = 0;  ///< the network's
  /// The estimated switch fabric that makes HB domains of this size out of
  /// servers (0 when a server holds one).
  HbFabricCost hb_fabric;
  double iteration_s = 0;  ///< 0 when nothing fits
};

/// Forwarded all-to-all on Rail-only against direct on rail-optimized at one
/// NIC/HB bandwidth ratio (line rates, no latency).
struct AllToAllPoint {
  double nic_over_hb = 0;
  double sequential_overhead = 0, pipelined_overhead = 0;
};

struct ReportStudy {
  CompareResult compare;
  int64_t batch = 0;  ///< the global batch the HB sweep and Pareto use (the scenario's first)
  std::vector<HbSweepPoint> hb_sweep;
  std::vector<BatchSweepPoint> batch_sweep;
  std::vector<ParetoPoint> pareto;
  std::vector<AllToAllPoint> alltoall;
  int64_t alltoall_domains = 0, alltoall_hb_domain_size = 0;
  /// Traffic of the best Rail-only strategy at the first HB domain size, on
  /// each design (rail-optimized, Rail-only).
  std::vector<TrafficResult> traffic;
  std::optional<spec::Strategy> traffic_strategy;
  std::optional<perf::PerfContext> traffic_context;  ///< the Rail-only one (for the heatmap's labels)
  /// A 30-day Monte Carlo per design at the first HB domain size and radix.
  std::vector<MonteCarloResult> failures;
  int64_t failure_trials = 0;
};

/// Runs everything the report draws. Throws Error as compare does.
ReportStudy RunReportStudy(const ReportInputs& inputs);

}  // namespace railsim::study
