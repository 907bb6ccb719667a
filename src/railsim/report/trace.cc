#include "railsim/report/trace.h"

#include <algorithm>
#include <cmath>

#include <cairo.h>
#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/report/cairo_text.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/perf_report.h"
#include "railsim/report/traffic_report.h"

namespace railsim::report {
namespace {

// Slices of the micro-batch phase drawn per track: one per micro-batch up to
// this many, else groups of micro-batches (a file of 4,096 x 6 spans per
// track would be slow to open and unreadable in a picture).
constexpr int64_t kMaxSlices = 32;

struct Part {
  const char* key;
  const char* label;
  double seconds;
};

// Lays out one stage's track from `start`; returns its end.
double LayStage(int track, bool bubble_first, const perf::TimeBreakdown& b, int64_t slices,
                std::vector<TraceSpan>* out) {
  double t = 0;
  auto add = [&](const char* key, const char* label, double seconds) {
    if (seconds <= 0) return;
    out->push_back({track, key, label, t, seconds});
    t += seconds;
  };
  if (bubble_first) add("bubble_s", "bubble", b.bubble_s);
  const Part per_slice[] = {{"compute_s", "compute", b.compute_s},     {"recompute_s", "recompute", b.recompute_s},
                            {"tp_comm_s", "TP comm", b.tp_comm_s},     {"cp_comm_s", "CP comm", b.cp_comm_s},
                            {"ep_comm_s", "EP comm", b.ep_comm_s},     {"pp_comm_s", "PP comm", b.pp_comm_s}};
  for (int64_t i = 0; i < slices; ++i) {
    for (const Part& p : per_slice) add(p.key, p.label, p.seconds / double(slices));
  }
  if (!bubble_first) add("bubble_s", "bubble", b.bubble_s);
  add("dp_comm_s", "DP comm", b.dp_comm_s);
  add("optimizer_s", "optimizer", b.optimizer_s);
  add("overhead_s", "fixed overheads", b.overhead_s);
  add("straggler_s", "straggler wait", b.straggler_s);
  return t;
}

struct Rgb {
  double r, g, b;
};

Rgb ColourOf(const std::string& key) {
  if (key == "compute_s") return {0.30, 0.55, 0.80};
  if (key == "recompute_s") return {0.60, 0.75, 0.90};
  if (key == "tp_comm_s") return {0.95, 0.55, 0.15};
  if (key == "cp_comm_s") return {0.85, 0.35, 0.55};
  if (key == "ep_comm_s") return {0.55, 0.35, 0.70};
  if (key == "ep_comm_hidden_s") return {0.80, 0.70, 0.90};
  if (key == "pp_comm_s") return {0.20, 0.65, 0.35};
  if (key == "dp_comm_s") return {0.85, 0.20, 0.20};
  if (key == "bubble_s") return {0.82, 0.82, 0.82};
  if (key == "overhead_s") return {0.65, 0.55, 0.40};
  if (key == "straggler_s") return {0.75, 0.70, 0.35};
  return {0.45, 0.45, 0.45};  // optimizer
}

// A round step for about 8 ticks over `span` seconds.
double TickStep(double span) {
  const double raw = span / 8, decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * decade) return m * decade;
  }
  return 10 * decade;
}

}  // namespace

IterationTrace BuildIterationTrace(const perf::PerfContext& c, const spec::Strategy& s, const perf::Estimate& e) {
  IterationTrace t;
  t.title = TrafficTitle(c);
  t.strategy = StrategyLine(s);
  t.iteration_time_s = e.iteration_time_s;
  const int64_t slices = std::clamp<int64_t>(e.microbatches, 1, kMaxSlices);
  t.microbatches = e.microbatches;
  t.slices = slices;
  t.tracks.push_back(s.pp > 1 ? "stage 0 (first)" : "stage 0 (the only one)");
  LayStage(0, false, e.breakdown, slices, &t.spans);
  if (s.pp > 1) {
    t.tracks.push_back(fmt::format("stage {} (last)", s.pp - 1));
    LayStage(1, true, e.breakdown, slices, &t.spans);
  }
  if (e.breakdown.ep_comm_hidden_s > 0) {
    // Beside the first stage's compute of each slice, which hides it.
    const int track = int(t.tracks.size());
    t.tracks.push_back("overlapped communication");
    std::vector<TraceSpan> hidden;
    for (const TraceSpan& span : t.spans) {
      if (span.track == 0 && std::string(span.key) == "compute_s") {
        hidden.push_back({track, "ep_comm_hidden_s", "EP comm (hidden)", span.start_s,
                          e.breakdown.ep_comm_hidden_s / double(slices)});
      }
    }
    t.spans.insert(t.spans.end(), hidden.begin(), hidden.end());
  }
  return t;
}

