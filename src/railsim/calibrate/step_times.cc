#include "railsim/calibrate/step_times.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/core/text_fields.h"
#include "railsim/spec/presets.h"
#include "railsim/study/precisions.h"

namespace railsim::calibrate {
namespace {

const std::vector<std::string> kColumns = {
    "id", "model", "gpus", "global-batch-size", "tp", "pp", "dp", "cp", "ep", "vp", "micro-batch-size",
    "recompute", "attention", "precision", "network", "sequence-parallel", "distributed-optimizer",
    "no-dp-overlap", "grad-reduce-in-bf16", "tp-comm-overlap", "no-overlap-p2p-communication", "fp8-params", "fp4-params",
    "moe-alltoall", "moe-imbalance", "moe-max-domains", "moe-overlap", "step_time_s"};
const char* const kRequired[] = {"model", "gpus", "global-batch-size", "tp", "pp", "micro-batch-size",
                                 "step_time_s"};

// One data row's cells by column name, with checked conversions.
class Cells {
 public:
  Cells(const std::map<std::string, size_t>& index, const std::vector<std::string>& cells, std::string where)
      : index_(index), cells_(cells), where_(std::move(where)) {}

  std::string_view Get(const char* column) const {
    auto it = index_.find(column);
    return it == index_.end() ? std::string_view() : std::string_view(cells_[it->second]);
  }
  // An empty cell gives `fallback`, unless that is below `min` (a value the
  // row must give).
  int64_t Int(const char* column, int64_t fallback, int64_t min, int64_t max) const {
    std::string_view text = Get(column);
    if (text.empty() && fallback >= min) return fallback;
    std::optional<int64_t> v = ParseWholeInt(text);
    if (!v || *v < min || *v > max) {
      throw Error(where_, fmt::format("{}: expected an integer in [{}, {}], got {}", column, min, max,
                                      Quoted(Printable(text))));
    }
    return *v;
  }
  double Number(const char* column, double fallback, double min, double max) const {
    std::string_view text = Get(column);
    if (text.empty() && fallback >= min) return fallback;
    std::optional<double> v = ParseWholeDouble(text);
    if (!v || *v < min || *v > max) {
      throw Error(where_, fmt::format("{}: expected a number in [{}, {}], got {}", column, min, max,
                                      Quoted(Printable(text))));
    }
    return *v;
  }
  bool Switch(const char* column) const {
    std::string_view text = Get(column);
    if (text.empty() || text == "false" || text == "0" || text == "no") return false;
    if (text == "true" || text == "1" || text == "yes") return true;
    throw Error(where_, fmt::format("{}: expected true or false, got {}", column, Quoted(Printable(text))));
  }
  // One of `choices` (the first when empty).
  std::string Choice(const char* column, const std::vector<std::string>& choices) const {
    std::string text(Get(column));
    if (text.empty()) return choices.front();
    if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
      throw Error(where_, fmt::format("{}: expected {}, got {}{}", column, fmt::join(choices, ", "),
                                      Quoted(Printable(text)), DidYouMean(text, choices)));
    }
    return text;
  }

 private:
  const std::map<std::string, size_t>& index_;
  const std::vector<std::string>& cells_;
  std::string where_;
};

std::map<std::string, size_t> Header(const std::vector<std::string>& cells, const std::string& where) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (std::find(kColumns.begin(), kColumns.end(), cells[i]) == kColumns.end()) {
      throw Error(where, fmt::format("unknown column {}{}; expected {}", Quoted(Printable(cells[i])),
                                     DidYouMean(cells[i], kColumns), fmt::join(kColumns, ", ")));
    }
    if (!index.emplace(cells[i], i).second) throw Error(where, fmt::format("column '{}' appears twice", cells[i]));
  }
  for (const char* need : kRequired) {
    if (!index.count(need)) throw Error(where, fmt::format("missing column '{}'", need));
  }
  return index;
}

