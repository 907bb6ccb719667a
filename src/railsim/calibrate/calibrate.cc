// Calibrate's entry (calibrate.h): the rows from nccl-tests runs and step
// times, the held-out split, one fit per kind of rows (parameter_fit.h), and
// what the result reports: the errors, the notes, the warnings and the trust
// sentence.
#include "railsim/calibrate/calibrate.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "railsim/comm/collective.h"
#include "railsim/core/error.h"
#include "railsim/core/units.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "railsim/calibrate/parameter_fit.h"

namespace railsim::calibrate {
namespace {

// Which of `count` rows to hold out: `share` of them (at most all but one),
// chosen by a Fisher-Yates shuffle on `rng` (mt19937_64's raw output, which
// the standard fixes, so the split is the same on every platform).
std::vector<bool> HeldOut(size_t count, double share, std::mt19937_64& rng) {
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  for (size_t i = count; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  size_t held = count == 0 ? 0 : std::min(count - 1, size_t(std::llround(share * double(count))));
  std::vector<bool> out(count, false);
  for (size_t i = 0; i < held; ++i) out[order[i]] = true;
  return out;
}

ErrorSummary Summarize(const std::vector<CalibrationRow>& rows, RowKind kind, bool held_out) {
  ErrorSummary s;
  for (const CalibrationRow& r : rows) {
    if (r.kind != kind || r.held_out != held_out) continue;
    ++s.rows;
    s.mean_abs += std::fabs(r.error());
    s.worst = std::max(s.worst, std::fabs(r.error()));
  }
  if (s.rows > 0) s.mean_abs /= s.rows;
  return s;
}

std::string Percent(double x) { return fmt::format("{:.1f}%", 100 * x); }

// The warning for a kind of rows that does not outnumber the parameters
// fitted to it, or "".
std::string TooFewRows(const char* what, const ErrorSummary& fit, const std::vector<FittedParameter>& params,
                       RowKind kind) {
  int fitted = 0;
  for (const FittedParameter& p : params) {
    if (p.fitted && ParameterKind(p.key) == kind) ++fitted;
  }
  if (fitted == 0 || fit.rows > fitted) return "";
  return fmt::format("{} fitted {} row{} for {} fitted parameter{}: a fit with no more rows than parameters can "
                     "meet every row whatever their true values, so its error says nothing about them; measure "
                     "more rows{}",
                     fit.rows, what, fit.rows == 1 ? "" : "s", fitted, fitted == 1 ? "" : "s",
                     kind == RowKind::kCollective ? " (more sizes, collectives or node counts)" : " (more runs)");
}

// Whether calibrate times the rows of `run` (broadcast and single-rank runs
// are read but not fitted).
bool Fitted(const NcclTestsRun& run) { return run.collective != NcclCollective::kBroadcast && run.ranks >= 2; }

// What the rows measured and how well the fit holds on them: the sizes,
// collectives and largest node count of the fitted runs, the step runs'
// largest GPU count.
std::string TrustSentence(const CalibrationResult& r, const std::vector<NcclTestsRun>& runs,
                          const std::vector<StepRun>& steps) {
  std::string text;
  if (r.comm_fit.rows > 0) {
    int64_t nodes = 0, gpus = 0;
    double lo = 1e300, hi = 0;
    std::vector<std::string> ops;
    for (const NcclTestsRun& run : runs) {
      if (!Fitted(run)) continue;
      nodes = std::max(nodes, run.nodes);
      gpus = std::max(gpus, run.ranks);
      const std::string op = NcclCollectiveName(run.collective);
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
      for (const NcclTestsRow& row : run.rows) {
        lo = std::min(lo, row.size_bytes);
        hi = std::max(hi, row.size_bytes);
      }
    }
    std::sort(ops.begin(), ops.end());
    text = fmt::format("Communication within {} (mean {}) on the sizes measured ({} to {} of {}){}; not fitted "
                       "above {} nodes ({} GPUs)",
                       Percent(r.comm_fit.worst), Percent(r.comm_fit.mean_abs), units::FormatBytes(lo),
                       units::FormatBytes(hi), fmt::join(ops, ", "),
                       r.comm_held_out.rows > 0 ? fmt::format(", {} on held-out rows", Percent(r.comm_held_out.worst))
                                                : "",
                       nodes, gpus);
    const bool any = std::any_of(r.parameters.begin(), r.parameters.end(), [](const FittedParameter& p) {
      return p.after != p.before && ParameterKind(p.key) == RowKind::kCollective;
    });
    if (!any) text += " (no communication parameter moved: the notes say why)";
  } else {
    text = "Communication not fitted (no collective row)";
  }
  if (r.step_fit.rows > 0) {
    int64_t gpus = 0;
    for (const StepRun& s : steps) gpus = std::max(gpus, s.gpus);
    text += fmt::format("; step times within {} (mean {}) on {} run{} of up to {} GPUs{}", Percent(r.step_fit.worst),
                        Percent(r.step_fit.mean_abs), r.step_fit.rows, r.step_fit.rows == 1 ? "" : "s", gpus,
                        r.step_held_out.rows > 0 ? fmt::format(", {} on {} held-out runs",
                                                               Percent(r.step_held_out.worst), r.step_held_out.rows)
                                                 : "");
  } else {
    text += steps.empty() ? "; compute not fitted (no --steps)" : "";
  }
  return text + ".";
}

// The note for collective rows fitted on a base without NCCL's model (a
// system file with no "nccl" object): railsim's older model (its own ring,
// tree, hierarchical and NVLink SHARP plans, the fastest taken) does not
// follow NCCL's choice of algorithm and protocol, its latencies or its
// caps, and fits the p5's 23 nccl-tests rows to 12.0% mean (42.5%
// worst) where NCCL's model reaches 6.9% (18.4%). Names the presets of the
// same GPU that carry NCCL's model, to start from instead.
std::string OlderModelNote(const spec::SystemSpec& base) {
  std::vector<std::string> same_gpu;
  for (const spec::PresetInfo& info : spec::ListPresets()) {
    if (info.kind != spec::PresetKind::kSystem) continue;
    const spec::SystemSpec preset = spec::LoadSystem(info.name, "--system");
    if (preset.nccl.enabled && preset.gpu.name == base.gpu.name) same_gpu.push_back(info.name);
  }
  std::string text = "the base system has no \"nccl\" object, so the collectives are timed with railsim's older "
                     "model (its own ring, tree, hierarchical and NVLink SHARP plans, the fastest taken), not as NCCL "
                     "chooses its algorithm and protocol; on AWS p5's 8-node nccl-tests rows it fits to 12% mean "
                     "error where NCCL's model fits to 7%";
  if (same_gpu.empty()) return text + " (no preset of this GPU carries NCCL's model)";
  return text + fmt::format("; start from a preset of the same GPU that has it ({}: `railsim presets show NAME`, "
                            "then edit the bandwidths)",
                            fmt::join(same_gpu, ", "));
}

}  // namespace

const char* ParamStatusName(ParamStatus s) {
  switch (s) {
    case ParamStatus::kFitted: return "fitted";
    case ParamStatus::kAtBound: return "at bound";
    case ParamStatus::kNotConstrained: return "not constrained by the data";
    case ParamStatus::kOneNodeCount: return "left at the base: one node count in the data";
    case ParamStatus::kFittedAtOneNodeCount: return "fitted at one node count";
    case ParamStatus::kTied: return "left at the base: seen only with another";
    case ParamStatus::kBaseFitsBest: return "left at the base: fits best";
    case ParamStatus::kWithinNoise: return "left at the base: within the noise";
    case ParamStatus::kKept: return "kept";
  }
  return "";
}

double PredictCollective(const spec::SystemSpec& system, const NcclTestsRun& run, const NcclTestsRow& row) {
  const int64_t k = system.hb_domain_size;
  const int64_t cluster = std::max<int64_t>(1, (run.ranks + k - 1) / k) * k;
  comm::ClusterFabrics f = perf::MakeClusterNetwork(system, cluster, comm::NetworkKind::kRailOptimized).fabrics;
  comm::GroupLayout g = comm::LayoutOf(run.ranks, 1, k);
  const double bytes = row.size_bytes;
  switch (run.collective) {
    case NcclCollective::kAllReduce: return comm::AllReduceTime(bytes, g, f);
    case NcclCollective::kAllGather: return comm::AllGatherTime(bytes, g, f);
    case NcclCollective::kReduceScatter: return comm::ReduceScatterTime(bytes, g, f);
    case NcclCollective::kAllToAll: return comm::AllToAllTime(bytes, g, f, false);
    case NcclCollective::kSendRecv: return comm::SendRecvTime(bytes, 1, run.ranks, f);
    case NcclCollective::kBroadcast: return -1;
  }
  return -1;
}

double PredictStep(const spec::SystemSpec& system, const StepRun& step) {
  perf::PerfContext c = perf::MakePerfContext(step.model, system, step.gpus, step.network);
  return perf::EstimateIteration(c, step.strategy).iteration_time_s;
}

CalibrationResult Calibrate(const spec::SystemSpec& base, const std::vector<NcclTestsRun>& runs,
                            const std::vector<StepRun>& steps, const CalibrationOptions& options) {
  assert(options.holdout >= 0 && options.holdout <= kMaxHoldout);
  for ([[maybe_unused]] const std::string& key : options.keep) {
    assert(ParameterKind(key).has_value() && "CalibrationOptions::keep names a parameter calibrate does not fit");
  }
  CalibrationResult r;
  r.holdout = options.holdout;
  r.seed = options.seed;
  for (const StepRun& s : steps) {
    const std::string where = fmt::format("{}:{}", s.file, s.line);
    if (s.network != comm::NetworkKind::kIdeal && s.gpus % base.hb_domain_size != 0) {
      throw Error(where, fmt::format("gpus: expected a multiple of the system's HB domain size {}, got {}",
                                     base.hb_domain_size, s.gpus));
    }
    if (!perf::GpuModel::From(base.gpu).Supports(s.strategy.precision)) {
      throw Error(where, fmt::format("precision: the system's GPU {} does not run {} (no FP8 peak, or for mxfp8 and "
                                     "fp4 no FP4 peak); use bf16", base.gpu.name,
                                     spec::PrecisionName(s.strategy.precision)));
    }
  }
  // Rows first (pointers into r.rows stay valid once it is filled).
  struct Pending {
    const NcclTestsRun* run = nullptr;
    const NcclTestsRow* row = nullptr;
    const StepRun* step = nullptr;
  };
  std::vector<Pending> pending;
  for (const NcclTestsRun& run : runs) {
    if (std::string skipped = SkippedLinesNote(run); !skipped.empty()) r.notes.push_back(skipped);
    if (!Fitted(run)) {
      r.notes.push_back(fmt::format("{}: {} on {} GPU(s) not fitted: {}", run.file, NcclCollectiveName(run.collective),
                                    run.ranks, run.ranks < 2 ? "a single rank moves nothing"
                                                             : "railsim has no broadcast model"));
      continue;
    }
    if (run.nodes > 1 && run.ranks % run.nodes == 0 && run.ranks / run.nodes != base.hb_domain_size) {
      r.notes.push_back(fmt::format("{}: {} GPUs per host, but the system's HB domain is {} GPUs; timed as "
                                    "consecutive ranks in HB domains of {}",
                                    run.file, run.ranks / run.nodes, base.hb_domain_size, base.hb_domain_size));
    }
    for (const NcclTestsRow& row : run.rows) {
      CalibrationRow c;
      c.kind = RowKind::kCollective;
      c.source = fmt::format("{}:{}", run.file, row.line);
      c.label = fmt::format("{} {} GPUs {} nodes {}", NcclCollectiveName(run.collective), run.ranks, run.nodes,
                            units::FormatBytes(row.size_bytes));
      c.measured_s = row.oop_time_us * 1e-6;
      r.rows.push_back(c);
      pending.push_back({&run, &row, nullptr});
    }
  }
  for (const StepRun& s : steps) {
    CalibrationRow c;
    c.kind = RowKind::kStep;
    c.source = fmt::format("{}:{}", s.file, s.line);
    c.label = s.id;
    c.measured_s = s.step_time_s;
    r.rows.push_back(c);
    pending.push_back({nullptr, nullptr, &s});
  }
  if (r.rows.empty()) throw Error("--nccl-tests", "no row railsim can fit (broadcast and single-GPU runs are not)");

  RowSet comm, step;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const Pending p = pending[i];
    if (p.step) {
      step.rows.push_back(&r.rows[i]);
      step.predict.push_back([p](const spec::SystemSpec& s) { return PredictStep(s, *p.step); });
    } else {
      comm.rows.push_back(&r.rows[i]);
      comm.nodes[&r.rows[i]] = p.run->nodes;
      comm.predict.push_back([p](const spec::SystemSpec& s) { return PredictCollective(s, *p.run, *p.row); });
    }
  }
  std::mt19937_64 rng(options.seed);
  for (RowSet* set : {&comm, &step}) {
    std::vector<bool> held = HeldOut(set->rows.size(), options.holdout, rng);
    for (size_t i = 0; i < held.size(); ++i) set->rows[i]->held_out = held[i];
  }
  for (size_t i = 0; i < comm.rows.size(); ++i) comm.rows[i]->before_s = comm.predict[i](base);
  for (size_t i = 0; i < step.rows.size(); ++i) step.rows[i]->before_s = step.predict[i](base);

