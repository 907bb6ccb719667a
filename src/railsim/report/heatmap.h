// The traffic heatmap: a GPU x GPU picture of the bytes one iteration sends
// between every pair, like the paper's traffic figure. Drawn with Cairo as
// PNG or SVG (by the file's extension).
//
// Colour is log-scaled bytes per cell with a colour bar; silent pairs stay
// white. When there are more GPUs than the picture has room for, each cell
// sums a square block of GPUs (the caption says how many). HB-domain
// boundaries are drawn as lines where a domain is at least a few pixels
// wide, and a strip along each axis colours every GPU by its rail (local
// rank) where a GPU is at least a pixel.
#pragma once

#include <string>

#include "railsim/study/traffic.h"

namespace railsim::report {

struct HeatmapLabels {
  std::string title;     ///< model and system
  std::string subtitle;  ///< strategy
  std::string setting;   ///< placement and network
};

/// Writes the heatmap of `r` to `path` (.png or .svg). Throws
/// Error("--heatmap") for another extension or when the file cannot be written.
void WriteHeatmap(const std::string& path, const study::TrafficResult& r, const HeatmapLabels& labels);

/// The same picture as PNG bytes.
std::string HeatmapPng(const study::TrafficResult& r, const HeatmapLabels& labels);

/// GPUs summed into one cell along each axis for `gpus` GPUs in HB domains
/// of `k` (1 when every GPU gets its own cell; else a divisor or multiple of k).
int64_t HeatmapGpusPerCell(int64_t gpus, int64_t k);

}  // namespace railsim::report
