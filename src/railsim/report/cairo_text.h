// Small Cairo helpers the report's pictures share (the traffic heatmap and
// the iteration timeline): text placed by alignment, and a stream writer
// that collects a PNG or SVG into a string.
#pragma once

#include <string>

#include <cairo.h>

namespace railsim::report {

/// Draws `text` with its baseline at y; `align` 0 puts its left edge at x,
/// 0.5 its centre, 1 its right edge.
void CairoText(cairo_t* cr, double x, double y, const std::string& text, double size, bool bold = false,
               double align = 0);

/// A cairo_write_func_t appending to the std::string `closure` points to.
cairo_status_t AppendToString(void* closure, const unsigned char* data, unsigned int length);

}  // namespace railsim::report