spec::Strategy StrategyOf(const Cells& c, const spec::ModelSpec& model, int64_t gpus, const std::string& where) {
  spec::Strategy s;
  constexpr int64_t kDegree = 1 << 20;
  s.tp = int(c.Int("tp", 0, 1, kDegree));
  s.pp = int(c.Int("pp", 0, 1, kDegree));
  s.cp = int(c.Int("cp", 1, 1, kDegree));
  s.ep = int(c.Int("ep", 1, 1, kDegree));
  s.vp = int(c.Int("vp", 1, 1, kDegree));
  s.micro_batch = c.Int("micro-batch-size", 0, 1, spec::kMaxGlobalBatch);
  s.global_batch = c.Int("global-batch-size", 0, 1, spec::kMaxGlobalBatch);
  const int64_t others = int64_t{s.tp} * s.pp * s.cp;
  if (c.Get("dp").empty() && (others > gpus || gpus % others != 0)) {
    throw Error(where, fmt::format("dp: tp x pp x cp = {} does not divide gpus {}", others, gpus));
  }
  s.dp = c.Int("dp", gpus / std::max<int64_t>(others, 1), 1, spec::kMaxModelGpus);
  std::string r = c.Choice("recompute", {"none", "selective", "full"});
  s.recompute = r == "full" ? spec::Recompute::kFull : r == "selective" ? spec::Recompute::kSelective
                                                                         : spec::Recompute::kNone;
  s.attention = c.Choice("attention", {"flash", "classic"}) == "classic" ? spec::Attention::kClassic
                                                                          : spec::Attention::kFlash;
  s.precision = *spec::PrecisionFromName(c.Choice("precision", {"bf16", "fp8", "mxfp8", "fp4"}));
  s.low_precision_params = study::LowPrecisionParams(c.Switch("fp8-params"), c.Switch("fp4-params"), s.precision,
                                              where + ": fp8-params", where + ": fp4-params");
  s.sequence_parallel = c.Switch("sequence-parallel");
  s.dp_sharding = c.Switch("distributed-optimizer") ? spec::DpSharding::kOptimizer : spec::DpSharding::kNone;
  s.overlap_dp_comm = !c.Switch("no-dp-overlap");
  s.grad_reduce_16bit = c.Switch("grad-reduce-in-bf16");
  s.tp_comm_overlap = c.Switch("tp-comm-overlap");
  s.overlap_p2p_comm = !c.Switch("no-overlap-p2p-communication");
  std::string a = c.Choice("moe-alltoall", {"auto", "forwarded", "direct"});
  s.moe_alltoall = a == "forwarded" ? spec::MoeAllToAll::kForwarded
                   : a == "direct"  ? spec::MoeAllToAll::kDirect
                                    : spec::MoeAllToAll::kAuto;
  s.moe_imbalance = c.Number("moe-imbalance", 1, 1, spec::kMaxMoeImbalance);
  std::string_view domains = c.Get("moe-max-domains");
  s.moe_max_domains = domains.empty() || domains == "any" ? 0 : int(c.Int("moe-max-domains", 1, 1, 1 << 20));
  s.moe_overlap = c.Switch("moe-overlap");
  try {
    spec::ValidateStrategy(model, gpus, s);
  } catch (const Error& e) {
    // The strategy checks name flags ("--tp"); here they are columns.
    std::string column = e.where().substr(0, 2) == "--" ? e.where().substr(2) : e.where();
    throw Error(where, column.empty() ? e.message() : column + ": " + e.message());
  }
  return s;
}

std::string ModelPath(const std::string& name, const std::string& model_dir) {
  if (spec::FindPreset(spec::PresetKind::kModel, name) || model_dir.empty() || name.empty() || name[0] == '/') {
    return name;
  }
  return model_dir + "/" + name;
}

}  // namespace

std::vector<StepRun> ParseStepsCsv(std::string_view text, const std::string& file, const std::string& model_dir) {
  std::vector<StepRun> runs;
  std::map<std::string, size_t> index;
  std::map<std::string, spec::ModelSpec> models;
  bool header = false;
  std::vector<std::string_view> lines = SplitLines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = fmt::format("{}:{}", file, i + 1);
    std::string_view line = Trim(lines[i]);
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cells = SplitCsvLine(line);
    if (!header) {
      index = Header(cells, where);
      header = true;
      continue;
    }
    if (cells.size() != index.size()) {
      throw Error(where, fmt::format("expected {} cells as in the header, got {}{}", index.size(), cells.size(),
                                     cells.size() < index.size() ? " (truncated?)" : ""));
    }
    Cells c(index, cells, where);
    StepRun run;
    run.file = file;
    run.line = int(i) + 1;
    run.id = c.Get("id").empty() ? where : std::string(c.Get("id"));
    run.model_name = std::string(c.Get("model"));
    if (run.model_name.empty()) throw Error(where, "model: expected a model preset or JSON file, got ''");
    auto cached = models.find(run.model_name);
    if (cached == models.end()) {
      try {
        cached = models.emplace(run.model_name, spec::LoadModel(ModelPath(run.model_name, model_dir), "model")).first;
      } catch (const Error& e) {
        throw e.WithContext(where);
      }
    }
    run.model = cached->second;
    run.gpus = c.Int("gpus", 0, 1, spec::kMaxModelGpus);
    std::string network = c.Choice("network", {"rail-optimized", "rail-only", "ideal"});
    run.network = network == "rail-only" ? comm::NetworkKind::kRailOnly
                  : network == "ideal"   ? comm::NetworkKind::kIdeal
                                         : comm::NetworkKind::kRailOptimized;
    // From 1 us (below, the step is garbage that becomes 0 against the
    // predictions) to about 4 months.
    run.step_time_s = c.Number("step_time_s", -1, 1e-6, 1e7);
    if (run.step_time_s <= 0) throw Error(where, "step_time_s: expected a positive number of seconds");
    run.strategy = StrategyOf(c, run.model, run.gpus, where);
    runs.push_back(std::move(run));
  }
  if (runs.empty()) {
    throw Error(file, header ? "no data rows below the header" : "no header row (model,gpus,global-batch-size,...)");
  }
  return runs;
}

std::vector<StepRun> ReadSteps(const std::string& path, const std::string& flag) {
  std::string text = ReadTextFile(path, flag);
  size_t slash = path.rfind('/');
  return ParseStepsCsv(text, path, slash == std::string::npos ? std::string() : path.substr(0, slash));
}

}  // namespace railsim::calibrate
