#include "railsim/spec/sweep_config.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/units.h"
#include "railsim/spec/json_reader.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/strategy.h"

namespace railsim::spec {
namespace {

// kIntOrAny: an integer, or one of `choices` ("any" when there are none).
enum class Type { kInt, kNumber, kBandwidth, kBytes, kDuration, kString, kChoice, kBool, kIntOrAny };

// One parameter a study takes: its flag with underscores, its type and range.
struct ParamInfo {
  const char* key;
  Type type;
  double min = 0, max = 0;  // kInt, kNumber, kIntOrAny
  std::vector<std::string> choices = {};  // kChoice, kIntOrAny
  bool required = false;
};

constexpr double kMaxGpus = double(kMaxModelGpus);
constexpr double kMaxDegree = double(1 << 20);
constexpr double kMaxBatch = double(kMaxGlobalBatch);

std::vector<std::string> StackNames() {
  std::vector<std::string> names;
  for (Stack stack : kAllStacks) names.push_back(StackName(stack));
  return names;
}

// The flags every job-timing study shares (estimate, search): the job and the
// cluster it runs on.
std::vector<ParamInfo> JobParams() {
  return {
      {"model", Type::kString, 0, 0, {}, true},
      {"system", Type::kString, 0, 0, {}, true},
      {"gpus", Type::kInt, 1, kMaxGpus, {}, true},
      {"global_batch_size", Type::kInt, 1, kMaxBatch, {}, true},
      {"network", Type::kChoice, 0, 0, {"rail-only", "rail-optimized", "ideal"}},
      {"placement", Type::kString},
      {"hb_size", Type::kInt, 1, kMaxGpus},
      {"gpus_per_domain", Type::kInt, 1, kMaxGpus},
      {"attention", Type::kChoice, 0, 0, {"flash", "classic"}},
      {"cuda_graph_impl", Type::kChoice, 0, 0, CudaGraphImplNames()},
      {"stack", Type::kChoice, 0, 0, StackNames()},
      {"iteration_overhead", Type::kDuration, 0, kMaxIterationOverheadS},
      {"radix", Type::kInt, 2, 65536},
      {"oversubscription", Type::kNumber, 1, 65535},
  };
}

std::vector<ParamInfo> MoeParams() {
  return {
      {"moe_alltoall", Type::kChoice, 0, 0, {"auto", "forwarded", "direct"}},
      {"moe_imbalance", Type::kNumber, 1, kMaxMoeImbalance},
      {"moe_max_domains", Type::kIntOrAny, 1, double(1 << 20)},
      {"moe_overlap", Type::kBool},
  };
}

std::vector<ParamInfo> Concat(std::vector<ParamInfo> a, const std::vector<ParamInfo>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<ParamInfo> StudyParams(SweepStudy study) {
  switch (study) {
    case SweepStudy::kNetwork:
      return {
          {"design", Type::kChoice, 0, 0, {"rail-only", "rail-optimized", "fat-tree"}, true},
          {"gpus", Type::kInt, 1, kMaxGpus, {}, true},
          {"hb_size", Type::kInt, 1, kMaxGpus, {}, true},
          {"radix", Type::kInt, 2, 65536, {}, true},
          {"port_speed", Type::kBandwidth},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"catalog", Type::kString},
          {"max_gpus", Type::kInt, 1, kMaxGpus},
          {"server", Type::kString},
      };
    case SweepStudy::kEstimate:
      return Concat(Concat(JobParams(),
                           {
                               {"tp", Type::kInt, 1, kMaxDegree, {}, true},
                               {"pp", Type::kInt, 1, kMaxDegree, {}, true},
                               {"dp", Type::kInt, 1, kMaxGpus},
                               {"cp", Type::kInt, 1, kMaxDegree},
                               {"ep", Type::kInt, 1, kMaxDegree},
                               {"expert_tensor_parallel_size", Type::kIntOrAny, 1, kMaxDegree, {"tp"}},
                               {"vp", Type::kInt, 1, kMaxDegree},
                               {"account_for_embedding_in_pipeline_split", Type::kBool},
                               {"account_for_loss_in_pipeline_split", Type::kBool},
                               {"decoder_first_pipeline_num_layers", Type::kInt, 1, double(kMaxModelLayers)},
                               {"decoder_last_pipeline_num_layers", Type::kInt, 1, double(kMaxModelLayers)},
                               {"micro_batch_size", Type::kInt, 1, kMaxBatch, {}, true},
                               {"recompute", Type::kChoice, 0, 0, {"none", "selective", "full"}},
                               {"sequence_parallel", Type::kBool},
                               {"distributed_optimizer", Type::kBool},
                               {"no_dp_overlap", Type::kBool},
                               {"grad_reduce_in_bf16", Type::kBool},
                               {"tp_comm_overlap", Type::kBool},
                               {"no_overlap_p2p_communication", Type::kBool},
                               {"precision", Type::kChoice, 0, 0, {"bf16", "fp8", "mxfp8", "fp4"}},
                               {"fp8_params", Type::kBool},
                               {"fp4_params", Type::kBool},
                               {"num_layers_at_start_in_bf16", Type::kInt, 0, double(kMaxModelLayers)},
                               {"num_layers_at_end_in_bf16", Type::kInt, 0, double(kMaxModelLayers)},
                           }),
                    MoeParams());
    case SweepStudy::kAllToAll:
      return {
          {"system", Type::kString, 0, 0, {}, true},
          {"gpus", Type::kInt, 1, kMaxGpus, {}, true},
          {"hb_size", Type::kInt, 1, kMaxGpus},
          {"network", Type::kChoice, 0, 0, {"rail-optimized", "rail-only"}},
          {"radix", Type::kInt, 2, 65536},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"simulate", Type::kBool},
          {"routing", Type::kChoice, 0, 0, {"ecmp", "d-mod-k"}},
          {"seed", Type::kInt, 0, 9e15},
          {"max_memory", Type::kBytes},
          {"max_gpus", Type::kInt, 1, kMaxGpus},
          {"hb_bw", Type::kBandwidth},
          {"nic_bw", Type::kBandwidth},
          {"bytes_per_pair", Type::kBytes, 0, 0, {}, true},
          {"schedule", Type::kChoice, 0, 0, {"sequential", "pipelined"}},
          {"chunks", Type::kInt, 2, 1024},
      };
    case SweepStudy::kCollective:
      return {
          {"system", Type::kString, 0, 0, {}, true},
          {"gpus", Type::kInt, 1, kMaxGpus, {}, true},
          {"op", Type::kChoice, 0, 0,
           {"all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "send-recv"}, true},
          {"bytes", Type::kBytes, 0, 0, {}, true},
          {"group", Type::kChoice, 0, 0, {"tp", "cp", "ep", "dp", "pp", "all"}, true},
          {"hb_size", Type::kInt, 1, kMaxGpus},
          {"gpus_per_domain", Type::kInt, 1, kMaxGpus},
          {"network", Type::kChoice, 0, 0, {"rail-optimized", "rail-only", "ideal"}},
          {"radix", Type::kInt, 2, 65536},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"algorithm", Type::kChoice, 0, 0,
           {"auto", "ring", "tree", "hierarchical", "in-switch", "direct", "forwarded", "nvls-tree", "pat", "collnet"}},
          {"protocol", Type::kChoice, 0, 0, {"auto", "ll", "ll128", "simple"}},
          {"tp", Type::kInt, 1, kMaxDegree},
          {"pp", Type::kInt, 1, kMaxDegree},
          {"dp", Type::kInt, 1, kMaxGpus},
          {"cp", Type::kInt, 1, kMaxDegree},
          {"ep", Type::kInt, 1, kMaxDegree},
          {"expert_tensor_parallel_size", Type::kIntOrAny, 1, kMaxDegree, {"tp"}},
          {"placement", Type::kString},
          {"schedule", Type::kChoice, 0, 0, {"sequential", "pipelined"}},
          {"chunks", Type::kInt, 2, 1024},
          {"simulate", Type::kBool},
          {"routing", Type::kChoice, 0, 0, {"ecmp", "d-mod-k"}},
          {"seed", Type::kInt, 0, 9e15},
          {"max_memory", Type::kBytes},
          {"max_gpus", Type::kInt, 1, kMaxGpus},
      };
    case SweepStudy::kFailures:
      return {
          {"network", Type::kChoice, 0, 0, {"rail-only", "rail-optimized", "fat-tree"}, true},
          {"gpus", Type::kInt, 1, kMaxGpus, {}, true},
          {"system", Type::kString},
          {"hb_size", Type::kInt, 1, kMaxGpus},
          {"gpus_per_domain", Type::kInt, 1, kMaxGpus},
          {"radix", Type::kInt, 2, 65536},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"trials", Type::kInt, 1, 10'000'000},
          {"days", Type::kNumber, 1.0 / 24, 3650},
          {"seed", Type::kInt, 0, 9e15},
          {"failure_catalog", Type::kString},
          {"checkpoint_interval", Type::kDuration, 1, 30 * 86400.0},
          {"restart_time", Type::kDuration, 0, 30 * 86400.0},
          {"spare_policy", Type::kChoice, 0, 0, {"any", "same-rail", "domain", "ocs"}},
          {"target_availability", Type::kNumber, 0.5, 0.999999},
      };
    case SweepStudy::kCluster:
      // One design and one policy per point (railsim cluster's flags).
      return {
          {"trace", Type::kString},
          {"topology", Type::kString},
          {"system", Type::kString},
          {"gpus", Type::kInt, 1, kMaxGpus},
          {"hb_size", Type::kInt, 1, 4096},
          {"radix", Type::kInt, 2, 65536},
          {"port_speed", Type::kBandwidth},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"network", Type::kChoice, 0, 0, {"rail-only", "rail-optimized", "fat-tree"}},
          {"policy", Type::kChoice, 0, 0, {"first-fit", "domain-packing", "fewest-leaves", "block", "wait-for-fit"}},
          {"segment", Type::kInt, 1, 4096},
          {"max_wait", Type::kDuration, 0, 315360000},
          {"samples", Type::kInt, 1, 100000},
          {"jobs", Type::kInt, 1, 1000000},
          {"arrivals_per_hour", Type::kNumber, 1e-6, 1e6},
          {"size_mix", Type::kString},
          {"duration_median", Type::kDuration, 1, 315360000},
          {"duration_p90", Type::kDuration, 1, 315360000},
          {"seed", Type::kInt, 0, 9e15},
          {"no_backfill", Type::kBool},
          {"no_stretch", Type::kBool},
      };
    case SweepStudy::kCompare:
      // One comparison per point: one cluster, HB domain size, radix and
      // batch (the scenario's, or the point's).
      return {
          {"scenario", Type::kString},
          {"gpus", Type::kInt, 1, kMaxGpus},
          {"hb_size", Type::kInt, 1, kMaxGpus},
          {"gpus_per_domain", Type::kInt, 1, kMaxGpus},
          {"radix", Type::kInt, 2, 65536},
          {"port_speed", Type::kBandwidth},
          {"oversubscription", Type::kNumber, 1, 65535},
          {"model", Type::kString},
          {"system", Type::kString},
          {"global_batch_size", Type::kInt, 1, kMaxBatch},
          {"moe_model", Type::kString},
          {"moe_global_batch_size", Type::kInt, 1, kMaxBatch},
          {"allow_idle_gpus", Type::kInt, 0, kMaxGpus},
          {"stack", Type::kChoice, 0, 0, StackNames()},
          {"moe_stack", Type::kChoice, 0, 0, StackNames()},
          {"iteration_overhead", Type::kDuration, 0, kMaxIterationOverheadS},
          {"moe_iteration_overhead", Type::kDuration, 0, kMaxIterationOverheadS},
          {"precision", Type::kChoice, 0, 0, {"bf16", "fp8", "mxfp8", "fp4", "any"}},
          {"moe_precision", Type::kChoice, 0, 0, {"bf16", "fp8", "mxfp8", "fp4", "any"}},
          {"catalog", Type::kString},
          {"server", Type::kString},
      };
    case SweepStudy::kSearch:
      return Concat(Concat(JobParams(),
                           {
                               {"max_strategies", Type::kInt, 1, 9e15},
                               {"precision", Type::kChoice, 0, 0, {"bf16", "fp8", "mxfp8", "fp4", "any"}},
                               {"no_tp_comm_overlap", Type::kBool},
                               {"allow_idle_gpus", Type::kInt, 0, kMaxGpus},
                               {"expert_tensor_parallel_size", Type::kIntOrAny, 1, kMaxDegree, {"any", "tp"}},
                           }),
                    MoeParams());
  }
  return {};
}

