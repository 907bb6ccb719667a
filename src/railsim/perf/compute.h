// GPU compute-time model: how long one kernel takes on one GPU.
//
// Every kernel is a roofline, max(FLOPs / achieved FLOP rate, bytes /
// achieved HBM bandwidth), plus a fixed per-kernel overhead (launch, ramp-up
// and tail). The achieved FLOP rate of a GEMM is the GPU's large-GEMM
// efficiency times its wave efficiency: output tiles are scheduled on the SMs
// in waves, and a last partial wave leaves SMs idle. Libraries choose among
// tile shapes; we take the best of three (256x128, 128x128, 128x64), smaller
// tiles paying a lower per-SM rate. One parameter set per GPU (spec/system.h):
// peak FLOP rate, HBM bandwidth, SM count, gemm_efficiency,
// memory_efficiency, flash_attention_efficiency, kernel_overhead. See
// docs/MODEL.md for the sources and the calibration.
//
// All functions are pure, allocation-free and thread-safe.
#pragma once

#include "railsim/spec/system.h"

namespace railsim::perf {

/// The per-GPU constants the kernels use, derived once from a GpuSpec.
struct GpuModel {
  double peak_flops = 0;
  double gemm_flops = 0;       ///< peak x gemm_efficiency
  double gemm_element_bytes = 2;  ///< operand size of GEMMs (16-bit)
  double fp8_gemm_flops = 0;   ///< FP8 peak x fp8_gemm_efficiency (0: no FP8)
  double tp_comm_overlap_cost = 0;  ///< see spec::GpuSpec
  double flash_flops = 0;      ///< peak x flash_attention_efficiency
  double hbm_Bps = 0;          ///< achieved streaming bandwidth
  double kernel_s = 0;
  double sms = 1;

  static GpuModel From(const spec::GpuSpec& gpu);
  /// The same GPU running its GEMMs in FP8 (1-byte operands at the FP8 rate).
  GpuModel WithFp8Gemms() const;
};

/// Time of `batch` independent GEMMs C[m x n] = A[m x k] B[k x n]
/// (operands of g.gemm_element_bytes, 16-bit output).
double GemmTime(const GpuModel& g, double m, double n, double k, double batch = 1);

/// Time of a kernel that streams `bytes` through HBM (elementwise, norms,
/// softmax, optimizer).
double StreamTime(const GpuModel& g, double bytes);

/// Time of a fused attention kernel executing `flops` (FlashAttention).
double FlashAttentionTime(const GpuModel& g, double flops);

}  // namespace railsim::perf
