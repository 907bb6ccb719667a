#include "railsim/spec/scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "railsim/core/error.h"
#include "railsim/core/units.h"
#include "railsim/spec/json_reader.h"
#include "railsim/spec/stack.h"
#include "railsim/spec/strategy.h"

namespace railsim::spec {
namespace {

// Bounds that keep a compare run to seconds: each entry builds a graph.
constexpr int64_t kMaxScenarioGpus = int64_t{1} << 20;
constexpr size_t kMaxListEntries = 16;

std::vector<int64_t> IntList(JsonReader& r, const std::string& key, int64_t min, int64_t max,
                             bool required) {
  std::vector<int64_t> out;
  if (!required && !r.Has(key)) {
    r.Skip(key);
    return out;
  }
  const nlohmann::json& array = r.Array(key);
  if (array.empty() || array.size() > kMaxListEntries) {
    throw Error(r.PointerTo(key), fmt::format("expected 1 to {} entries, got {}", kMaxListEntries,
                                              array.size()));
  }
  for (size_t i = 0; i < array.size(); ++i) {
    const nlohmann::json& v = array[i];
    std::string where = fmt::format("{}/{}", r.PointerTo(key), i);
    bool integer = v.is_number_integer() || v.is_number_unsigned();
    if (!integer || (v.is_number_integer() && v.get<int64_t>() < min) ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) ||
        (v.is_number_integer() && v.get<int64_t>() > max)) {
      throw Error(where, fmt::format("expected an integer in [{}, {}], got {}", min, max, Describe(v)));
    }
    out.push_back(v.get<int64_t>());
  }
  return out;
}

}  // namespace

Scenario ParseScenarioJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  Scenario s;
  s.name = r.Name("name");
  s.description = r.StringOr("description", "");
  s.gpus = r.Int("gpus", 1, kMaxScenarioGpus);
  const std::vector<int64_t> sizes = IntList(r, "hb_domain_sizes", 1, s.gpus, true);
  s.gpus_per_domain = r.IntOr("gpus_per_domain", 0, 1, s.gpus);
  for (int64_t k : sizes) {
    const int64_t used = s.GpusPerDomain(k);
    if (s.gpus % used != 0) {
      throw Error("/hb_domain_sizes",
                  used < k ? fmt::format("expected gpus {} to be a multiple of gpus_per_domain {} on domains of {}",
                                         s.gpus, used, k)
                           : fmt::format("expected divisors of gpus {}, got {}", s.gpus, k));
    }
    if (s.BuiltGpus(k) > kMaxScenarioGpus) {
      throw Error("/gpus", fmt::format("expected at most {} GPUs built, got {} on domains of {}", kMaxScenarioGpus,
                                       s.BuiltGpus(k), k));
    }
    s.hb_domain_sizes.push_back(static_cast<int>(k));
  }
  for (int64_t k : IntList(r, "radixes", 2, 65536, true)) {
    if (k % 2 != 0) throw Error("/radixes", fmt::format("expected even radixes, got {}", k));
    s.radixes.push_back(static_cast<int>(k));
  }
  s.port_speed_Bps = r.Bandwidth("port_speed");
  s.oversubscription = r.NumberOr("oversubscription", 1, 1, 65535);
  s.model = r.StringOr("model", "");
  if (s.model == kNoModel) s.model.clear();
  s.system = r.StringOr("system", "");
  for (const auto& [key, system] : r.StringMapOr("hb_domain_systems")) {
    const std::string where = "/hb_domain_systems/" + key;
    int k = 0;
    for (int size : s.hb_domain_sizes) {
      if (std::to_string(size) == key) k = size;
    }
    if (k == 0) {
      throw Error(where, fmt::format("expected one of hb_domain_sizes ({}), got {}", fmt::join(s.hb_domain_sizes, ", "),
                                     Quoted(key)));
    }
    if (system.empty()) throw Error(where, "expected a system preset or file, got ''");
    s.hb_domain_systems[k] = system;
  }
  s.global_batch_sizes = IntList(r, "global_batch_sizes", 1, int64_t{1} << 30, false);
  std::vector<std::string> precisions;
  for (Precision p : kAllPrecisions) precisions.push_back(PrecisionName(p));
  precisions.push_back("any");
  s.precision = r.EnumOr("precision", precisions, "bf16");
  s.moe_precision = r.EnumOr("moe_precision", precisions, "bf16");
  std::vector<std::string> stacks;
  for (Stack stack : kAllStacks) stacks.push_back(StackName(stack));
  s.stack = r.EnumOr("stack", stacks, s.stack);
  s.moe_stack = r.EnumOr("moe_stack", stacks, s.moe_stack);
  auto overhead = [&r](const char* key) -> std::optional<double> {
    if (!r.Has(key)) return std::nullopt;
    const double seconds = r.Duration(key);
    if (seconds > kMaxIterationOverheadS) {
      throw Error(r.PointerTo(key), fmt::format("expected a time in [0, {}], got {}",
                                                units::FormatDuration(kMaxIterationOverheadS),
                                                units::FormatDuration(seconds)));
    }
    return seconds;
  };
  s.iteration_overhead_s = overhead("iteration_overhead");
  s.moe_iteration_overhead_s = overhead("moe_iteration_overhead");
  s.allow_idle_gpus = r.IntOr("allow_idle_gpus", 0, 0, s.gpus / 2);
  if (!s.model.empty() && (s.system.empty() || s.global_batch_sizes.empty())) {
    throw Error(s.system.empty() ? "/system" : "/global_batch_sizes",
                "required when a model is given");
  }
  s.moe_model = r.StringOr("moe_model", "");
  if (s.moe_model == kNoModel) s.moe_model.clear();
  if (!s.moe_model.empty()) {
    if (s.system.empty()) throw Error("/system", "required when an MoE model is given");
    s.moe_global_batch_size = r.Int("moe_global_batch_size", 1, int64_t{1} << 30);
    s.moe_max_domains = static_cast<int>(r.IntOr("moe_max_domains", 0, 0, 1 << 20));
    s.moe_overlap = r.BoolOr("moe_overlap", false);
  } else {
    for (const char* key : {"moe_global_batch_size", "moe_max_domains", "moe_overlap"}) {
      if (r.Has(key)) throw Error(r.PointerTo(key), "expected moe_model with the MoE settings");
      r.Skip(key);  // absent: named among the known keys of an unknown-field error
    }
  }
  s.job_trace = r.StringOr("job_trace", "");
  if (r.Has("job_trace_policies")) {
    if (s.job_trace.empty()) throw Error(r.PointerTo("job_trace_policies"), "expected job_trace with its policies");
    const nlohmann::json& list = r.Array("job_trace_policies");
    if (list.empty() || list.size() > 8) {
      throw Error(r.PointerTo("job_trace_policies"), "expected 1 to 8 scheduler policy names");
    }
    s.job_trace_policies.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string where = r.PointerTo("job_trace_policies") + "/" + std::to_string(i);
      if (!list[i].is_string() || list[i].get<std::string>().empty()) {
        throw Error(where, "expected a scheduler policy name, got " + Describe(list[i]));
      }
      s.job_trace_policies.push_back(list[i].get<std::string>());
    }
  } else {
    r.Skip("job_trace_policies");  // absent: named among the known keys
  }
  r.Finish();
  return s;
}