const std::vector<std::pair<SweepStudy, const char*>>& StudyNames() {
  static const std::vector<std::pair<SweepStudy, const char*>> names = {
      {SweepStudy::kNetwork, "network"},   {SweepStudy::kEstimate, "estimate"},
      {SweepStudy::kSearch, "search"},     {SweepStudy::kAllToAll, "alltoall"},
      {SweepStudy::kCollective, "collective"}, {SweepStudy::kFailures, "failures"},
      {SweepStudy::kCompare, "compare"},   {SweepStudy::kCluster, "cluster"},
  };
  return names;
}

// Reads `value` (found at `parent`/`key`) as parameter `p`, validating its
// type and range.
SweepValue ReadValue(const nlohmann::json& value, const std::string& parent, const std::string& key,
                     const ParamInfo& p) {
  nlohmann::json wrap = nlohmann::json::object();
  wrap[key] = value;
  JsonReader r(wrap, parent);
  SweepValue v;
  switch (p.type) {
    case Type::kIntOrAny:
      if (value.is_string()) {
        v.kind = SweepValue::Kind::kString;
        const std::vector<std::string> words = p.choices.empty() ? std::vector<std::string>{"any"} : p.choices;
        v.text = r.EnumOr(key, words, words.front());
        return v;
      }
      [[fallthrough]];
    case Type::kInt:
      v.kind = SweepValue::Kind::kInt;
      v.int_value = r.Int(key, int64_t(p.min), int64_t(p.max));
      v.number = double(v.int_value);
      return v;
    case Type::kNumber:
      v.kind = SweepValue::Kind::kNumber;
      v.number = r.Number(key, p.min, p.max);
      return v;
    case Type::kBandwidth:
      v.kind = SweepValue::Kind::kString;
      v.number = r.Bandwidth(key);
      v.text = units::FormatBitRate(v.number);
      return v;
    case Type::kBytes:
      v.kind = SweepValue::Kind::kNumber;
      v.number = r.Bytes(key);
      if (v.number > 1e12) throw Error(r.PointerTo(key), fmt::format("expected a size in (0, 1TB], got {}", v.number));
      return v;
    case Type::kDuration: {
      v.kind = SweepValue::Kind::kString;
      v.text = r.String(key);
      v.number = units::ParseDuration(v.text, r.PointerTo(key));
      if (!(v.number >= p.min && v.number <= p.max)) {
        throw Error(r.PointerTo(key), fmt::format("expected a duration in [{}, {}], got {}",
                                                  units::FormatDuration(p.min), units::FormatDuration(p.max), v.text));
      }
      return v;
    }
    case Type::kString:
      v.kind = SweepValue::Kind::kString;
      v.text = r.String(key);
      if (v.text.empty()) throw Error(r.PointerTo(key), "expected a non-empty string");
      return v;
    case Type::kChoice:
      v.kind = SweepValue::Kind::kString;
      v.text = r.EnumOr(key, p.choices, p.choices.front());
      return v;
    case Type::kBool:
      v.kind = SweepValue::Kind::kBool;
      v.flag = r.BoolOr(key, false);
      return v;
  }
  return v;
}

