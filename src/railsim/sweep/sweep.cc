#include "railsim/sweep/sweep.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "railsim/spec/presets.h"
#include "railsim/spec/scenario.h"
#include "railsim/request/job_flags.h"

namespace railsim::sweep {
namespace {

// Calls visit(name, where) for every string value of `key` in the config.
void ForEachName(const spec::SweepConfig& config, const std::string& key,
                 const std::function<void(const std::string&, const std::string&)>& visit) {
  for (const spec::SweepParam& p : config.fixed) {
    if (p.key == key) visit(p.value.text, "/fixed/" + key);
  }
  for (const spec::SweepAxis& axis : config.axes) {
    for (size_t j = 0; j < axis.keys.size(); ++j) {
      if (axis.keys[j] != key) continue;
      for (size_t i = 0; i < axis.tuples.size(); ++i) {
        visit(axis.tuples[i][j].text, fmt::format("/axes/{}/{}", key, i));
      }
    }
  }
}

template <typename T, typename Load>
void LoadAll(const spec::SweepConfig& config, const std::string& key, const std::string& fallback,
             std::map<std::string, T>* out, Load load) {
  if (!fallback.empty()) out->emplace(fallback, load(fallback, key));
  ForEachName(config, key, [&](const std::string& name, const std::string& where) {
    if (!out->count(name)) out->emplace(name, load(name, where));
  });
}

}  // namespace

SweepSpecs LoadSweepSpecs(const spec::SweepConfig& config) {
  SweepSpecs s;
  // A compare point's model or moe_model "none" drops that side of the
  // scenario (spec::kNoModel).
  const bool compare = config.study == spec::SweepStudy::kCompare;
  auto load_model = [compare](const std::string& name, const std::string& where) {
    if (compare && name == spec::kNoModel) return spec::ModelSpec();
    spec::ModelSpec m = spec::LoadModel(name, where);
    // Once per model, not once per point.
    if (const std::string warning = request::ContextLengthWarning(m, where); !warning.empty()) {
      std::fputs(fmt::format("railsim: warning: {}\n", warning).c_str(), stderr);
    }
    return m;
  };
  LoadAll(config, "model", "", &s.models, load_model);
  // failures times on the command's default system when the config names none.
  LoadAll(config, "system", config.study == spec::SweepStudy::kFailures ? "dgx-h100" : "", &s.systems,
          spec::LoadSystem);
  if (config.study == spec::SweepStudy::kNetwork || config.study == spec::SweepStudy::kCompare) {
    LoadAll(config, "catalog", "default", &s.catalogs, spec::LoadCatalog);
  }
  if (config.study == spec::SweepStudy::kCompare) {
    LoadAll(config, "moe_model", "", &s.models, load_model);
    LoadAll(config, "scenario", "paper-headline", &s.scenarios, spec::LoadScenario);
  }
  if (config.study == spec::SweepStudy::kEstimate || config.study == spec::SweepStudy::kSearch ||
      config.study == spec::SweepStudy::kCollective) {
    LoadAll(config, "placement", "tp-cp-ep-dp-pp", &s.placements, spec::LoadPlacement);
  }
  if (config.study == spec::SweepStudy::kFailures) {
    LoadAll(config, "failure_catalog", "h100-fleet", &s.failure_catalogs, spec::LoadFailureCatalog);
  }
  return s;
}

std::vector<int64_t> ShardPoints(int64_t points, int shard, int shards, const std::vector<int64_t>& done) {
  assert(shards >= 1 && shard >= 0 && shard < shards && "shard in range");
  std::vector<int64_t> sorted_done = done;
  std::sort(sorted_done.begin(), sorted_done.end());
  std::vector<int64_t> out;
  for (int64_t i = shard; i < points; i += shards) {
    if (!std::binary_search(sorted_done.begin(), sorted_done.end(), i)) out.push_back(i);
  }
  return out;
}

void RunSweepPoints(const spec::SweepConfig& config, const SweepSpecs& specs, const std::vector<int64_t>& indices,
                    int threads, const std::function<void(const SweepRow&)>& emit) {
  assert(threads >= 1 && "at least one worker");
  std::atomic<size_t> next{0};
  std::mutex emit_mutex;
  std::exception_ptr failure;  // emit's first exception (a full disk), under emit_mutex
  auto work = [&] {
    for (size_t i = next++; i < indices.size(); i = next++) {
      SweepRow row = RunSweepPoint(config, specs, indices[i]);
      std::lock_guard<std::mutex> lock(emit_mutex);
      if (failure) return;
      try {
        emit(row);
      } catch (...) {
        failure = std::current_exception();
        next = indices.size();
        return;
      }
    }
  };
  const int n = int(std::min<size_t>(size_t(threads), std::max<size_t>(indices.size(), 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace railsim::sweep