std::string ScenarioToJson(const Scenario& s) {
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["description"] = s.description;
  j["gpus"] = s.gpus;
  j["hb_domain_sizes"] = s.hb_domain_sizes;
  j["radixes"] = s.radixes;
  j["port_speed"] = units::FormatBitRate(s.port_speed_Bps);
  j["oversubscription"] = s.oversubscription;
  if (!s.model.empty()) {
    j["model"] = s.model;
    j["global_batch_sizes"] = s.global_batch_sizes;
  }
  if (!s.system.empty()) j["system"] = s.system;
  if (s.precision != "bf16") j["precision"] = s.precision;
  if (s.moe_precision != "bf16") j["moe_precision"] = s.moe_precision;
  if (s.stack != "megatron-core") j["stack"] = s.stack;
  if (s.moe_stack != "megatron-core") j["moe_stack"] = s.moe_stack;
  if (s.iteration_overhead_s) j["iteration_overhead"] = units::FormatDuration(*s.iteration_overhead_s);
  if (s.moe_iteration_overhead_s) j["moe_iteration_overhead"] = units::FormatDuration(*s.moe_iteration_overhead_s);
  for (const auto& [k, system] : s.hb_domain_systems) j["hb_domain_systems"][std::to_string(k)] = system;
  if (s.allow_idle_gpus > 0) j["allow_idle_gpus"] = s.allow_idle_gpus;
  if (s.gpus_per_domain > 0) j["gpus_per_domain"] = s.gpus_per_domain;
  if (!s.moe_model.empty()) {
    j["moe_model"] = s.moe_model;
    j["moe_global_batch_size"] = s.moe_global_batch_size;
    j["moe_max_domains"] = s.moe_max_domains;
    j["moe_overlap"] = s.moe_overlap;
  }
  if (!s.job_trace.empty()) {
    j["job_trace"] = s.job_trace;
    j["job_trace_policies"] = s.job_trace_policies;
  }
  return j.dump(2) + "\n";
}

}  // namespace railsim::spec