const ParamInfo& FindInfo(const std::vector<ParamInfo>& params, const std::string& key, const std::string& where,
                          SweepStudy study) {
  std::vector<std::string> keys;
  for (const ParamInfo& p : params) {
    if (key == p.key) return p;
    keys.push_back(p.key);
  }
  throw Error(where, fmt::format("unknown parameter of study '{}'{}; expected one of {}", SweepStudyName(study),
                                 DidYouMean(key, keys), fmt::join(keys, ", ")));
}

// A range {"from": a, "to": b, "step": s} (arithmetic) or {"from": a, "to":
// b, "times": f} (geometric), inclusive of both ends when reached.
std::vector<SweepValue> ReadRange(const nlohmann::json& range, const std::string& where, const ParamInfo& p) {
  if (p.type != Type::kInt && p.type != Type::kNumber) {
    throw Error(where, fmt::format("a range needs a numeric parameter; give '{}' as a list", p.key));
  }
  JsonReader r(range, where);
  const bool ints = p.type == Type::kInt;
  const double from = ints ? double(r.Int("from", int64_t(p.min), int64_t(p.max))) : r.Number("from", p.min, p.max);
  const double to = ints ? double(r.Int("to", int64_t(from), int64_t(p.max))) : r.Number("to", from, p.max);
  const bool geometric = r.Has("times");
  if (geometric == r.Has("step")) throw Error(where, "expected a range with either \"step\" or \"times\"");
  const double by = geometric ? (ints ? double(r.Int("times", 2, 1 << 20)) : r.Number("times", 1.000001, 1e6))
                              : (ints ? double(r.Int("step", 1, INT64_MAX)) : r.Number("step", 1e-12, 1e18));
  r.Finish();
  std::vector<SweepValue> values;
  for (int64_t i = 0;; ++i) {
    const double x = geometric ? from * std::pow(by, double(i)) : from + by * double(i);
    if (x > to * (1 + 1e-12)) break;
    if (int64_t(values.size()) == kMaxAxisValues) {
      throw Error(where, fmt::format("expected at most {} values in a range", kMaxAxisValues));
    }
    SweepValue v;
    v.kind = ints ? SweepValue::Kind::kInt : SweepValue::Kind::kNumber;
    v.int_value = ints ? int64_t(std::llround(x)) : 0;
    v.number = ints ? double(v.int_value) : x;
    values.push_back(v);
  }
  return values;
}

