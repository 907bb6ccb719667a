// GPU and system descriptions: what one accelerator can do, and how K of them
// are joined into a high-bandwidth (HB) domain with NIC bandwidth per GPU, and
// the constants of NCCL's cost model for the system (spec/nccl_constants.h).
//
// Plain values. A SystemSpec that came out of ParseSystemJson() is valid:
// every rate is positive and finite, every efficiency in (0, 1].
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "railsim/spec/nccl_constants.h"

namespace railsim::spec {

/// One accelerator, and the few numbers of its achieved-efficiency model
/// (see perf/compute.h for how they are used and docs/MODEL.md for sources).
struct GpuSpec {
  std::string name;
  double peak_flops = 0;        ///< dense 16-bit tensor-core FLOP/s
  double hbm_bytes = 0;         ///< HBM capacity
  double hbm_bw_Bps = 0;        ///< HBM bandwidth
  int num_sms = 0;              ///< streaming multiprocessors (GEMM wave quantisation)
  double gemm_efficiency = 0;   ///< achieved fraction of peak on large, well-shaped GEMMs
  double memory_efficiency = 0; ///< achieved fraction of HBM bandwidth on streaming kernels
  double flash_attention_efficiency = 0;  ///< fused attention, fraction of peak
  double kernel_overhead_s = 0; ///< fixed cost per kernel (launch, ramp, tail)
  /// A GEMM tile's fixed cost (prologue, pipeline fill, epilogue) in steps of
  /// the inner dimension: a tile over inner dimension k takes as long as
  /// k + gemm_tile_fixed_k steps of its main loop. 0 = shape-blind.
  double gemm_tile_fixed_k = 0;
  /// Fused attention's shape terms, the same idea per query block: a fixed
  /// cost worth flash_attention_fixed_keys keys of its loop over keys, and
  /// per key a fixed cost worth flash_attention_fixed_dim head-dimension
  /// columns; backward runs at flash_attention_backward_ratio of the forward
  /// rate. flash_attention_efficiency is the forward rate at head dim 128 on
  /// long non-causal sequences.
  double flash_attention_fixed_keys = 0;
  double flash_attention_fixed_dim = 0;
  double flash_attention_backward_ratio = 1;
  double peak_flops_fp8 = 0;    ///< dense FP8 tensor-core FLOP/s; 0 = no FP8
  double fp8_gemm_efficiency = 0;  ///< achieved fraction of the FP8 peak on large GEMMs
  /// Dense FP4 (NVFP4) tensor-core FLOP/s; 0 = no FP4. A GPU with it also has
  /// block-scaled tensor cores, so it runs mxfp8 at its FP8 peak (Blackwell).
  double peak_flops_fp4 = 0;
  double fp4_gemm_efficiency = 0;  ///< achieved fraction of the FP4 peak on large GEMMs
  /// mxfp8 GEMMs' achieved fraction of the FP8 peak: the block scales are
  /// loaded and applied inside the tensor-core pipeline. Defaults to
  /// fp8_gemm_efficiency.
  double mxfp8_gemm_efficiency = 0;
  /// With TP-communication overlap: the fraction of the overlapped
  /// communication time that still lengthens the GEMMs it hides behind
  /// (they share SMs and HBM with the communication kernels).
  double tp_comm_overlap_cost = 0;
  /// Fixed costs of a training step on this GPU (with the stacks it was fitted
  /// on): once per iteration (optimizer launches, gradient norm and clipping,
  /// zeroing gradient buffers, loading the batch, loss all-reduce, logging
  /// syncs), and once per pipeline chunk, i.e. per micro-batch and virtual
  /// stage (scheduling and point-to-point handshakes, forward and backward).
  double iteration_overhead_s = 0;
  double pipeline_chunk_overhead_s = 0;
  /// Like tp_comm_overlap_cost for overlapped data-parallel communication:
  /// the fraction of its hidden time that still lengthens the compute.
  double dp_comm_overlap_cost = 0;
  /// How far apart data-parallel replicas drift between their once-a-step
  /// synchronisation: the standard deviation of one replica's time for T
  /// seconds of work is straggler_jitter x sqrt(T) (in sqrt(s); a random
  /// walk, as when many kernels and host stalls each vary a little). A
  /// synchronous step waits for the slowest replica (perf/straggler.h).
  double straggler_jitter = 0;
  /// Fixed cost of each MoE layer per pass (forward, backward, recomputed
  /// forward) beyond its kernels' work: the token dispatcher's host
  /// synchronisation for the all-to-all's split sizes and its many small
  /// launches (router, permutations, grouped GEMM setup). Software as much
  /// as hardware: fitted with the stack the GPU's runs used.
  double moe_layer_overhead_s = 0;
  /// Host time to issue one kernel of a transformer layer without CUDA
  /// graphs (the framework's Python, autograd and the launch itself), per
  /// kernel railsim counts in the layer (a GEMM, the attention core, an
  /// elementwise kernel, a collective; each stands for a few real launches).
  /// The host runs ahead of the GPU, so a layer's pass takes at least its
  /// kernels' issue time: a floor that binds when per-GPU work per layer is
  /// small on a fast GPU (high TP, short micro-batches). A property of the
  /// host CPU and the eager stack as much as of the GPU; 0 = never binds.
  double host_launch_s = 0;
  double memory_reserved_bytes = 0;  ///< CUDA context, NCCL and allocator slack
  std::map<std::string, std::string> sources;  ///< field -> where its number comes from
};

/// A node type: GPU, HB domain (NVLink) and NIC.
struct SystemSpec {
  std::string name;
  std::string description;
  GpuSpec gpu;
  int hb_domain_size = 0;     ///< K, GPUs per HB domain
  double hb_bw_Bps = 0;       ///< HB bandwidth per GPU per direction
  double hb_efficiency = 0;   ///< achieved fraction on ring collectives (NCCL busbw / line rate)
  double hb_latency_s = 0;    ///< per-step latency of an HB collective
  /// In-switch all-reduce (NVLink SHARP): achieved busbw as a fraction of
  /// hb_bw_Bps; 0 when the HB fabric cannot reduce.
  double hb_in_network_allreduce_efficiency = 0;
  double nic_bw_Bps = 0;      ///< one NIC's bandwidth per direction (each GPU's own unless gpus_per_nic > 1)
  double nic_efficiency = 0;  ///< achieved fraction of NIC line rate
  double nic_latency_s = 0;   ///< per-step latency across the NIC network (default fabric)
  /// One switch traversal. A built network with more switch tiers than the
  /// default one (radix 64, full bisection) adds two per extra tier to
  /// nic_latency_s; one with fewer takes them off.
  double switch_latency_s = 0;
  /// How the NIC network's switches choose among equal-cost paths: "d-mod-k"
  /// (InfiniBand's static fat-tree routing) or "ecmp" (Ethernet/RoCE hashing).
  std::string nic_routing = "ecmp";
  /// NICs behind each GPU's nic_bw_Bps (AWS p5: 4 x 100 Gb/s), which the
  /// net plugin presents to NCCL as one device; and the NIC fabric:
  /// "infiniband", "roce" or a provider fabric such as "efa".
  int nics_per_gpu = 1;
  /// GPUs that share one NIC of nic_bw_Bps (a PCIe switch with two GPUs and
  /// one NIC: 4 NICs per 8 GPUs, as on AWS p4de or A100 nodes with 4 HDR
  /// ports); divides hb_domain_size. The network has K / g rails, and each
  /// GPU's share of its NIC when every GPU sends is nic_bw_Bps / g.
  int gpus_per_nic = 1;
  std::string nic_fabric = "infiniband";
  /// A GPU's share of its NIC when all of a node's GPUs send at once.
  double nic_share_Bps() const { return nic_bw_Bps / gpus_per_nic; }
  /// NCCL's cost model for this system (the preset's "nccl" object), with
  /// the source of each number in nccl_sources; disabled when absent.
  NcclConstants nccl;
  std::map<std::string, std::string> nccl_sources;
  std::map<std::string, std::string> sources;
};

/// Parses and validates a system JSON document. Throws Error whose `where` is
/// the JSON pointer of the bad field.
SystemSpec ParseSystemJson(std::string_view text);

/// The JSON form (human units), which ParseSystemJson reads back unchanged.
std::string SystemToJson(const SystemSpec& system);

}  // namespace railsim::spec
