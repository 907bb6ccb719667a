#include "railsim/report/heatmap.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <cairo-svg.h>
#include <cairo.h>
#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/report/cairo_text.h"
#include "railsim/core/file.h"
#include "railsim/report/table.h"

namespace railsim::report {
namespace {

// Side of the matrix in pixels; cells are whole pixels.
constexpr int kMatrixPx = 768;
constexpr int kMarginLeft = 90, kMarginTop = 96, kMarginRight = 150, kMarginBottom = 104;
constexpr int kRailStripPx = 8;

struct Rgb {
  double r, g, b;
};

// Viridis at nine evenly spaced points (matplotlib's table), interpolated.
Rgb Viridis(double t) {
  static constexpr Rgb kStops[] = {{0.267, 0.005, 0.329}, {0.279, 0.175, 0.483}, {0.230, 0.322, 0.546},
                                   {0.173, 0.449, 0.558}, {0.128, 0.567, 0.551}, {0.153, 0.680, 0.510},
                                   {0.362, 0.786, 0.387}, {0.668, 0.866, 0.190}, {0.993, 0.906, 0.144}};
  t = std::clamp(t, 0.0, 1.0) * 8;
  int i = std::min(7, int(t));
  double f = t - i;
  const Rgb& a = kStops[i];
  const Rgb& b = kStops[i + 1];
  return {a.r + f * (b.r - a.r), a.g + f * (b.g - a.g), a.b + f * (b.b - a.b)};
}

// A categorical palette for rails (Tableau 10).
Rgb RailColour(int64_t rail) {
  static constexpr Rgb kPalette[] = {{0.12, 0.47, 0.71}, {1.00, 0.50, 0.05}, {0.17, 0.63, 0.17}, {0.84, 0.15, 0.16},
                                     {0.58, 0.40, 0.74}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.50, 0.50, 0.50},
                                     {0.74, 0.74, 0.13}, {0.09, 0.75, 0.81}};
  return kPalette[rail % 10];
}

void SetColour(cairo_t* cr, const Rgb& c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int64_t HeatmapGpusPerCell(int64_t gpus, int64_t k) {
  int64_t per_cell = (gpus + kMatrixPx - 1) / kMatrixPx;
  if (per_cell <= 1) return 1;
  // Cells that never split an HB domain, nor hold part of one: a divisor of
  // K, or a multiple of it.
  if (per_cell <= k) {
    while (k % per_cell != 0) ++per_cell;
    return per_cell;
  }
  return (per_cell + k - 1) / k * k;
}

namespace {

// Draws the heatmap into *out, as SVG when `svg`, else as PNG bytes.
void Render(bool svg, const study::TrafficResult& r, const HeatmapLabels& labels, std::string* out) {
  const int64_t n = r.gpus, k = r.hb_domain_size;
  const int64_t per_cell = HeatmapGpusPerCell(n, k);
  const int64_t cells = (n + per_cell - 1) / per_cell;
  const int cell_px = std::max<int>(1, int(kMatrixPx / cells));
  const int matrix_px = int(cells) * cell_px;

  // Bytes per cell, kept sparse until drawn.
  std::vector<double> grid(size_t(cells * cells), 0.0);
  for (const study::PairTraffic& p : r.pairs) {
    grid[size_t((p.src / per_cell) * cells + p.dst / per_cell)] += p.total();
  }
  double lo = 0, hi = 0;
  for (double b : grid) {
    if (b <= 0) continue;
    lo = lo == 0 ? b : std::min(lo, b);
    hi = std::max(hi, b);
  }
  // Whole decades around the data, so the colour bar reads in powers of ten.
  const double log_lo = lo > 0 ? std::floor(std::log10(lo)) : 0;
  const double log_hi = hi > 0 ? std::max(log_lo + 1, std::ceil(std::log10(hi))) : 1;

  const int width = kMarginLeft + matrix_px + kMarginRight;
  const int height = kMarginTop + matrix_px + kMarginBottom;
  // Drawn into memory either way; the caller writes the file whole.
  cairo_surface_t* surface = svg ? cairo_svg_surface_create_for_stream(AppendToString, out, width, height)
                                 : cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
  if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(surface);
    throw Error("--heatmap", "cannot draw the picture (out of memory?)");
  }
  cairo_t* cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);

  // Cells.
  const double x0 = kMarginLeft, y0 = kMarginTop;
  for (int64_t i = 0; i < cells; ++i) {
    for (int64_t j = 0; j < cells; ++j) {
      const double b = grid[size_t(i * cells + j)];
      if (b <= 0) continue;
      SetColour(cr, Viridis((std::log10(b) - log_lo) / (log_hi - log_lo)));
      cairo_rectangle(cr, x0 + double(j * cell_px), y0 + double(i * cell_px), cell_px, cell_px);
      cairo_fill(cr);
    }
  }
  // HB-domain boundaries where a domain spans at least 4 pixels.
  const double domain_px = double(k) / double(per_cell) * cell_px;
  const bool domain_lines = domain_px >= 4 && k < n;
  if (domain_lines) {
    cairo_set_source_rgba(cr, 0.55, 0.55, 0.55, 0.8);
    cairo_set_line_width(cr, 1);
    for (int64_t d = k; d < n; d += k) {
      const double at = std::round(double(d) / double(per_cell) * cell_px) + 0.5;
      cairo_move_to(cr, x0 + at, y0);
      cairo_line_to(cr, x0 + at, y0 + matrix_px);
      cairo_move_to(cr, x0, y0 + at);
      cairo_line_to(cr, x0 + matrix_px, y0 + at);
    }
    cairo_stroke(cr);
  }
  // Rail strips: each GPU's local rank, where a GPU is a whole cell.
  const bool rail_strips = per_cell == 1 && k > 1;
  if (rail_strips) {
    for (int64_t g = 0; g < n; ++g) {
      SetColour(cr, RailColour(g % k));
      cairo_rectangle(cr, x0 + double(g * cell_px), y0 - kRailStripPx - 2, cell_px, kRailStripPx);
      cairo_rectangle(cr, x0 - kRailStripPx - 2, y0 + double(g * cell_px), kRailStripPx, cell_px);
      cairo_fill(cr);
    }
  }
  // Frame and ticks.
  cairo_set_antialias(cr, CAIRO_ANTIALIAS_DEFAULT);
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, x0 - 0.5, y0 - 0.5, matrix_px + 1, matrix_px + 1);
  cairo_stroke(cr);
  const int ticks = 4;
  for (int t = 0; t <= ticks; ++t) {
    const int64_t gpu = std::min(n - 1, n * t / ticks);
    const double at = (double(gpu) / double(per_cell) + 0.5 / double(per_cell)) * cell_px;
    cairo_move_to(cr, x0 + at, y0 + matrix_px);
    cairo_line_to(cr, x0 + at, y0 + matrix_px + 5);
    cairo_move_to(cr, x0, y0 + at);
    cairo_line_to(cr, x0 - 5 - (rail_strips ? kRailStripPx + 2 : 0), y0 + at);
    cairo_stroke(cr);
    CairoText(cr, x0 + at, y0 + matrix_px + 18, std::to_string(gpu), 11, false, 0.5);
    CairoText(cr, x0 - 8 - (rail_strips ? kRailStripPx + 2 : 0), y0 + at + 4, std::to_string(gpu), 11, false, 1);
  }
  CairoText(cr, x0 + matrix_px / 2.0, y0 + matrix_px + 36, "destination GPU", 13, false, 0.5);
  cairo_save(cr);
  cairo_translate(cr, 22, y0 + matrix_px / 2.0);
  cairo_rotate(cr, -M_PI / 2);
  CairoText(cr, 0, 0, "source GPU", 13, false, 0.5);
  cairo_restore(cr);