std::vector<SweepValue> ReadAxisValues(const nlohmann::json& axis, const std::string& where, const ParamInfo& p) {
  if (axis.is_object()) return ReadRange(axis, where, p);
  if (!axis.is_array() || axis.empty()) {
    throw Error(where, fmt::format("expected a non-empty list of values or a range object, got {}", Describe(axis)));
  }
  if (int64_t(axis.size()) > kMaxAxisValues) {
    throw Error(where, fmt::format("expected at most {} values, got {}", kMaxAxisValues, axis.size()));
  }
  std::vector<SweepValue> values;
  for (size_t i = 0; i < axis.size(); ++i) values.push_back(ReadValue(axis[i], where, std::to_string(i), p));
  return values;
}

int RankOf(const std::vector<ParamInfo>& params, const std::string& key) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (key == params[i].key) return int(i);
  }
  return int(params.size());
}

// Joins the axes named in "zip" groups into one axis each.
std::vector<SweepAxis> ZipAxes(const nlohmann::json& zip, std::map<std::string, SweepAxis> plain) {
  std::vector<SweepAxis> axes;
  if (!zip.is_array()) throw Error("/zip", fmt::format("expected an array of arrays of axis names, got {}", Describe(zip)));
  for (size_t g = 0; g < zip.size(); ++g) {
    const std::string where = fmt::format("/zip/{}", g);
    if (!zip[g].is_array() || zip[g].size() < 2) {
      throw Error(where, fmt::format("expected an array of at least two axis names, got {}", Describe(zip[g])));
    }
    SweepAxis joined;
    for (size_t j = 0; j < zip[g].size(); ++j) {
      const std::string at = fmt::format("{}/{}", where, j);
      if (!zip[g][j].is_string()) throw Error(at, fmt::format("expected an axis name, got {}", Describe(zip[g][j])));
      const std::string name = zip[g][j].get<std::string>();
      auto it = plain.find(name);
      if (it == plain.end()) {
        throw Error(at, fmt::format("{} is not an axis (or is zipped twice); zip names keys of \"axes\"",
                                    Quoted(name)));
      }
      if (j > 0 && it->second.tuples.size() != joined.tuples.size()) {
        throw Error(at, fmt::format("axis '{}' has {} values but '{}' has {}; zipped axes advance together",
                                    name, it->second.tuples.size(), joined.keys.front(), joined.tuples.size()));
      }
      joined.keys.push_back(name);
      if (j == 0) joined.tuples.resize(it->second.tuples.size());
      for (size_t i = 0; i < joined.tuples.size(); ++i) joined.tuples[i].push_back(it->second.tuples[i][0]);
      plain.erase(it);
    }
    axes.push_back(joined);
  }
  for (auto& [name, axis] : plain) axes.push_back(axis);
  return axes;
}

}  // namespace

