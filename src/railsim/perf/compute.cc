#include "railsim/perf/compute.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace railsim::perf {
namespace {

struct TileShape {
  double m, n;
  double rate;  ///< per-SM throughput relative to the largest tile
};

// Smaller tiles reuse each loaded operand less, so they run below the large
// tile's rate; the relative rates are our assumption (docs/MODEL.md).
constexpr TileShape kTiles[] = {{256, 128, 1.0}, {128, 128, 0.92}, {128, 64, 0.8}};

// Fraction of the GPU's tile throughput a GEMM gets, for the best tile shape:
// padding of partial tiles, an under-filled single wave, and on average a
// fraction kTailWaves of a wave lost at the tail of multi-wave GEMMs (the
// library's choice among tile shapes and split-k smooths the exact
// ceil(tiles / SMs) staircase, so we use its mean).
constexpr double kTailWaves = 0.3;

double WaveEfficiency(double sms, double m, double n, double batch) {
  double best = 0;
  for (const TileShape& t : kTiles) {
    double tiles = std::ceil(m / t.m) * std::ceil(n / t.n) * batch;
    double padding = (m * n * batch) / (tiles * t.m * t.n);
    double occupancy = tiles <= sms ? tiles / sms : tiles / (tiles + kTailWaves * sms);
    best = std::max(best, padding * occupancy * t.rate);
  }
  return best;
}

}  // namespace

GpuModel GpuModel::From(const spec::GpuSpec& gpu) {
  GpuModel g;
  g.peak_flops = gpu.peak_flops;
  g.gemm_flops = gpu.peak_flops * gpu.gemm_efficiency;
  g.flash_flops = gpu.peak_flops * gpu.flash_attention_efficiency;
  g.hbm_Bps = gpu.hbm_bw_Bps * gpu.memory_efficiency;
  g.kernel_s = gpu.kernel_overhead_s;
  g.tile_fixed_k = gpu.gemm_tile_fixed_k;
  g.flash_fixed_keys = gpu.flash_attention_fixed_keys;
  g.flash_fixed_dim = gpu.flash_attention_fixed_dim;
  g.flash_bwd_ratio = gpu.flash_attention_backward_ratio;
  g.sms = gpu.num_sms;
  g.fp8_gemm_flops = gpu.peak_flops_fp8 * gpu.fp8_gemm_efficiency;
  g.fp4_gemm_flops = gpu.peak_flops_fp4 * gpu.fp4_gemm_efficiency;
  g.mxfp8_gemm_flops = gpu.peak_flops_fp4 > 0 ? gpu.peak_flops_fp8 * gpu.mxfp8_gemm_efficiency : 0;
  g.moe_layer_overhead_s = gpu.moe_layer_overhead_s;
  g.host_launch_s = gpu.host_launch_s;
  g.peak_flops_fp8 = gpu.peak_flops_fp8;
  g.peak_flops_fp4 = gpu.peak_flops_fp4;
  g.tp_comm_overlap_cost = gpu.tp_comm_overlap_cost;
  g.dp_comm_overlap_cost = gpu.dp_comm_overlap_cost;
  g.iteration_overhead_s = gpu.iteration_overhead_s;
  g.chunk_overhead_s = gpu.pipeline_chunk_overhead_s;
  g.straggler_jitter = gpu.straggler_jitter;
  return g;
}

bool GpuModel::Supports(spec::Precision p) const {
  switch (p) {
    case spec::Precision::kBf16: return true;
    case spec::Precision::kFp8: return fp8_gemm_flops > 0;
    case spec::Precision::kMxfp8:
    case spec::Precision::kFp4: return fp8_gemm_flops > 0 && fp4_gemm_flops > 0;
  }
  return false;
}

double GpuModel::PeakFlopsFor(spec::Precision p) const {
  switch (p) {
    case spec::Precision::kBf16: return peak_flops;
    case spec::Precision::kFp8:
    case spec::Precision::kMxfp8: return peak_flops_fp8;
    case spec::Precision::kFp4: return peak_flops_fp4;
  }
  return peak_flops;
}

