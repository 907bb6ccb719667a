// Every command's flags as tables: a row per flag with its
// command-line spelling, its help text and where its text lands in the flag
// struct. The CLI declares its options from these rows, the Python module
// binds its keywords from them (the flag's name with '_' for '-'), and
// FlagTableTest checks the CLI's --help, the module's keywords, the sweep's
// keys and the docs against them, so a flag is written once.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "railsim/core/error.h"
#include "railsim/request/cluster_flags.h"
#include "railsim/request/collective_flags.h"
#include "railsim/request/failure_flags.h"
#include "railsim/request/job_flags.h"
#include "railsim/request/network_flags.h"

namespace railsim::request {

template <typename Flags>
struct FlagRow {
  const char* flag = "";  ///< "--micro-batch-size"
  const char* alias = nullptr;  ///< a second spelling the CLI also takes ("--design" for "--network")
  const char* help = "";
  /// Where an option's text lands; empty for a switch.
  std::function<std::string*(Flags&)> text;
  /// Where a switch lands; empty for an option.
  std::function<bool*(Flags&)> on;
  /// Set when the option is given at all (even as ""); empty when nobody asks.
  std::function<bool*(Flags&)> given;
  /// Required unless the command's job is optional (--tp, --pp, --micro-batch-size).
  bool required = false;
  /// --help shows the default (the struct's initial text).
  bool show_default = true;
  /// The Python keyword takes a list (joined with commas into the text).
  bool list = false;
};

/// The flag's name as a Python keyword or sweep key: "--micro-batch-size" ->
/// "micro_batch_size".
std::string KeywordOf(const std::string& flag);

/// An error as a Python keyword or sweep key user reads it: a leading flag
/// of its `where` spelled as its keyword ("--micro-batch-size: ..." ->
/// "micro_batch_size: ..."); other errors unchanged. The studies name the
/// flag, the spelling a command-line user typed; the module and the sweep
/// translate at their edge.
std::string InKeywords(const Error& e);

/// --model and --seq-length (estimate, search, traffic, collective, failures).
const std::vector<FlagRow<ModelFlags>>& ModelFlagTable();

/// --moe-alltoall, --moe-imbalance, --moe-max-domains, --moe-dispatch-precision, --moe-overlap.
const std::vector<FlagRow<MoeFlags>>& MoeFlagTable();

/// The job and its cluster (estimate, search, traffic): --system, --gpus,
/// --global-batch-size, the network (traffic: --design, the built network
/// whose links carry the bytes), --placement, --hb-size, --gpus-per-domain
/// (`search`: a list), --attention, --cuda-graph-impl, --stack,
/// --iteration-overhead, --radix, --oversubscription. Not the model's flags
/// (ModelFlags, declared with each command's own help).
const std::vector<FlagRow<JobFlags>>& JobFlagTable(bool design, bool search);

/// search's own flags: --top, --threads, --max-strategies, --precision (a
/// list to explore), --no-tp-comm-overlap, --explore-optimizer, the MoE rows,
/// --expert-tensor-parallel-size (degrees to try), --allow-idle-gpus.
const std::vector<FlagRow<SearchFlags>>& SearchFlagTable();

/// Every flag of StrategyFlags: the degrees, micro-batching, recomputation,
/// overlaps, precision, the optimizer's dtypes and sharding, and the MoE rows.
const std::vector<FlagRow<StrategyFlags>>& StrategyFlagTable();

/// network's flags (`cost` false: --design, the fabric, the catalog) or
/// cost's (--server for --design). Not --export or --format (the CLI's
/// outputs).
const std::vector<FlagRow<NetworkFlags>>& NetworkFlagTable(bool cost);

/// failures' flags: the cluster and job (--network, --system, --gpus, ...),
/// the strategy rows, the devices down, the Monte Carlo and the spares. Not
/// the model's flags (ModelFlags) or --format.
const std::vector<FlagRow<FailureFlags>>& FailureFlagTable();

/// cluster's flags: the trace or synthetic jobs, the cluster and its
/// network, the policies and the replay. Not --format or --out.
const std::vector<FlagRow<ClusterStudyFlags>>& ClusterStudyFlagTable();

/// compare's flags: the scenario, the catalog and server, the NIC network
/// the jobs are timed on, and the scenario's overrides (--gpus, --hb-sizes,
/// --model, ...). Not --format or --print-scenario (the CLI's outputs).
const std::vector<FlagRow<CompareFlags>>& CompareFlagTable();

/// report's flags: --out, the scenario, the catalogs, and the scenario's
/// overrides. Not --format.
const std::vector<FlagRow<ReportFlags>>& ReportFlagTable();

/// alltoall's flags: the cluster, network and simulation (--system, --gpus,
/// --network, --simulate, ...), then --hb-bw, --nic-bw, --bytes-per-pair,
/// --schedule, --chunks, --baseline. Not --format or --export-links (the
/// CLI's outputs).
const std::vector<FlagRow<AllToAllFlags>>& AllToAllFlagTable();

/// collective's flags: the cluster rows (the network may be ideal),
/// --gpus-per-domain, --op, --bytes, the MoE rows, --group, --algorithm,
/// --protocol, the degrees, --schedule, --chunks, --placement. Not the
/// model's flags (ModelFlags), --format or --export-links.
const std::vector<FlagRow<CollectiveFlags>>& CollectiveFlagTable();

}  // namespace railsim::request