const char* SweepStudyName(SweepStudy study) {
  for (const auto& [s, name] : StudyNames()) {
    if (s == study) return name;
  }
  return "?";
}

std::vector<std::string> SweepParamKeys(SweepStudy study) {
  std::vector<std::string> keys;
  for (const ParamInfo& p : StudyParams(study)) keys.push_back(p.key);
  return keys;
}

const SweepValue* FindParam(const std::vector<SweepParam>& point, std::string_view key) {
  for (const SweepParam& p : point) {
    if (p.key == key) return &p.value;
  }
  return nullptr;
}

std::vector<SweepParam> SweepConfig::Point(int64_t index) const {
  assert(index >= 0 && index < points && "point index in range");
  std::vector<SweepParam> out = fixed;
  for (size_t a = axes.size(); a-- > 0;) {
    const int64_t n = int64_t(axes[a].tuples.size());
    const std::vector<SweepValue>& tuple = axes[a].tuples[size_t(index % n)];
    index /= n;
    for (size_t j = 0; j < axes[a].keys.size(); ++j) out.push_back({axes[a].keys[j], tuple[j]});
  }
  const std::vector<std::string> order = SweepParamKeys(study);
  std::sort(out.begin(), out.end(), [&](const SweepParam& x, const SweepParam& y) {
    return std::find(order.begin(), order.end(), x.key) < std::find(order.begin(), order.end(), y.key);
  });
  return out;
}