GpuModel GpuModel::WithGemmPrecision(spec::Precision p) const {
  assert(Supports(p) && "a validated strategy's precision");
  GpuModel g = *this;
  if (p == spec::Precision::kBf16) return g;
  g.gemm_flops = p == spec::Precision::kFp4     ? fp4_gemm_flops
                 : p == spec::Precision::kMxfp8 ? mxfp8_gemm_flops
                                                : fp8_gemm_flops;
  g.gemm_element_bytes = GemmFormatOf(p).value_bytes;
  return g;
}

GemmFormat GemmFormatOf(spec::Precision p) {
  GemmFormat f;
  switch (p) {
    case spec::Precision::kBf16: break;
    case spec::Precision::kFp8:
      f.value_bytes = 1;
      f.cast_bytes = 3;
      f.weight_copy_bytes = 2;
      f.saved_input_bytes = 1;
      break;
    case spec::Precision::kMxfp8:
      f.value_bytes = 1 + 1.0 / 32;
      f.cast_bytes = 2 + 2 * f.value_bytes;
      f.weight_copy_bytes = 2 * f.value_bytes;
      f.saved_input_bytes = f.value_bytes;
      break;
    case spec::Precision::kFp4:
      f.value_bytes = 0.5 + 1.0 / 16;
      f.cast_bytes = 2 + 2 + 2 * f.value_bytes;
      f.weight_copy_bytes = 2 * f.value_bytes;
      f.saved_input_bytes = f.value_bytes;
      break;
  }
  return f;
}

double GemmTime(const GpuModel& g, double m, double n, double k, double batch) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return 0;
  double flops = 2 * m * n * k * batch;
  double bytes = (g.gemm_element_bytes * (m * k + k * n) + 2 * m * n) * batch;
  double compute = flops / (g.gemm_flops * WaveEfficiency(g.sms, m, n, batch)) * (k + g.tile_fixed_k) / k;
  return std::max(compute, bytes / g.hbm_Bps) + g.kernel_s;
}

double StreamTime(const GpuModel& g, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / g.hbm_Bps + g.kernel_s;
}

// A causal mask's diagonal key blocks are computed in full and masked: a
// query row visits half the keys plus half a block on average. A sliding
// window's band has a second edge: the queries past the first `window`
// positions also visit, on average, half a block before their window starts.
constexpr double kAttentionKeyBlock = 128;
constexpr double kReferenceHeadDim = 128;

double MeanKeysAttended(double keys, double window) {
  if (window <= 0 || window >= keys) return keys / 2;
  return window - window * window / (2 * keys);
}

double FlashAttentionShapeFactor(const GpuModel& g, const AttentionShape& a) {
  assert((a.causal || a.window <= 0) && "a sliding window is causal");
  const double d = a.head_dim, d0 = g.flash_fixed_dim;
  const bool banded = a.window > 0 && a.window < a.keys;
  const double useful = a.causal ? MeanKeysAttended(a.keys, a.window) : a.keys;
  double visited = a.causal ? useful + kAttentionKeyBlock / 2 : a.keys;
  if (banded) visited += kAttentionKeyBlock / 2 * (a.keys - a.window) / a.keys;
  double factor = (d / (d + d0)) / (kReferenceHeadDim / (kReferenceHeadDim + d0));
  factor *= visited / (visited + g.flash_fixed_keys) * (useful / visited);
  return a.backward ? factor * g.flash_bwd_ratio : factor;
}

double FlashAttentionTime(const GpuModel& g, double flops, const AttentionShape& shape) {
  if (flops <= 0) return 0;
  // The shape factor passes 1 at head dims above the reference 128; no
  // kernel passes the peak, whatever efficiency a system file sets.
  return flops / std::min(g.peak_flops, g.flash_flops * FlashAttentionShapeFactor(g, shape)) + g.kernel_s;
}

}  // namespace railsim::perf
