// The fit behind Calibrate: the parameters calibrate may move and their
// bounds, the least-squares fit of one kind of rows with the rules that
// leave a parameter at its base (calibrate.h says which and why), and each
// parameter's status, provenance and notes.
#include "railsim/calibrate/parameter_fit.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/calibrate/least_squares.h"

namespace railsim::calibrate {
namespace {

// A system parameter the fit may move, its bounds and the rows that see it.
struct ParamDef {
  const char* key;
  bool seconds;
  double lo, hi;
  double& (*field)(spec::SystemSpec&);
  RowKind kind;
};

// Bounds: an efficiency below 0.3 of line rate means a broken link or GPU,
// not a slow one, and none can pass 1 (the in-switch all-reduce can: NVLink
// SHARP's busbw counts bytes the switch adds, about 1.07 of line rate on H100,
// so it may reach 1.5). Latencies: NCCL's own per-step constants are 1-15 us
// (reference nccl-model section 2.2); 50 us on NVLink and 100 us per NIC
// step leave room for slow hosts. The net plugin's reported latency is 0 on
// InfiniBand and 50 us for EFA (aws-p5's fit), so up to 200 us; NCCL's
// all-to-all schedule costs aws-p5 10 us per remote peer, so up to 50 us.
// Compute: large GEMMs reach 30-95% of peak, fused attention 20-90%; the
// overlap costs are fractions; the fixed costs per iteration (optimizer,
// gradient norm, batch loading, logging: 185 ms on DGX H100) and per
// pipeline chunk (600 us there) up to 1 s and 10 ms, beyond which a step
// is stalled rather than slow; the straggler jitter up to 0.2 sqrt(s) (a GPU
// drifting 20% over one second of work is failing, not jittering).
//
// The order matters: when the rows cannot tell two parameters apart (the
// all-to-all rows of one node count see the per-peer cost, the NIC latency
// and the NVLink latency only as one sum), the earlier one is fitted and the
// later one kept (Separable). NCCL's own parameters come first, as those
// are what its cost model uses; nic_latency and hb_latency are the older
// model's, which NCCL's uses only for all-to-all and send/recv.
// kernel_overhead is not fitted: it trades against the GEMM efficiency and
// the per-iteration cost, and the step rows cannot split them.
const ParamDef kParams[] = {
    {"nic_efficiency", false, 0.3, 1.0, [](spec::SystemSpec& s) -> double& { return s.nic_efficiency; },
     RowKind::kCollective},
    {"nccl.nic_tree_efficiency", false, 0.3, 1.0,
     [](spec::SystemSpec& s) -> double& { return s.nccl.nic_tree_efficiency; }, RowKind::kCollective},
    {"nccl.nic_alltoall_efficiency", false, 0.3, 1.0,
     [](spec::SystemSpec& s) -> double& { return s.nccl.nic_alltoall_efficiency; }, RowKind::kCollective},
    {"hb_efficiency", false, 0.3, 1.0, [](spec::SystemSpec& s) -> double& { return s.hb_efficiency; },
     RowKind::kCollective},
    {"hb_in_network_allreduce_efficiency", false, 0.3, 1.5,
     [](spec::SystemSpec& s) -> double& { return s.hb_in_network_allreduce_efficiency; }, RowKind::kCollective},
    {"nccl.nic_reported_latency_us", true, 0, 200e-6,
     [](spec::SystemSpec& s) -> double& { return s.nccl.nic_reported_latency_s; }, RowKind::kCollective},
    {"nccl.p2p_peer_latency_us", true, 0, 50e-6,
     [](spec::SystemSpec& s) -> double& { return s.nccl.p2p_peer_latency_s; }, RowKind::kCollective},
    {"nic_latency", true, 0, 100e-6, [](spec::SystemSpec& s) -> double& { return s.nic_latency_s; },
     RowKind::kCollective},
    {"hb_latency", true, 0, 50e-6, [](spec::SystemSpec& s) -> double& { return s.hb_latency_s; },
     RowKind::kCollective},
    {"gpu.gemm_efficiency", false, 0.3, 0.95, [](spec::SystemSpec& s) -> double& { return s.gpu.gemm_efficiency; },
     RowKind::kStep},
    {"gpu.fp8_gemm_efficiency", false, 0.2, 0.95,
     [](spec::SystemSpec& s) -> double& { return s.gpu.fp8_gemm_efficiency; }, RowKind::kStep},
    {"gpu.mxfp8_gemm_efficiency", false, 0.2, 0.95,
     [](spec::SystemSpec& s) -> double& { return s.gpu.mxfp8_gemm_efficiency; }, RowKind::kStep},
    {"gpu.fp4_gemm_efficiency", false, 0.1, 0.95,
     [](spec::SystemSpec& s) -> double& { return s.gpu.fp4_gemm_efficiency; }, RowKind::kStep},
    {"gpu.flash_attention_efficiency", false, 0.2, 0.9,
     [](spec::SystemSpec& s) -> double& { return s.gpu.flash_attention_efficiency; }, RowKind::kStep},
    {"gpu.iteration_overhead", true, 0, 1.0,
     [](spec::SystemSpec& s) -> double& { return s.gpu.iteration_overhead_s; }, RowKind::kStep},
    {"gpu.pipeline_chunk_overhead", true, 0, 10e-3,
     [](spec::SystemSpec& s) -> double& { return s.gpu.pipeline_chunk_overhead_s; }, RowKind::kStep},
    {"gpu.tp_comm_overlap_cost", false, 0, 1,
     [](spec::SystemSpec& s) -> double& { return s.gpu.tp_comm_overlap_cost; }, RowKind::kStep},
    {"gpu.moe_layer_overhead", true, 0, 5e-3,
     [](spec::SystemSpec& s) -> double& { return s.gpu.moe_layer_overhead_s; }, RowKind::kStep},
    {"gpu.straggler_jitter", false, 0, 0.2,
     [](spec::SystemSpec& s) -> double& { return s.gpu.straggler_jitter; }, RowKind::kStep},
};

// A prediction must move by more than this (relative) across a parameter's
// whole range for the row to count as constraining it.
constexpr double kSensitivity = 1e-3;
// ... and, after the fit, across this share of its range around its value.
constexpr double kLocalStep = 0.01;
// With rows of one node count, the scale-dependent parameters stay at the
// base's values unless the fit of the others still misses the rows by more
// than this (mean |log(predicted / measured)|): measurement noise and the
// model's known misses on real sweeps (aws-p5's own rows: 6.9%) stay below.
// The note for kFittedAtOneNodeCount says "10%".
constexpr double kOneCountMiss = 0.10;
// Two parameters the rows cannot tell apart: the slope of the rows' log
// predictions in one lies within this share of its length of the span of
// the slopes of those before it (about 3 degrees). Exact ties (latencies
// that add up on every row) leave less than 1e-6.
constexpr double kDistinct = 0.05;
// The step of those slopes, as a share of each parameter's range.
constexpr double kSlopeStep = 1e-3;
// A fitted value the rows see only weakly (SeenWeakly) goes back to the
// base's when that raises the fitted rows' sum of squared log errors (the
// others at their fitted values) by less than this many times the fit's
// residual variance (sum of squares over rows less free parameters): an
// F-test of one parameter at about 94% for 10 to 50 spare rows (F(1, d)'s
// 95% point is 4.96 at d = 10, 4.03 at 50), the base being the physically
// motivated value a fit has to beat.
constexpr double kSignificance = 4;
// ... and they see it weakly when no row's time changes by more than this
// share of the parameter's relative change: a 10% change of it moves no row
// by more than 1%.
constexpr double kWeak = 0.1;

// Whether the cost `p` stands for grows with the node count under the
// model `system` uses (comm/nccl_model.cc, comm/algorithms.cc): NCCL's
// reported network latency is paid per network step (2 (nodes - 1) in a
// ring all-reduce, 2 log2(nodes) in a tree), the all-to-all's per-peer cost
// per remote peer, and without NCCL's model nic_latency per ring or tree
// step. The efficiencies scale bytes, whose share crossing the NICs stays
// within a factor of two at any node count, and the NVLink latency is paid
// per step inside a node.
bool ScaleDependent(const ParamDef& p, const spec::SystemSpec& system) {
  const std::string key = p.key;
  if (key == "nccl.nic_reported_latency_us" || key == "nccl.p2p_peer_latency_us") return true;
  return key == "nic_latency" && !system.nccl.enabled;
}

// The node counts of `rows` (collective rows of `set`).
std::set<int64_t> NodeCounts(const RowSet& set, const std::vector<const CalibrationRow*>& rows) {
  std::set<int64_t> counts;
  for (const CalibrationRow* r : rows) {
    if (auto it = set.nodes.find(r); it != set.nodes.end()) counts.insert(it->second);
  }
  return counts;
}

std::vector<double> LogRatios(const RowSet& set, const spec::SystemSpec& s, bool held_out) {
  std::vector<double> r;
  for (size_t i = 0; i < set.rows.size(); ++i) {
    if (set.rows[i]->held_out != held_out) continue;
    r.push_back(std::log(set.predict[i](s) / set.rows[i]->measured_s));
  }
  return r;
}

// Four significant digits: what nccl-tests and step logs can support, and a
// system file that reads cleanly.
double Rounded(double x) {
  if (x == 0) return 0;
  double scale = std::pow(10.0, 3 - std::floor(std::log10(std::fabs(x))));
  return std::round(x * scale) / scale;
}

std::string ValueText(const ParamDef& p, double v) {
  return p.seconds ? units::FormatDuration(v) : fmt::format("{:.4g}", v);
}

// "a.txt:12-20, 25; b.csv:3-9": the files and lines of `rows`.
std::string LineList(const std::vector<const CalibrationRow*>& rows) {
  std::map<std::string, std::vector<int>> lines;
  std::vector<std::string> files;
  for (const CalibrationRow* r : rows) {
    size_t colon = r->source.rfind(':');
    std::string file = r->source.substr(0, colon);
    if (!lines.count(file)) files.push_back(file);
    lines[file].push_back(std::stoi(r->source.substr(colon + 1)));
  }
  std::vector<std::string> parts;
  for (const std::string& file : files) {
    std::vector<int>& l = lines[file];
    std::string text;
    for (size_t i = 0; i < l.size();) {
      size_t j = i;
      while (j + 1 < l.size() && l[j + 1] == l[j] + 1) ++j;
      text += (text.empty() ? "" : ", ") + (j > i ? fmt::format("{}-{}", l[i], l[j]) : std::to_string(l[i]));
      i = j + 1;
    }
    parts.push_back(file + ":" + text);
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The parameters of `kind` that `system` has (no in-switch reduction
// without an HB fabric that reduces, no FP8 efficiency without an FP8 peak,
// none of NCCL's without the system's NCCL model).
std::vector<const ParamDef*> Candidates(RowKind kind, const spec::SystemSpec& system) {
  std::vector<const ParamDef*> defs;
  for (const ParamDef& p : kParams) {
    const std::string key = p.key;
    if (p.kind != kind) continue;
    if (key == "hb_in_network_allreduce_efficiency" && system.hb_in_network_allreduce_efficiency <= 0) continue;
    if (key == "gpu.fp8_gemm_efficiency" && system.gpu.peak_flops_fp8 <= 0) continue;
    if ((key == "gpu.fp4_gemm_efficiency" || key == "gpu.mxfp8_gemm_efficiency") && system.gpu.peak_flops_fp4 <= 0) {
      continue;
    }
    if (key.rfind("nccl.", 0) == 0 && !system.nccl.enabled) continue;
    defs.push_back(&p);
  }
  return defs;
}

spec::SystemSpec With(const spec::SystemSpec& s, const ParamDef& p, double value) {
  spec::SystemSpec out = s;
  p.field(out) = value;
  return out;
}

// The fitted rows of `set` whose prediction differs by more than
// kSensitivity between the systems `a` and `b`.
std::vector<const CalibrationRow*> RowsMoved(const RowSet& set, const spec::SystemSpec& a, const spec::SystemSpec& b) {
  std::vector<const CalibrationRow*> moved;
  for (size_t i = 0; i < set.rows.size(); ++i) {
    if (set.rows[i]->held_out) continue;
    if (std::fabs(std::log(set.predict[i](b) / set.predict[i](a))) > kSensitivity) moved.push_back(set.rows[i]);
  }
  return moved;
}

double Dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

// The slope of the fitted rows' log predictions in `p` at its value in `s`
// (central differences, one-sided at a bound).
std::vector<double> LogSlope(const RowSet& set, const spec::SystemSpec& s, const ParamDef& p) {
  spec::SystemSpec copy = s;  // not const: ParamDef::field hands out references
  const double x = p.field(copy), h = kSlopeStep * (p.hi - p.lo);
  const double a = std::max(p.lo, x - h), b = std::min(p.hi, x + h);
  const std::vector<double> lo = LogRatios(set, With(s, p, a), false), hi = LogRatios(set, With(s, p, b), false);
  std::vector<double> d(lo.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = (hi[i] - lo[i]) / (b - a);
  return d;
}

// For each of `free` (in kParams order), null when the rows can tell it
// apart from those before it, else the earlier parameter its slope lies
// closest to (Gram-Schmidt on the slopes at `s`). A parameter flat at `s`
// is kept: the rows see it elsewhere, and the fit may move it there.
std::vector<const ParamDef*> Separable(const std::vector<const ParamDef*>& free, const RowSet& set,
                                       const spec::SystemSpec& s) {
  std::vector<std::vector<double>> basis, unit;  // orthonormal; each kept slope normalised
  std::vector<const ParamDef*> kept, tie(free.size(), nullptr);
  for (size_t j = 0; j < free.size(); ++j) {
    std::vector<double> v = LogSlope(set, s, *free[j]);
    const double length = std::sqrt(Dot(v, v));
    if (length == 0) continue;
    for (size_t i = 0; i < v.size(); ++i) v[i] /= length;
    std::vector<double> rest = v;
    for (const std::vector<double>& e : basis) {
      const double c = Dot(rest, e);
      for (size_t i = 0; i < rest.size(); ++i) rest[i] -= c * e[i];
    }
    const double left = std::sqrt(Dot(rest, rest));
    if (left < kDistinct) {
      double best = -1;
      for (size_t k = 0; k < kept.size(); ++k) {
        if (std::fabs(Dot(v, unit[k])) > best) best = std::fabs(Dot(v, unit[k])), tie[j] = kept[k];
      }
      continue;
    }
    for (size_t i = 0; i < rest.size(); ++i) rest[i] /= left;
    basis.push_back(rest);
    unit.push_back(v);
    kept.push_back(free[j]);
  }
  return tie;
}

// Least squares over `free` from `*system`; writes the rounded values and
// returns true, or keeps the base values and returns false when they fit the
// rows at least as well (a fit that ends where it started, or that rounding
// made worse): calibrating never makes a system worse on its own rows.
bool FitValues(const std::vector<const ParamDef*>& free, const RowSet& set, spec::SystemSpec* system) {
  spec::SystemSpec base = *system;  // not const: ParamDef::field hands out references
  Bounds bounds;
  std::vector<double> start, middle;
  for (const ParamDef* p : free) {
    bounds.lo.push_back(p->lo);
    bounds.hi.push_back(p->hi);
    start.push_back(std::clamp(p->field(base), p->lo, p->hi));
    middle.push_back(0.5 * (p->lo + p->hi));
  }
  auto residuals = [&](const std::vector<double>& x) {
    spec::SystemSpec s = base;
    for (size_t j = 0; j < free.size(); ++j) free[j]->field(s) = x[j];
    return LogRatios(set, s, false);
  };
  std::vector<double> x = FitLeastSquares(residuals, {start, middle}, bounds);
  for (double& v : x) v = Rounded(v);
  if (SumOfSquares(residuals(x)) >= SumOfSquares(LogRatios(set, base, false))) return false;
  for (size_t j = 0; j < free.size(); ++j) free[j]->field(*system) = x[j];
  return true;
}

// Fits the `moved` parameters (in kParams order) that the rows can tell
// apart from those before them, from `*system`; the others go into
// `tie_of` with the parameter they follow. Returns whether the fit beat
// the values it started from (FitValues).
bool FitSeparable(const std::vector<const ParamDef*>& moved, const RowSet& set, spec::SystemSpec* system,
                  std::map<const ParamDef*, const ParamDef*>* tie_of) {
  const std::vector<const ParamDef*> ties = Separable(moved, set, *system);
  std::vector<const ParamDef*> free;
  for (size_t j = 0; j < moved.size(); ++j) {
    if (ties[j]) (*tie_of)[moved[j]] = ties[j];
    else free.push_back(moved[j]);
  }
  return free.empty() || FitValues(free, set, system);
}

// Whether the fitted rows see a parameter only weakly between its value `x`
// and `other`, given the largest change of a row's log time between the two:
// no more than kWeak of the parameter's relative change, |other - x| /
// max(|other|, |x|) (at most 1, so a latency fitted near zero is not taken
// for a huge change). A fit that moves such a parameter far on such rows has
// it soak up what the model lacks (a fixed cost per call, noise: a percent
// of bias becomes 1 / kWeak = 10 percent of the parameter): the value then
// holds at the rows' sizes and node counts and fails where the parameter
// shows fully (NVLS-Tree's network stage, hidden behind its NVLink stage on
// two nodes, binds at four and more).
bool SeenWeakly(double largest_log_change, double x, double other) {
  const double change = std::fabs(other - x) / std::max(std::fabs(other), std::fabs(x));
  return largest_log_change < kWeak * change;
}

// What BackToTheBase records of a parameter it put back: the value the fit
// gave it, whether the rows predicted the same with the base's value (they
// do not see it between the two), and how much their sum of squared log
// errors rose with it at the base, in residual variances of the first fit.
struct PutBack {
  double fitted = 0;
  bool unseen = false;
  double rise_in_variances = 0;
};

// Puts back to their base values, one at a time, those of `candidates`
// (fitted parameters of `moved`) that the fitted rows cannot tell from the
// base's value: first any whose base value predicts every row the same (in
// kParams order: two stages of which the rows see only the slower, such as
// the ring's NIC and NVLink efficiencies, can each look unseen while the
// other binds), then the least significant of those seen only weakly
// (SeenWeakly) whose base value raises the rows' sum of squared log errors,
// the others at their fitted values, by less than kSignificance residual
// variances of the first fit. After each, the rest of `moved` is refitted
// from the base, kept only if it fits better than leaving them where they
// were. Returns them; updates `*system`, `*tie_of` and `*improved`.
std::map<const ParamDef*, PutBack> BackToTheBase(const std::vector<const ParamDef*>& candidates,
                                                 const std::vector<const ParamDef*>& moved, const RowSet& set,
                                                 const spec::SystemSpec& base, spec::SystemSpec* system,
                                                 std::map<const ParamDef*, const ParamDef*>* tie_of, bool* improved) {
  std::map<const ParamDef*, PutBack> put_back;
  spec::SystemSpec base_copy = base;  // not const: ParamDef::field hands out references
  // The fitted rows' log errors now, and below with one parameter at its
  // base: their largest difference says whether a row moves (kSensitivity,
  // as RowsMoved) and how strongly, their sums of squares how much worse.
  std::vector<double> here = LogRatios(set, *system, false);
  const auto free = std::count_if(moved.begin(), moved.end(), [&](const ParamDef* p) { return !tie_of->count(p); });
  const double dof = double(here.size()) - double(free);
  if (dof < 1) return put_back;
  const double variance = SumOfSquares(here) / dof, threshold = kSignificance * variance;
  while (*improved) {
    const double ssr = SumOfSquares(here);
    const ParamDef* weakest = nullptr;
    PutBack record;
    double best_rise = threshold;
    for (const ParamDef* p : candidates) {
      const double x = p->field(*system), b = p->field(base_copy);
      if (tie_of->count(p) || put_back.count(p) || x == b) continue;
      const std::vector<double> there = LogRatios(set, With(*system, *p, b), false);
      double largest = 0;
      for (size_t i = 0; i < here.size(); ++i) largest = std::max(largest, std::fabs(there[i] - here[i]));
      if (largest <= kSensitivity) {
        weakest = p;
        record = {x, true, 0};
        break;
      }
      if (!SeenWeakly(largest, x, b)) continue;
      const double rise = SumOfSquares(there) - ssr;
      if (rise < best_rise) {
        best_rise = rise;
        weakest = p;
        record = {x, false, variance > 0 ? std::max(0.0, rise) / variance : 0};
      }
    }
    if (!weakest) break;
    put_back[weakest] = record;
    const spec::SystemSpec left = With(*system, *weakest, weakest->field(base_copy));
    std::vector<const ParamDef*> rest;
    for (const ParamDef* p : moved) {
      if (!put_back.count(p)) rest.push_back(p);
    }
    spec::SystemSpec refit = base;
    std::map<const ParamDef*, const ParamDef*> refit_ties;
    const bool refit_improved = FitSeparable(rest, set, &refit, &refit_ties);
    std::vector<double> refit_errors = LogRatios(set, refit, false), left_errors = LogRatios(set, left, false);
    if (SumOfSquares(refit_errors) <= SumOfSquares(left_errors)) {
      *system = refit;
      *tie_of = refit_ties;
      *improved = refit_improved;
      here = std::move(refit_errors);
    } else {
      *system = left;
      here = std::move(left_errors);
    }
  }
  return put_back;
}

double MeanAbsLog(const std::vector<double>& log_ratios) {
  double sum = 0;
  for (double r : log_ratios) sum += std::fabs(r);
  return log_ratios.empty() ? 0 : sum / double(log_ratios.size());
}

bool AtBound(double x, double lo, double hi) {
  return x - lo <= kBoundShare * (hi - lo) || hi - x <= kBoundShare * (hi - lo);
}

bool Kept(const CalibrationOptions& o, const std::string& key) {
  return std::find(o.keep.begin(), o.keep.end(), key) != o.keep.end();
}

// Adds `f` to the notes' lists if it is not simply fitted: at a bound (but
// not one the rows do not see, or one kept on purpose), or under its status
// with what it depends on.
void Name(const FittedParameter& f, const ParamDef& p, const std::map<const CalibrationRow*, int64_t>& nodes,
          const std::vector<const CalibrationRow*>& seen, const std::map<const ParamDef*, const ParamDef*>& tie_of,
          NamedByStatus* named) {
  if (f.at_bound && f.status != ParamStatus::kNotConstrained && f.status != ParamStatus::kKept) {
    (*named)[ParamStatus::kAtBound].push_back(fmt::format(
        "{} ({} bound, {})", f.key, f.after - f.lo < f.hi - f.after ? "lower" : "upper", ValueText(p, f.after)));
  }
  switch (f.status) {
    case ParamStatus::kOneNodeCount:
    case ParamStatus::kFittedAtOneNodeCount:
      (*named)[f.status].push_back(fmt::format("{} ({} nodes)", f.key, nodes.at(seen.front())));
      break;
    case ParamStatus::kTied:
      (*named)[f.status].push_back(fmt::format("{} (with {})", f.key, tie_of.at(&p)->key));
      break;
    case ParamStatus::kNotConstrained:
    case ParamStatus::kBaseFitsBest:
    case ParamStatus::kWithinNoise: (*named)[f.status].push_back(f.key); break;
    case ParamStatus::kFitted:
    case ParamStatus::kAtBound:
    case ParamStatus::kKept: break;
  }
}

}  // namespace

void FitGroup(RowKind kind, const RowSet& set, const CalibrationOptions& o, spec::SystemSpec* system,
              std::vector<FittedParameter>* out, NamedByStatus* named) {
  spec::SystemSpec base = *system;  // not const: ParamDef::field hands out references
  const std::vector<const ParamDef*> defs = Candidates(kind, base);
  std::vector<FittedParameter> records;
  std::vector<std::vector<const CalibrationRow*>> seen;  // per parameter, the rows that depend on it
  std::vector<const ParamDef*> moved;
  for (const ParamDef* p : defs) {
    FittedParameter f;
    f.key = p->key;
    f.seconds = p->seconds;
    f.before = p->field(base);
    f.lo = p->lo;
    f.hi = p->hi;
    seen.push_back(RowsMoved(set, With(base, *p, p->lo), With(base, *p, p->hi)));
    f.rows = int(seen.back().size());
    if (Kept(o, f.key)) {
      f.status = ParamStatus::kKept;
    } else if (f.rows == 0) {
      f.status = ParamStatus::kNotConstrained;
    } else if (!o.fit_scale_at_one_node_count && ScaleDependent(*p, base) && NodeCounts(set, seen.back()).size() == 1) {
      f.status = ParamStatus::kOneNodeCount;
    } else {
      f.status = ParamStatus::kFitted;
      moved.push_back(p);
    }
    records.push_back(f);
  }
  std::map<const ParamDef*, const ParamDef*> tie_of;
  bool improved = FitSeparable(moved, set, system, &tie_of);
  // The base's scale-dependent values stay unless the rows cannot be met
  // with them (a base from another fabric: InfiniBand's zero plugin
  // latency on EFA rows); then they are fitted too, and said to hold near
  // that node count only.
  const bool scale_fitted =
      std::any_of(records.begin(), records.end(), [](const FittedParameter& f) {
        return f.status == ParamStatus::kOneNodeCount;
      }) && MeanAbsLog(LogRatios(set, *system, false)) > kOneCountMiss;
  if (scale_fitted) {
    moved.clear();
    for (size_t i = 0; i < defs.size(); ++i) {
      if (records[i].status == ParamStatus::kOneNodeCount) records[i].status = ParamStatus::kFittedAtOneNodeCount;
      if (records[i].status == ParamStatus::kFitted || records[i].status == ParamStatus::kFittedAtOneNodeCount) {
        moved.push_back(defs[i]);
      }
    }
    *system = base;
    tie_of.clear();
    improved = FitSeparable(moved, set, system, &tie_of);
  }
  // The scale-dependent parameters fitted at one node count are not put
  // back: the base's values missed the rows by more than kOneCountMiss.
  std::vector<const ParamDef*> candidates;
  for (const ParamDef* p : moved) {
    const size_t i = size_t(std::find(defs.begin(), defs.end(), p) - defs.begin());
    if (records[i].status != ParamStatus::kFittedAtOneNodeCount) candidates.push_back(p);
  }
  const std::map<const ParamDef*, PutBack> put_back =
      BackToTheBase(candidates, moved, set, base, system, &tie_of, &improved);
  const auto held = std::count_if(set.rows.begin(), set.rows.end(), [](const CalibrationRow* r) { return r->held_out; });
  for (size_t i = 0; i < defs.size(); ++i) {
    const ParamDef& p = *defs[i];
    FittedParameter& f = records[i];
    const double x = p.field(*system), step = kLocalStep * (p.hi - p.lo);
    if (f.status == ParamStatus::kKept) {
      f.provenance = "not fitted: kept at its base value (known from elsewhere)";
    } else if (f.status == ParamStatus::kNotConstrained) {
      f.provenance = "not fitted: no measured row depends on it";
    } else if (f.status == ParamStatus::kOneNodeCount) {
      f.provenance = fmt::format("not fitted: its cost grows with the node count, and the {} measured rows that depend "
                                 "on it come from one node count ({} nodes)",
                                 f.rows, set.nodes.at(seen[i].front()));
    } else if (auto it = put_back.find(&p); it != put_back.end() && it->second.unseen) {
      f.status = ParamStatus::kNotConstrained;
      f.provenance = fmt::format("not fitted: the {} measured rows that depend on it predict the same with the base's "
                                 "value as with the fitted {}",
                                 f.rows, ValueText(p, it->second.fitted));
    } else if (it != put_back.end()) {
      f.status = ParamStatus::kWithinNoise;
      f.provenance = fmt::format("not fitted: the {} measured rows that depend on it ({}) fit the base's value as well "
                                 "as the fitted {}, within their noise (the base's raises their squared error by {:.2g} "
                                 "residual variances, under {:g})",
                                 f.rows, LineList(seen[i]), ValueText(p, it->second.fitted),
                                 it->second.rise_in_variances, kSignificance);
    } else if (tie_of.count(&p)) {
      f.status = ParamStatus::kTied;
      f.provenance = fmt::format("not fitted: the {} measured rows that depend on it see it only as they see {}",
                                 f.rows, tie_of[&p]->key);
    } else if (RowsMoved(set, With(*system, p, std::max(p.lo, x - step)), With(*system, p, std::min(p.hi, x + step)))
                   .empty() &&
               RowsMoved(set, *system, With(*system, p, f.before)).empty()) {
      // The rows depend on it only far from where the fit left it (a
      // bandwidth hidden behind a slower tier), and not between there and
      // the base: they do not pin it down. (When the base's value does move
      // them, the fitted value stays: the rows bound it from one side, such
      // as a tree efficiency above which NCCL would pick the tree and the
      // rows, timed with a ring, would read fast.)
      f.status = ParamStatus::kNotConstrained;
      f.provenance = fmt::format("not fitted: {} measured rows depend on it only far from its value", f.rows);
      p.field(*system) = f.before;
    } else {
      const bool at_bound = AtBound(x, f.lo, f.hi);
      const ParamStatus fitted =
          f.status == ParamStatus::kFittedAtOneNodeCount ? f.status : ParamStatus::kFitted;
      f.status = !improved ? ParamStatus::kBaseFitsBest : at_bound ? ParamStatus::kAtBound : fitted;
      const std::string held_text =
          held > 0 ? fmt::format(", {} of {} rows held out (seed {})", held, set.rows.size(), o.seed) : "";
      f.provenance =
          improved ? fmt::format("railsim calibrate: fitted to {} measured rows ({}); before {}, bounds [{}, {}]{}{}",
                                 f.rows, LineList(seen[i]), ValueText(p, f.before), ValueText(p, f.lo),
                                 ValueText(p, f.hi), at_bound ? ", at its bound" : "", held_text)
                   : fmt::format("not fitted: the base values fit the {} measured rows that depend on it ({}) best{}{}",
                                 f.rows, LineList(seen[i]), at_bound ? "; at its bound" : "", held_text);
    }
    f.fitted = f.status == ParamStatus::kFitted || f.status == ParamStatus::kFittedAtOneNodeCount;
    f.after = p.field(*system);
    f.at_bound = AtBound(f.after, f.lo, f.hi);
    if (!set.rows.empty()) Name(f, p, set.nodes, seen[i], tie_of, named);
    out->push_back(f);
  }
}

void AddParameterNotes(const NamedByStatus& named, std::vector<std::string>* notes) {
  const std::pair<ParamStatus, const char*> texts[] = {
      {ParamStatus::kAtBound, "at a bound (the rows cannot say whether the value is the bound's, such as no "
                              "latency, or the fit would go past it because the model or the base's other numbers do "
                              "not follow them): {}"},
      {ParamStatus::kOneNodeCount, "left at the base: one node count in the data: {}; each costs more per node (per "
                                   "network step of a ring or tree, per remote peer of an all-to-all), which rows of "
                                   "one node count cannot tell from a fixed cost; add a sweep at another node count "
                                   "to fit them"},
      {ParamStatus::kFittedAtOneNodeCount, "fitted at one node count: {}; the rows miss the base's values by more "
                                           "than 10%, so these are fitted to them, but they cost more per node and "
                                           "rows of one node count cannot tell that from a fixed cost: they hold near "
                                           "that node count only; add a sweep at another node count"},
      {ParamStatus::kNotConstrained, "not constrained by the data (no fitted row's time moves with them near their "
                                     "value): {}"},
      {ParamStatus::kBaseFitsBest, "left at the base: no values fit the rows better than the base's: {}"},
      {ParamStatus::kWithinNoise, "left at the base: the rows fit the base's values as well as the fitted ones, "
                                  "within their noise: {}"},
      {ParamStatus::kTied, "left at the base: seen only with another parameter: {}"},
  };
  for (const auto& [status, text] : texts) {
    if (auto it = named.find(status); it != named.end()) {
      notes->push_back(fmt::format(fmt::runtime(text), fmt::join(it->second, ", ")));
    }
  }
}

std::optional<RowKind> ParameterKind(const std::string& key) {
  for (const ParamDef& p : kParams) {
    if (key == p.key) return p.kind;
  }
  return std::nullopt;
}

}  // namespace railsim::calibrate
