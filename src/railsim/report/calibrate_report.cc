#include "railsim/report/calibrate_report.h"

#include <fmt/format.h>

#include "railsim/core/units.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

std::string Value(const calibrate::FittedParameter& p, double v) {
  return p.seconds ? units::FormatDuration(v) : fmt::format("{:.4g}", v);
}

// The status, and "at bound" after a status that does not say it (as the
// notes name it).
std::string Status(const calibrate::FittedParameter& p) {
  std::string s = calibrate::ParamStatusName(p.status);
  const bool named = p.status != calibrate::ParamStatus::kAtBound && p.status != calibrate::ParamStatus::kNotConstrained &&
                     p.status != calibrate::ParamStatus::kKept;
  return p.at_bound && named ? s + "; at bound" : s;
}

std::string Signed(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

std::string SummaryLine(const char* what, const calibrate::ErrorSummary& fit, const calibrate::ErrorSummary& held) {
  if (fit.rows == 0) return fmt::format("{}: not fitted\n", what);
  std::string line = fmt::format("{}: {} fitted rows, mean error {}, worst {}", what, fit.rows, Percent(fit.mean_abs),
                                 Percent(fit.worst));
  if (held.rows > 0) {
    line += fmt::format("; {} held-out rows, mean error {}, worst {}", held.rows, Percent(held.mean_abs),
                        Percent(held.worst));
  }
  return line + "\n";
}

Json SummaryObject(const calibrate::ErrorSummary& s) {
  Json j;
  j["rows"] = s.rows;
  j["mean_abs_error"] = s.mean_abs;
  j["worst_abs_error"] = s.worst;
  return j;
}

}  // namespace

std::string CalibrateTable(const calibrate::CalibrationResult& r) {
  std::string out = fmt::format("railsim calibrate: {} (seed {}, {} of {} rows held out)\n\n", r.system.name, r.seed,
                                r.held_out_rows(), r.rows.size());
  TextTable params;
  params.AddColumn("parameter", TextTable::Align::kLeft);
  params.AddColumn("before");
  params.AddColumn("after");
  params.AddColumn("bounds");
  params.AddColumn("rows");
  params.AddColumn("status", TextTable::Align::kLeft);
  for (const calibrate::FittedParameter& p : r.parameters) {
    const std::string bounds = fmt::format("[{}, {}]", Value(p, p.lo), Value(p, p.hi));
    params.AddRow({p.key, Value(p, p.before), Value(p, p.after), bounds, std::to_string(p.rows), Status(p)});
  }
  out += params.Render() + "\n";
  TextTable rows;
  rows.AddColumn("row", TextTable::Align::kLeft);
  rows.AddColumn("source", TextTable::Align::kLeft);
  rows.AddColumn("set", TextTable::Align::kLeft);
  rows.AddColumn("measured");
  rows.AddColumn("before");
  rows.AddColumn("predicted");
  rows.AddColumn("error");
  for (const calibrate::CalibrationRow& row : r.rows) {
    rows.AddRow({row.label, row.source, row.held_out ? "held out" : "fitted", Seconds(row.measured_s),
                 Seconds(row.before_s), Seconds(row.predicted_s), Signed(row.error())});
  }
  out += rows.Render() + "\n";
  out += SummaryLine("collectives", r.comm_fit, r.comm_held_out);
  out += SummaryLine("step times", r.step_fit, r.step_held_out);
  for (const std::string& note : r.notes) out += Wrap(fmt::format("note: {}", note), 100, "  ");
  for (const std::string& warning : r.warnings) out += Wrap(fmt::format("warning: {}", warning), 100, "  ");
  if (!r.trust.empty()) {
    out += "\n";
    out += Wrap(fmt::format("Trust: {}", r.trust), 100, "  ");
  }
  return out;
}

std::string CalibrateJson(const calibrate::CalibrationResult& r) {
  Json j;
  j["system"] = Json::parse(spec::SystemToJson(r.system));
  Json params = Json::array();
  for (const calibrate::FittedParameter& p : r.parameters) {
    Json o;
    o["key"] = p.key;
    o["unit"] = p.seconds ? "s" : "";
    o["before"] = p.before;
    o["after"] = p.after;
    o["lower_bound"] = p.lo;
    o["upper_bound"] = p.hi;
    o["fitted"] = p.fitted;
    o["status"] = calibrate::ParamStatusName(p.status);
    o["at_bound"] = p.at_bound;
    o["rows"] = p.rows;
    o["provenance"] = p.provenance;
    params.push_back(o);
  }
  j["parameters"] = params;
  Json rows = Json::array();
  for (const calibrate::CalibrationRow& row : r.rows) {
    Json o;
    o["kind"] = row.kind == calibrate::RowKind::kCollective ? "collective" : "step";
    o["label"] = row.label;
    o["source"] = row.source;
    o["held_out"] = row.held_out;
    o["measured_s"] = row.measured_s;
    o["before_s"] = row.before_s;
    o["predicted_s"] = row.predicted_s;
    o["error"] = row.error();
    rows.push_back(o);
  }
  j["rows"] = rows;
  Json errors;
  errors["collectives"] = {{"fitted", SummaryObject(r.comm_fit)}, {"held_out", SummaryObject(r.comm_held_out)}};
  errors["steps"] = {{"fitted", SummaryObject(r.step_fit)}, {"held_out", SummaryObject(r.step_held_out)}};
  j["errors"] = errors;
  j["holdout"] = r.holdout;
  j["held_out_rows"] = r.held_out_rows();
  j["seed"] = r.seed;
  j["notes"] = r.notes;
  j["warnings"] = r.warnings;
  j["trust"] = r.trust;
  return j.dump(2) + "\n";
}

}  // namespace railsim::report