  // Colour bar.
  const double bx = x0 + matrix_px + 30, bw = 18, bh = matrix_px * 0.8, by = y0 + (matrix_px - bh) / 2;
  for (int i = 0; i < int(bh); ++i) {
    SetColour(cr, Viridis(1.0 - double(i) / bh));
    cairo_rectangle(cr, bx, by + i, bw, 1.5);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
  cairo_rectangle(cr, bx - 0.5, by - 0.5, bw + 1, bh + 1);
  cairo_stroke(cr);
  const int decades = int(log_hi - log_lo);
  const int step = std::max(1, decades / 8);
  for (int d = 0; d <= decades; d += step) {
    const double y = by + bh - bh * d / double(decades);
    cairo_move_to(cr, bx + bw, y);
    cairo_line_to(cr, bx + bw + 4, y);
    cairo_stroke(cr);
    CairoText(cr, bx + bw + 7, y + 4, DecimalBytes(std::pow(10.0, log_lo + d)), 11);
  }
  CairoText(cr, bx, by - 12, "bytes per cell", 12);

  // Title, subtitle, caption.
  CairoText(cr, x0, 28, labels.title, 16, true);
  CairoText(cr, x0, 50, labels.subtitle, 13);
  std::string cells_text = per_cell == 1 ? "each cell is one GPU pair"
                                         : fmt::format("each cell sums {} x {} GPU pairs", per_cell, per_cell);
  std::string frame =
      domain_lines ? fmt::format("grey lines: HB domains of {} GPUs", k)
                   : fmt::format("HB domains of {} GPUs are under {} pixels, not drawn", k, 4);
  if (rail_strips) frame += "; axis strips: rail (local rank)";
  CairoText(cr, x0, 70, labels.setting, 13);
  CairoText(cr, x0, y0 + matrix_px + 58,
       fmt::format("Bytes sent per training iteration, log scale; white: no traffic; {}.", cells_text), 11);
  CairoText(cr, x0, y0 + matrix_px + 74, frame + ".", 11);
  CairoText(cr, x0, y0 + matrix_px + 90,
       fmt::format("{} of {} ordered GPU pairs communicate ({:.3f}%).", Grouped(r.pairs_communicating),
                   Grouped(r.gpu_pairs()),
                   r.gpu_pairs() ? 100.0 * double(r.pairs_communicating) / double(r.gpu_pairs()) : 0.0),
       11);

  cairo_destroy(cr);
  cairo_surface_flush(surface);
  cairo_status_t status = CAIRO_STATUS_SUCCESS;
  if (svg) {
    cairo_surface_finish(surface);
    status = cairo_surface_status(surface);
  } else {
    status = cairo_surface_write_to_png_stream(surface, AppendToString, out);
  }
  cairo_surface_destroy(surface);
  if (status != CAIRO_STATUS_SUCCESS) {
    throw Error("--heatmap", fmt::format("cannot draw the picture: {}", cairo_status_to_string(status)));
  }
}

}  // namespace

void WriteHeatmap(const std::string& path, const study::TrafficResult& r, const HeatmapLabels& labels) {
  const bool svg = EndsWith(path, ".svg");
  if (!svg && !EndsWith(path, ".png")) {
    throw Error("--heatmap", fmt::format("expected a file name ending in .png or .svg, got {}", Quoted(path)));
  }
  std::string picture;
  Render(svg, r, labels, &picture);
  WriteTextFile(path, picture, "--heatmap");
}

std::string HeatmapPng(const study::TrafficResult& r, const HeatmapLabels& labels) {
  std::string png;
  Render(false, r, labels, &png);
  return png;
}

}  // namespace railsim::report