std::string TraceJson(const IterationTrace& t) {
  Json events = Json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0},
                    {"args", {{"name", t.title + "; " + t.strategy}}}});
  for (size_t i = 0; i < t.tracks.size(); ++i) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", i}, {"args", {{"name", t.tracks[i]}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", i},
                      {"args", {{"sort_index", i}}}});
  }
  for (const TraceSpan& s : t.spans) {
    events.push_back({{"name", s.label}, {"cat", s.key}, {"ph", "X"}, {"pid", 1}, {"tid", s.track},
                      {"ts", s.start_s * 1e6}, {"dur", s.duration_s * 1e6}});
  }
  Json doc = {{"traceEvents", events}, {"displayTimeUnit", "ms"},
              {"otherData", {{"iteration_time_s", t.iteration_time_s}, {"title", t.title}, {"strategy", t.strategy}}}};
  return doc.dump(1) + "\n";
}

std::string TracePng(const IterationTrace& t) {
  constexpr int kWidth = 1240, kLeft = 230, kRight = 30, kTop = 80, kRow = 46, kBar = 30;
  const int rows = int(t.tracks.size());
  const int height = kTop + rows * kRow + 120;
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, kWidth, height);
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  const double plot_w = kWidth - kLeft - kRight;
  const double scale = t.iteration_time_s > 0 ? plot_w / t.iteration_time_s : 0;
  for (const TraceSpan& s : t.spans) {
    const Rgb c = ColourOf(s.key);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, kLeft + s.start_s * scale, kTop + s.track * kRow, std::max(0.5, s.duration_s * scale), kBar);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  for (int i = 0; i < rows; ++i) CairoText(cr, kLeft - 10, kTop + i * kRow + kBar / 2 + 5, t.tracks[i], 13, false, 1);
  // Time axis.
  const double axis_y = kTop + rows * kRow + 4;
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, kLeft, axis_y);
  cairo_line_to(cr, kLeft + plot_w, axis_y);
  const double step = TickStep(std::max(t.iteration_time_s, 1e-9));
  for (double x = 0; x <= t.iteration_time_s * (1 + 1e-9); x += step) {
    cairo_move_to(cr, kLeft + x * scale, axis_y);
    cairo_line_to(cr, kLeft + x * scale, axis_y + 5);
    CairoText(cr, kLeft + x * scale, axis_y + 19, fmt::format("{:g}", x), 11, false, 0.5);
  }
  cairo_stroke(cr);
  CairoText(cr, kLeft + plot_w / 2, axis_y + 38, "time in the iteration (s)", 12, false, 0.5);
  CairoText(cr, kLeft, 28, t.title, 16, true);
  CairoText(cr, kLeft, 50, fmt::format("{}; iteration {:.4g} s", t.strategy, t.iteration_time_s), 13);
  // Legend: the components present.
  double lx = kLeft;
  std::vector<std::string> seen;
  for (const TraceSpan& s : t.spans) {
    if (std::find(seen.begin(), seen.end(), s.key) != seen.end()) continue;
    seen.push_back(s.key);
    const Rgb c = ColourOf(s.key);
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
    cairo_rectangle(cr, lx, axis_y + 56, 14, 14);
    cairo_fill(cr);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
    CairoText(cr, lx + 19, axis_y + 68, s.label, 12);
    lx += 40 + 7.0 * double(std::string(s.label).size());
  }
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  CairoText(cr, kLeft, axis_y + 92,
       t.microbatches == t.slices
           ? fmt::format("Each block is one micro-batch ({} in all).", t.microbatches)
           : fmt::format("Each block is {:.3g} micro-batches ({} in all, drawn as {}).",
                         double(t.microbatches) / double(t.slices), t.microbatches, t.slices),
       11);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  std::string out;
  cairo_status_t status = cairo_surface_write_to_png_stream(surface, AppendToString, &out);
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw Error("--trace-png", fmt::format("cannot draw the timeline: {}", cairo_status_to_string(status)));
  }
  return out;
}

}  // namespace railsim::report
