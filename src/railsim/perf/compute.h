// GPU compute-time model: how long one kernel takes on one GPU.
//
// Every kernel is a roofline, max(FLOPs / achieved FLOP rate, bytes /
// achieved HBM bandwidth), plus a fixed per-kernel overhead (launch, ramp-up
// and tail). The achieved FLOP rate of a GEMM is the GPU's large-GEMM
// efficiency times its wave efficiency: output tiles are scheduled on the SMs
// in waves, and a last partial wave leaves SMs idle. Libraries choose among
// tile shapes; we take the best of three (256x128, 128x128, 128x64), smaller
// tiles paying a lower per-SM rate. Each tile also pays a fixed cost
// (prologue, pipeline fill, epilogue) worth gemm_tile_fixed_k steps of its
// loop over the inner dimension k, so a GEMM runs at k / (k + k0) of the rate
// its tiles would reach on a long k: the weight-gradient GEMM, whose inner
// dimension is the tokens of one micro-batch, pays it most. Fused attention
// has the same two terms per query block (a fixed cost worth some keys, and
// per key one worth some head-dimension columns) and computes the diagonal
// blocks of a causal mask in full (and, with a sliding window, the key
// blocks its far edge cuts). One parameter set per GPU
// (spec/system.h). See docs/MODEL.md for the sources and the calibration.
//
// All functions are pure, allocation-free and thread-safe.
#pragma once

#include "railsim/spec/strategy.h"
#include "railsim/spec/system.h"

namespace railsim::perf {

/// The per-GPU constants the kernels use, derived once from a GpuSpec.
struct GpuModel {
  double peak_flops = 0;
  double gemm_flops = 0;       ///< peak x gemm_efficiency
  double gemm_element_bytes = 2;  ///< operand size of GEMMs (16-bit)
  double fp8_gemm_flops = 0;   ///< FP8 peak x fp8_gemm_efficiency (0: no FP8)
  double fp4_gemm_flops = 0;   ///< FP4 peak x fp4_gemm_efficiency (0: no FP4, nor mxfp8)
  double mxfp8_gemm_flops = 0; ///< FP8 peak x mxfp8_gemm_efficiency (0: no block-scaled FP8)
  double moe_layer_overhead_s = 0;  ///< see spec::GpuSpec
  double host_launch_s = 0;         ///< see spec::GpuSpec
  double peak_flops_fp8 = 0, peak_flops_fp4 = 0;  ///< dense peaks (MFU's denominators)
  double tp_comm_overlap_cost = 0;  ///< see spec::GpuSpec
  double dp_comm_overlap_cost = 0;  ///< see spec::GpuSpec
  double iteration_overhead_s = 0, chunk_overhead_s = 0;  ///< see spec::GpuSpec
  double straggler_jitter = 0;  ///< see spec::GpuSpec (sqrt(s))
  double flash_flops = 0;      ///< peak x flash_attention_efficiency
  double tile_fixed_k = 0;     ///< gemm_tile_fixed_k
  double flash_fixed_keys = 0, flash_fixed_dim = 0, flash_bwd_ratio = 1;
  double hbm_Bps = 0;          ///< achieved streaming bandwidth
  double kernel_s = 0;
  double sms = 1;

  static GpuModel From(const spec::GpuSpec& gpu);
  /// The same GPU running its GEMMs in format `p`: the format's rate (FP8's
  /// for fp8 and mxfp8, FP4's for fp4) and operand bytes (GemmFormatOf).
  /// Requires Supports(p).
  GpuModel WithGemmPrecision(spec::Precision p) const;
  /// True when the GPU's tensor cores run `p`: fp8 needs an FP8 peak, mxfp8
  /// and fp4 the block-scaled tensor cores that come with an FP4 peak.
  bool Supports(spec::Precision p) const;
  /// The dense peak of the format the transformer layers' GEMMs run in: what
  /// MFU and HFU are measured against.
  double PeakFlopsFor(spec::Precision p) const;
};

/// What a GEMM number format costs around the GEMMs (Transformer Engine's
/// recipes), per value:
struct GemmFormat {
  /// One operand value in HBM with its share of scales: bf16 2; fp8 1;
  /// mxfp8 1 + 1/32 (an E8M0 scale per 32); fp4 1/2 + 1/16 (an E4M3 scale per 16).
  double value_bytes = 2;
  /// HBM traffic to quantize one 16-bit GEMM input. fp8: read 2, write 1 (what
  /// the H100 FP8 fit assumed); mxfp8: read 2, write a row-wise and a
  /// column-wise copy (scaled along different axes, so both are cast);
  /// fp4: the same plus a first read for the per-tensor amax.
  double cast_bytes = 0;
  /// Quantized copies of each low-precision weight kept for the GEMMs (the
  /// weight and its transpose, or row- and column-wise copies).
  double weight_copy_bytes = 0;
  /// A GEMM input saved for the backward pass (its quantized copy).
  double saved_input_bytes = 2;
};
GemmFormat GemmFormatOf(spec::Precision p);

/// Time of `batch` independent GEMMs C[m x n] = A[m x k] B[k x n]
/// (operands of g.gemm_element_bytes, 16-bit output).
double GemmTime(const GpuModel& g, double m, double n, double k, double batch = 1);

/// Time of a kernel that streams `bytes` through HBM (elementwise, norms,
/// softmax, optimizer).
double StreamTime(const GpuModel& g, double bytes);

/// The shape of one fused attention call.
struct AttentionShape {
  double head_dim = 128;  ///< of the query-key product
  double keys = 0;        ///< sequence length the queries attend over (before the mask)
  bool causal = true;
  bool backward = false;
  /// A causal sliding window: each query attends to at most this many keys,
  /// itself included (0, or at least `keys`: none).
  double window = 0;
};

/// Mean number of keys a query of a causal mask over `keys` positions
/// attends to with a sliding window of `window` keys (0: none): keys / 2
/// without a window or when it covers the sequence, else window -
/// window^2 / (2 keys) (the first `window` queries see a causal triangle,
/// the rest `window` keys each). Continuous at window == keys.
double MeanKeysAttended(double keys, double window);

/// Time of a fused attention kernel executing `flops` useful FLOPs
/// (FlashAttention's count: the masked half of a causal mask, or the keys
/// outside a sliding window, not counted).
double FlashAttentionTime(const GpuModel& g, double flops, const AttentionShape& shape);

/// Fused attention's rate relative to g.flash_flops (1 on long non-causal
/// forward passes at head dim 128).
double FlashAttentionShapeFactor(const GpuModel& g, const AttentionShape& shape);

}  // namespace railsim::perf
