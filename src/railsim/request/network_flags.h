// `network`, `cost`, `compare` and `report` as their user gives them: text
// values named by their flags (from the command line or the Python module),
// validated and loaded in one place. Every function throws Error naming the
// flag (or the scenario's field) on bad input.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "railsim/net/builder.h"
#include "railsim/perf/context.h"
#include "railsim/spec/catalog.h"
#include "railsim/spec/scenario.h"
#include "railsim/study/compare.h"
#include "railsim/request/job_flags.h"
#include "railsim/study/network_study.h"
#include "railsim/study/report_study.h"

namespace railsim::request {

// One fabric to build (network) or every design of it (cost).
struct NetworkFlags {
  std::string design;  ///< network's --design
  std::string server;  ///< cost's --server
  std::string gpus, hb_size, radix;
  std::string port_speed = "400Gbps";
  std::string oversubscription = "1";
  std::string gpus_per_nic = "1";
  std::string catalog = "default";
  std::string max_gpus = std::to_string(net::kMaxBuildGpus);
};

/// The topology of `f`, validated for `design` (nullopt: every design).
net::TopologyParams ParseTopology(const NetworkFlags& f, std::optional<net::Design> design);

/// The catalog's port class at `port_speed_Bps` (Error "--catalog" or "--port-speed").
spec::PortClass ResolvePortClass(const std::string& catalog_name, double port_speed_Bps);

/// --server: the catalog's GPU server, for the whole cluster's cost.
spec::ServerClass ResolveServer(const std::string& catalog_name, const std::string& name);

/// `railsim network --design D`: builds and counts one design; `on_built`
/// (may be empty) sees the graph before it is freed.
study::DesignResult RunNetworkFlags(const NetworkFlags& f, const std::string& design,
                             const std::function<void(const net::Topology&)>& on_built = {});

struct CostStudy {
  net::TopologyParams params;
  std::vector<study::DesignResult> designs;
  std::vector<study::ClusterCost> clusters;  ///< one per design with --server, else none
};

/// `railsim cost [--server S]`: every design side by side.
CostStudy RunCostFlags(const NetworkFlags& f, const std::string& server,
                       const std::function<void(const net::Topology&)>& on_built = {});

// Flags that override a scenario's entries (empty: keep the scenario's).
// model and moe_model "none" drop the training or MoE side, as in a
// scenario file or a sweep.
struct ScenarioOverrides {
  std::string gpus, hb_sizes, radixes, port_speed, model, system, batches, moe_model, moe_batch, moe_max_domains;
  std::string allow_idle, seq_length;
  bool any() const {
    for (const std::string* v : {&gpus, &hb_sizes, &radixes, &port_speed, &model, &system, &batches, &moe_model,
                                 &moe_batch, &moe_max_domains, &allow_idle, &seq_length}) {
      if (!v->empty()) return true;
    }
    return false;
  }
};

/// Applies `o` to `s`. `system`: the loaded --system override, if given; its
/// HB domain size and NIC speed become the defaults of --hb-sizes and
/// --port-speed, and where they replace the scenario's a sentence saying so
/// goes into `notes`.
void ApplyScenarioOverrides(const ScenarioOverrides& o, const spec::SystemSpec* system, spec::Scenario* s,
                            std::vector<std::string>* notes);

/// A scenario with everything it names loaded and checked.
struct ScenarioInputs {
  spec::Scenario scenario;
  spec::PortClass port_class;
  spec::PortClass hb_port_class;  ///< prices HB domains larger than a server
  std::optional<spec::ModelSpec> model, moe_model;
  std::optional<spec::SystemSpec> system;
  /// The scenario's hb_domain_systems, loaded (empty with --system).
  std::map<int, spec::SystemSpec> hb_systems;
  /// The catalog's server of the system's name (dgx-h100), or --server's.
  std::optional<spec::ServerClass> server;
  /// The catalog's servers of hb_systems' names (none with --server).
  std::map<int, spec::ServerClass> hb_servers;
  /// The systems the jobs run on, per HB domain size.
  study::ScenarioSystems Systems() const { return {system, hb_systems}; }
  spec::OperatingCost operating;  ///< the catalog's, for the cost per PFLOP/s-day
  /// The servers, fabric and operating costs the whole cluster is priced with.
  study::ComparePricing Pricing() const { return {server, hb_servers, hb_port_class, operating}; }
  /// What the answer leaves out or takes from elsewhere than the scenario,
  /// one sentence each, for stderr and the JSON's "notes": the system's HB
  /// size in place of the scenario's, the whole-cluster rows without a
  /// server, a model timed at its config's maximum context.
  std::vector<std::string> notes;
};

ScenarioInputs LoadScenarioInputs(const std::string& scenario_name, const std::string& catalog,
                                  const ScenarioOverrides& overrides, const std::string& server = "");

struct CompareFlags {
  std::string scenario = "paper-headline", catalog = "default";
  std::string server;  ///< the catalog's GPU server (default: the one named as the system)
  std::string radix, oversubscription = "1";  ///< the NIC network the training side is timed on
  ScenarioOverrides overrides;
};

/// --radix and --oversubscription of compare.
perf::NetworkOptions ParseTimedNetwork(const CompareFlags& f);

/// `railsim compare`: the scenario with its overrides, run on every core.
study::CompareResult RunCompareFlags(const CompareFlags& f, const std::function<void(double)>& progress = {});

struct ReportFlags {
  std::string out, scenario = "paper-headline", catalog = "default", failure_catalog = "h100-fleet";
  ScenarioOverrides overrides;
};

/// `railsim report`'s inputs (--out is checked for being given, not made).
study::ReportInputs ParseReportFlags(const ReportFlags& f);

}  // namespace railsim::request