SweepConfig ParseSweepConfigJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  SweepConfig config;
  std::vector<std::string> names;
  for (const auto& [s, name] : StudyNames()) names.push_back(name);
  const std::string study = r.EnumOr("study", names, "");
  if (study.empty()) throw Error("/study", fmt::format("expected one of {}", fmt::join(names, ", ")));
  for (const auto& [s, name] : StudyNames()) {
    if (study == name) config.study = s;
  }
  const std::vector<ParamInfo> params = StudyParams(config.study);
  std::set<std::string> given;
  if (r.Has("fixed")) {
    r.Object("fixed");  // type check
    for (const auto& [key, value] : doc["fixed"].items()) {
      const ParamInfo& p = FindInfo(params, key, "/fixed/" + key, config.study);
      config.fixed.push_back({key, ReadValue(value, "/fixed", key, p)});
      given.insert(key);
    }
  }
  std::map<std::string, SweepAxis> plain;
  int64_t values = 0;
  if (r.Has("axes")) {
    r.Object("axes");
    for (const auto& [key, value] : doc["axes"].items()) {
      const std::string where = "/axes/" + key;
      const ParamInfo& p = FindInfo(params, key, where, config.study);
      if (given.count(key)) throw Error(where, fmt::format("'{}' is also in /fixed; give it in one place", key));
      SweepAxis axis{{key}, {}};
      for (SweepValue& v : ReadAxisValues(value, where, p)) axis.tuples.push_back({std::move(v)});
      values += int64_t(axis.tuples.size());
      if (values > kMaxSweepValues) {
        throw Error(where, fmt::format("expected at most {} values over all axes", kMaxSweepValues));
      }
      plain[key] = std::move(axis);
      given.insert(key);
    }
  }
  config.axes = r.Has("zip") ? ZipAxes(r.Array("zip"), std::move(plain)) : [&] {
    std::vector<SweepAxis> axes;
    for (auto& [name, axis] : plain) axes.push_back(std::move(axis));
    return axes;
  }();
  for (const char* key : {"fixed", "axes", "zip"}) r.Skip(key);
  r.Finish();
  for (const ParamInfo& p : params) {
    if (p.required && !given.count(p.key)) {
      throw Error("/fixed", fmt::format("missing parameter '{}': study '{}' needs it in /fixed or /axes", p.key, study));
    }
  }
  std::sort(config.axes.begin(), config.axes.end(), [&](const SweepAxis& a, const SweepAxis& b) {
    return RankOf(params, a.keys.front()) < RankOf(params, b.keys.front());
  });
  for (const SweepAxis& a : config.axes) {
    config.points *= int64_t(a.tuples.size());
    if (config.points > kMaxSweepPoints) {
      throw Error("/axes", fmt::format("the grid has more than {} points; split it into several sweeps",
                                       kMaxSweepPoints));
    }
  }
  return config;
}

}  // namespace railsim::spec
