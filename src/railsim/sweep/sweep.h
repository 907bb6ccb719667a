// The sweep study behind `railsim sweep`: one study (network, estimate,
// search, alltoall, collective, failures, cluster or compare; spec::SweepStudy)
// at every point of a spec::SweepConfig grid, on worker threads, on
// one shard of the points, or fed by a distributor (MPI, sweep/sweep_mpi.h).
//
// Each point gives one SweepRow: its index, its parameters and the study's
// numeric results, or the message of the error that stopped it (a point
// never aborts the sweep). Rows carry no timing, so the same point gives the
// same row on any thread, process or machine.
//
// Everything that can fail for the whole sweep fails before fan-out:
// LoadSweepSpecs loads every model, system, catalog and placement the
// config names. Workers only run points and never throw.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "railsim/spec/catalog.h"
#include "railsim/spec/failure_catalog.h"
#include "railsim/spec/model.h"
#include "railsim/spec/placement.h"
#include "railsim/spec/scenario.h"
#include "railsim/spec/sweep_config.h"
#include "railsim/spec/system.h"

namespace railsim::sweep {

/// The presets and files a config names, loaded once and shared read-only
/// by every worker (keyed by the name as written in the config).
struct SweepSpecs {
  std::map<std::string, spec::ModelSpec> models;
  std::map<std::string, spec::SystemSpec> systems;
  std::map<std::string, spec::Catalog> catalogs;
  std::map<std::string, spec::Placement> placements;
  std::map<std::string, spec::FailureCatalog> failure_catalogs;
  std::map<std::string, spec::Scenario> scenarios;
};

/// Loads every spec named at any point of `config`. Throws Error whose
/// `where` is the config's JSON pointer to the name ("/axes/model/1").
SweepSpecs LoadSweepSpecs(const spec::SweepConfig& config);

struct SweepRow {
  int64_t index = 0;
  std::vector<spec::SweepParam> point;
  /// The study's results in SweepResultKeys order (empty when `error` is
  /// set); NaN where the point did not compute one (simulated_s without
  /// simulate).
  std::vector<double> results;
  std::string error;
};

/// The result columns of a study, units in their names ("iteration_time_s").
std::vector<std::string> SweepResultKeys(spec::SweepStudy study);

/// Runs point `index`. Requires specs from LoadSweepSpecs(config) and
/// 0 <= index < config.points. Never throws: a point the study rejects
/// becomes a row with the error's message.
SweepRow RunSweepPoint(const spec::SweepConfig& config, const SweepSpecs& specs, int64_t index);

/// The points of shard `shard` of `shards` (index % shards == shard), less
/// those in `done`, ascending. Requires 0 <= shard < shards.
std::vector<int64_t> ShardPoints(int64_t points, int shard, int shards, const std::vector<int64_t>& done);

/// Runs `indices` on `threads` workers. `emit` is called once per row as it
/// finishes, from one thread at a time (rows arrive in any order); when it
/// throws (a full disk), no more rows are emitted and its exception is
/// rethrown here once the workers end. Requires threads >= 1.
void RunSweepPoints(const spec::SweepConfig& config, const SweepSpecs& specs, const std::vector<int64_t>& indices,
                    int threads, const std::function<void(const SweepRow&)>& emit);

}  // namespace railsim::sweep