  r.system = base;
  NamedByStatus named;
  FitGroup(RowKind::kCollective, comm, options, &r.system, &r.parameters, &named);
  FitGroup(RowKind::kStep, step, options, &r.system, &r.parameters, &named);
  for (size_t i = 0; i < comm.rows.size(); ++i) comm.rows[i]->predicted_s = comm.predict[i](r.system);
  for (size_t i = 0; i < step.rows.size(); ++i) step.rows[i]->predicted_s = step.predict[i](r.system);

  for (const FittedParameter& f : r.parameters) {
    if (!f.fitted && f.status != ParamStatus::kAtBound) continue;
    // "gpu.x" is the GPU's field x, "nccl.x" the NCCL object's.
    const size_t dot = f.key.find('.');
    const std::string group = dot == std::string::npos ? "" : f.key.substr(0, dot);
    std::map<std::string, std::string>& sources = group == "gpu"    ? r.system.gpu.sources
                                                  : group == "nccl" ? r.system.nccl_sources
                                                                    : r.system.sources;
    sources[f.key.substr(dot == std::string::npos ? 0 : dot + 1)] = f.provenance;
  }
  r.system.name = base.name + "-calibrated";
  if (!comm.rows.empty() && !base.nccl.enabled) r.notes.push_back(OlderModelNote(base));
  if (!comm.rows.empty() && base.nccl.enabled) {
    r.notes.push_back("not fitted: NCCL's own constants (the system's \"nccl\" object: the base, NVLink and network "
                      "latencies per algorithm and protocol, the protocols' bandwidth caps, the channel speeds), "
                      "which come from NCCL's source; a fixed cost they lack shows in the fitted latencies");
  }
  AddParameterNotes(named, &r.notes);
  r.comm_fit = Summarize(r.rows, RowKind::kCollective, false);
  r.comm_held_out = Summarize(r.rows, RowKind::kCollective, true);
  r.step_fit = Summarize(r.rows, RowKind::kStep, false);
  r.step_held_out = Summarize(r.rows, RowKind::kStep, true);
  for (std::string w : {TooFewRows("collective", r.comm_fit, r.parameters, RowKind::kCollective),
                        TooFewRows("step", r.step_fit, r.parameters, RowKind::kStep)}) {
    if (!w.empty()) r.warnings.push_back(w);
  }
  if (r.warnings.empty()) r.trust = TrustSentence(r, runs, steps);
  return r;
}

int CalibrationResult::held_out_rows() const {
  return int(std::count_if(rows.begin(), rows.end(), [](const CalibrationRow& row) { return row.held_out; }));
}

}  // namespace railsim::calibrate
