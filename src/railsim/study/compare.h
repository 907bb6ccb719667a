// The `railsim compare` study: for each (HB domain size, radix) of a scenario,
// all network designs side by side; when the scenario names a training job,
// its best iteration time on each network (rail-optimized, Rail-only, ideal);
// when it names an MoE model, the same with each dispatch algorithm and the
// paper's uniform all-to-all of one sequence's dispatch.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "railsim/comm/collective.h"
#include "railsim/perf/context.h"
#include "railsim/search/search.h"
#include "railsim/spec/catalog.h"
#include "railsim/spec/model.h"
#include "railsim/spec/scenario.h"
#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"
#include "railsim/study/cluster.h"
#include "railsim/study/idle_search.h"
#include "railsim/study/network_study.h"

namespace railsim::study {

struct NetworkCase {
  net::TopologyParams params;           ///< design field unused
  std::vector<DesignResult> designs;    ///< rail-optimized, rail-only, fat-tree
};

/// One network's fastest strategy for a job, or why none fits.
struct BestStrategy {
  bool fits = false;
  search::RankedStrategy best;  ///< when it fits
  NoFit why = NoFit::kNoLayout;  ///< when it does not
  /// The best strategy, or null when none fits.
  const search::RankedStrategy* found() const { return fits ? &best : nullptr; }
  double time_s() const { return best.estimate.iteration_time_s; }
};

/// The training job on one network.
struct TrainingOnNetwork : BestStrategy {
  explicit TrainingOnNetwork(comm::NetworkKind k) : kind(k) {}
  comm::NetworkKind kind;
  /// The built network it was timed on (rail-optimized and Rail-only).
  perf::NetworkShape shape;
  /// The cost of one PFLOP/s-day of model FLOPs the best strategy delivers:
  /// a day of the whole cluster built as this design at the radix it was
  /// timed on (ClusterCostPerDay) over the job's model FLOP/s; 0 without a
  /// server or a fit, and for the ideal network (no bill of materials).
  double usd_per_pflops_day = 0;
};

/// Best iteration time of the scenario's model on each network, for one HB
/// domain size and global batch (the training side of the headline).
struct TrainingCase {
  int64_t hb_domain_size = 0;
  int64_t global_batch = 0;
  TrainingOnNetwork rail_optimized{comm::NetworkKind::kRailOptimized};
  TrainingOnNetwork rail_only{comm::NetworkKind::kRailOnly};
  TrainingOnNetwork ideal{comm::NetworkKind::kIdeal};
  /// The three in the order tables list them.
  std::array<const TrainingOnNetwork*, 3> networks() const { return {&rail_optimized, &rail_only, &ideal}; }
  bool feasible = false;  ///< some strategy fits in memory on every network
  /// The nearest cluster sizes that have a layout, when a network has none.
  NearbyGpus nearby;
};

/// One MoE layer's dispatch of one sequence on one network, by algorithm.
struct DispatchTimes {
  double forwarded_s = 0, direct_s = 0;
  double of(spec::MoeAllToAll a) const { return a == spec::MoeAllToAll::kDirect ? direct_s : forwarded_s; }
};

/// One MoE layer's dispatch of one sequence at one EP degree (tp 1, EP
/// groups of consecutive GPUs) on each network with each algorithm.
struct MoeSweepPoint {
  int64_t ep = 0;
  int64_t domains = 0;  ///< HB domains one EP group spans
  DispatchTimes rail_optimized, rail_only;
  /// Rail-only with algorithm `a` against rail-optimized's direct dispatch
  /// (any NIC to any NIC: the baseline a spine allows).
  double overhead(spec::MoeAllToAll a) const { return rail_only.of(a) / rail_optimized.direct_s - 1; }
};

/// The MoE job on one network: its best strategy with each dispatch algorithm.
struct MoeOnNetwork {
  explicit MoeOnNetwork(comm::NetworkKind k) : kind(k) {}
  comm::NetworkKind kind;
  BestStrategy forwarded, direct;
  BestStrategy& of(spec::MoeAllToAll a) { return a == spec::MoeAllToAll::kDirect ? direct : forwarded; }
  const BestStrategy& of(spec::MoeAllToAll a) const { return a == spec::MoeAllToAll::kDirect ? direct : forwarded; }
  /// The faster algorithm of those that fit (kAuto when neither does).
  spec::MoeAllToAll faster() const;
  /// Its best strategy, or null when neither fits.
  const search::RankedStrategy* found() const;
};

/// The dispatch algorithms compare times, in the order its tables list them.
inline constexpr spec::MoeAllToAll kMoeAlgorithms[] = {spec::MoeAllToAll::kForwarded, spec::MoeAllToAll::kDirect};

/// The MoE side for one HB domain size.
struct MoeCase {
  int64_t hb_domain_size = 0;
  int64_t global_batch = 0;
  MoeOnNetwork rail_optimized{comm::NetworkKind::kRailOptimized};
  MoeOnNetwork rail_only{comm::NetworkKind::kRailOnly};
  /// One HB domain of every GPU: no NIC, so one (forwarded) search.
  BestStrategy ideal;
  /// Rail-only's overhead against EP degree: within one HB domain, then 2,
  /// 4, ... domains, up to the experts or the cluster.
  std::vector<MoeSweepPoint> ep_sweep;
  /// The paper's uniform all-to-all of one sequence's dispatch over one
  /// expert per GPU (num_experts GPUs), as `railsim alltoall` times it: on
  /// rail-optimized, and on Rail-only forwarded in sequence and pipelined.
  int64_t alltoall_gpus = 0;  ///< 0: not timed (the cluster has fewer GPUs, or K and the experts do not nest)
  double alltoall_bytes_per_pair = 0;
  double alltoall_rail_optimized_s = 0, alltoall_sequential_s = 0, alltoall_pipelined_s = 0;
  double alltoall_ideal_s = 0;
};

/// The systems a comparison's jobs run on: `fallback` (the scenario's
/// `system`) on every HB domain size but those `by_size` holds (the
/// scenario's hb_domain_systems). Either may be missing (no jobs).
struct ScenarioSystems {
  std::optional<spec::SystemSpec> fallback;
  std::map<int, spec::SystemSpec> by_size;
  const spec::SystemSpec* For(int k) const {
    auto it = by_size.find(k);
    return it != by_size.end() ? &it->second : fallback ? &*fallback : nullptr;
  }
};

struct CompareResult {
  spec::Scenario scenario;
  std::vector<NetworkCase> network;
  /// system_name: the jobs' system, or every one joined with " and " when
  /// the domain sizes have their own (SystemNameFor says which is whose).
  std::string model_name, system_name;
  std::map<int, std::string> system_names;  ///< per HB domain size, when the jobs have a system
  int64_t seq_length = 0;              ///< the model's, as timed
  perf::NetworkOptions timed;          ///< the NIC network the jobs were timed on, as given
  std::vector<TrainingCase> training;  ///< empty when the scenario has no model
  std::string moe_model_name;
  int64_t moe_seq_length = 0;
  int64_t moe_experts = 0;
  std::vector<MoeCase> moe;            ///< empty when the scenario has no MoE model
  /// The GPU server the whole cluster is priced with (WholeClusterCost),
  /// when the caller knows one; RunCompare leaves it empty.
  std::optional<spec::ServerClass> server;
  /// Servers of the domain sizes whose system is not the scenario's
  /// (hb_domain_systems), when the caller knows them.
  std::map<int, spec::ServerClass> hb_servers;
  const spec::ServerClass* ServerFor(int k) const {
    auto it = hb_servers.find(k);
    return it != hb_servers.end() ? &it->second : server ? &*server : nullptr;
  }
  std::string SystemNameFor(int k) const {
    auto it = system_names.find(k);
    return it == system_names.end() ? system_name : it->second;
  }
  /// Prices the fabric joining servers into larger HB domains (the
  /// catalog's fastest port class; WholeClusterCost).
  spec::PortClass hb_port_class;
  /// How a day of the cluster is costed (the catalog's), for the cost per
  /// delivered PFLOP/s-day of each timed job when `server` is known.
  spec::OperatingCost operating;
  /// What the caller's inputs left out or replaced, one sentence each
  /// (ScenarioInputs::notes); RunCompare leaves it empty.
  std::vector<std::string> notes;
  /// The scenario's job trace replayed on the cluster of its first HB domain
  /// size and radix, every design under each of its policies (railsim
  /// cluster); empty without a trace.
  std::optional<ClusterResult> shared_cluster;
};

/// Throws Error naming the scenario entry when a (K, radix) pair cannot be
/// built (for example more than three tiers).
void ValidateScenarioNetworks(const spec::Scenario& scenario);

/// How the whole cluster around each design is priced, when the caller
/// knows its servers (the catalog's): without a server nothing is.
struct ComparePricing {
  std::optional<spec::ServerClass> server;          ///< CompareResult::server
  std::map<int, spec::ServerClass> hb_servers;      ///< CompareResult::hb_servers
  spec::PortClass hb_port_class;                    ///< CompareResult::hb_port_class
  spec::OperatingCost operating;                    ///< CompareResult::operating
};

/// Runs the network side, the training side when `model` is given (one
/// search per HB domain size, batch and network, on `threads` threads) and
/// the MoE side when `moe_model` is, and prices every design's whole cluster
/// and every timed job's PFLOP/s-day with `pricing`. `progress`, if set, is
/// called with the share of searches done. Requires ValidateScenarioNetworks
/// to pass.
CompareResult RunCompare(const spec::Scenario& scenario, const spec::PortClass& port_class,
                         const spec::ModelSpec* model, const ScenarioSystems& systems, int threads,
                         const perf::NetworkOptions& timed = {}, const spec::ModelSpec* moe_model = nullptr,
                         const std::function<void(double)>& progress = {}, const ComparePricing& pricing = {});

}  // namespace railsim::study
