#include "railsim/spec/system.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/units.h"
#include "railsim/spec/json_reader.h"
#include "railsim/spec/nccl_constants_json.h"

namespace railsim::spec {
namespace {

// No product has an HB domain this large; the check keeps arithmetic on K far
// from overflow. (The ideal network of perf/ sets K = N itself.)
constexpr int64_t kMaxHbDomainSize = 1 << 20;

GpuSpec ReadGpu(JsonReader r) {
  GpuSpec g;
  g.name = r.Name("name");
  g.peak_flops = r.FlopRate("peak_flops");
  g.hbm_bytes = r.Bytes("hbm_capacity");
  g.hbm_bw_Bps = r.Bandwidth("hbm_bandwidth");
  g.num_sms = static_cast<int>(r.Int("num_sms", 1, 100000));
  g.gemm_efficiency = r.Number("gemm_efficiency", 0.01, 1.0);
  g.memory_efficiency = r.Number("memory_efficiency", 0.01, 1.0);
  g.flash_attention_efficiency = r.Number("flash_attention_efficiency", 0.01, 1.0);
  g.kernel_overhead_s = r.Duration("kernel_overhead");
  g.gemm_tile_fixed_k = r.NumberOr("gemm_tile_fixed_k", 0, 0, 65536);
  g.flash_attention_fixed_keys = r.NumberOr("flash_attention_fixed_keys", 0, 0, 65536);
  g.flash_attention_fixed_dim = r.NumberOr("flash_attention_fixed_dim", 0, 0, 4096);
  g.flash_attention_backward_ratio = r.NumberOr("flash_attention_backward_ratio", 1, 0.1, 2);
  if (r.Has("peak_flops_fp8")) {
    g.peak_flops_fp8 = r.FlopRate("peak_flops_fp8");
    g.fp8_gemm_efficiency = r.Number("fp8_gemm_efficiency", 0.01, 1.0);
  }
  if (r.Has("peak_flops_fp4")) {
    g.peak_flops_fp4 = r.FlopRate("peak_flops_fp4");
    g.fp4_gemm_efficiency = r.Number("fp4_gemm_efficiency", 0.01, 1.0);
    g.mxfp8_gemm_efficiency = r.NumberOr("mxfp8_gemm_efficiency", g.fp8_gemm_efficiency, 0.01, 1.0);
  }
  g.tp_comm_overlap_cost = r.NumberOr("tp_comm_overlap_cost", 0.5, 0, 1);
  g.iteration_overhead_s = r.DurationOr("iteration_overhead", 0);
  g.pipeline_chunk_overhead_s = r.DurationOr("pipeline_chunk_overhead", 0);
  g.dp_comm_overlap_cost = r.NumberOr("dp_comm_overlap_cost", 0, 0, 1);
  g.straggler_jitter = r.NumberOr("straggler_jitter", 0, 0, 1);
  g.moe_layer_overhead_s = r.DurationOr("moe_layer_overhead", 0);
  g.host_launch_s = r.DurationOr("host_launch", 0);
  g.memory_reserved_bytes = r.BytesOr("memory_reserved", 0);
  g.sources = r.StringMapOr("sources");
  r.Finish();
  // Dense FP8 runs at twice the dense BF16 rate on every GPU that has it;
  // 4x is the sparsity figure of the datasheets, which dense training never
  // reaches, and below 1x FP8 would be pointless.
  if (g.peak_flops_fp8 > 0 && (g.peak_flops_fp8 < g.peak_flops || g.peak_flops_fp8 > 2.0 * g.peak_flops * 1.001)) {
    throw Error(r.PointerTo("peak_flops_fp8"),
                fmt::format("expected the dense FP8 peak, between peak_flops and 2 x peak_flops ({} to {}), got {} "
                            "(the datasheets' sparsity figure is 4 x)",
                            units::FormatFlopRate(g.peak_flops), units::FormatFlopRate(2 * g.peak_flops),
                            units::FormatFlopRate(g.peak_flops_fp8)));
  }
  // Blackwell's dense FP4 runs at 2x (B200, GB200) to 3x (B300, GB300) its
  // FP8 rate; block-scaled formats need the FP8 tensor cores too.
  if (g.peak_flops_fp4 > 0 &&
      (g.peak_flops_fp8 <= 0 || g.peak_flops_fp4 < g.peak_flops_fp8 || g.peak_flops_fp4 > 4.0 * g.peak_flops_fp8 * 1.001)) {
    throw Error(r.PointerTo("peak_flops_fp4"),
                g.peak_flops_fp8 <= 0
                    ? std::string("expected peak_flops_fp8 too (block-scaled FP4 GPUs have FP8 tensor cores)")
                    : fmt::format("expected the dense FP4 peak, between peak_flops_fp8 and 4 x peak_flops_fp8 ({} to "
                                  "{}), got {}",
                                  units::FormatFlopRate(g.peak_flops_fp8), units::FormatFlopRate(4 * g.peak_flops_fp8),
                                  units::FormatFlopRate(g.peak_flops_fp4)));
  }
  if (g.memory_reserved_bytes >= g.hbm_bytes) {
    throw Error(r.PointerTo("memory_reserved"), "expected less than hbm_capacity");
  }
  return g;
}

}  // namespace

SystemSpec ParseSystemJson(std::string_view text) {
  nlohmann::json doc = ParseJsonText(text);
  JsonReader r(doc, "");
  SystemSpec s;
  s.name = r.Name("name");
  s.description = r.StringOr("description", "");
  s.gpu = ReadGpu(r.Object("gpu"));
  s.hb_domain_size = static_cast<int>(r.Int("hb_domain_size", 1, kMaxHbDomainSize));
  s.hb_bw_Bps = r.Bandwidth("hb_bandwidth");
  s.hb_efficiency = r.Number("hb_efficiency", 0.01, 1.0);
  s.hb_latency_s = r.Duration("hb_latency");
  s.hb_in_network_allreduce_efficiency = r.NumberOr("hb_in_network_allreduce_efficiency", 0, 0, 2.0);
  s.nic_bw_Bps = r.Bandwidth("nic_bandwidth");
  s.nic_efficiency = r.Number("nic_efficiency", 0.01, 1.0);
  s.nic_latency_s = r.Duration("nic_latency");
  s.switch_latency_s = r.DurationOr("switch_latency", 0);
  s.nic_routing = r.EnumOr("nic_routing", {"ecmp", "d-mod-k"}, "ecmp");
  s.nics_per_gpu = static_cast<int>(r.IntOr("nics_per_gpu", 1, 1, 64));
  s.gpus_per_nic = static_cast<int>(r.IntOr("gpus_per_nic", 1, 1, s.hb_domain_size));
  if (s.hb_domain_size % s.gpus_per_nic != 0) {
    throw Error(r.PointerTo("gpus_per_nic"), fmt::format("expected a divisor of hb_domain_size {}, got {}",
                                                         s.hb_domain_size, s.gpus_per_nic));
  }
  if (s.gpus_per_nic > 1 && s.nics_per_gpu > 1) {
    throw Error(r.PointerTo("gpus_per_nic"), "expected 1 when nics_per_gpu is above 1 (GPUs share a NIC, or a GPU has several)");
  }
  s.nic_fabric = r.EnumOr("nic_fabric", {"infiniband", "roce", "efa"}, "infiniband");
  if (r.Has("nccl")) s.nccl = ReadNcclConstants(r.Object("nccl"), &s.nccl_sources);
  s.sources = r.StringMapOr("sources");
  r.Finish();
  return s;
}

std::string SystemToJson(const SystemSpec& s) {
  nlohmann::ordered_json gpu;
  gpu["name"] = s.gpu.name;
  gpu["peak_flops"] = units::FormatFlopRate(s.gpu.peak_flops);
  gpu["hbm_capacity"] = units::FormatBytes(s.gpu.hbm_bytes);
  gpu["hbm_bandwidth"] = units::FormatByteRate(s.gpu.hbm_bw_Bps);
  gpu["num_sms"] = s.gpu.num_sms;
  gpu["gemm_efficiency"] = s.gpu.gemm_efficiency;
  gpu["memory_efficiency"] = s.gpu.memory_efficiency;
  gpu["flash_attention_efficiency"] = s.gpu.flash_attention_efficiency;
  gpu["kernel_overhead"] = units::FormatDuration(s.gpu.kernel_overhead_s);
  gpu["gemm_tile_fixed_k"] = s.gpu.gemm_tile_fixed_k;
  gpu["flash_attention_fixed_keys"] = s.gpu.flash_attention_fixed_keys;
  gpu["flash_attention_fixed_dim"] = s.gpu.flash_attention_fixed_dim;
  gpu["flash_attention_backward_ratio"] = s.gpu.flash_attention_backward_ratio;
  if (s.gpu.peak_flops_fp8 > 0) {
    gpu["peak_flops_fp8"] = units::FormatFlopRate(s.gpu.peak_flops_fp8);
    gpu["fp8_gemm_efficiency"] = s.gpu.fp8_gemm_efficiency;
  }
  if (s.gpu.peak_flops_fp4 > 0) {
    gpu["peak_flops_fp4"] = units::FormatFlopRate(s.gpu.peak_flops_fp4);
    gpu["fp4_gemm_efficiency"] = s.gpu.fp4_gemm_efficiency;
    gpu["mxfp8_gemm_efficiency"] = s.gpu.mxfp8_gemm_efficiency;
  }
  gpu["tp_comm_overlap_cost"] = s.gpu.tp_comm_overlap_cost;
  gpu["iteration_overhead"] = units::FormatDuration(s.gpu.iteration_overhead_s);
  gpu["pipeline_chunk_overhead"] = units::FormatDuration(s.gpu.pipeline_chunk_overhead_s);
  gpu["dp_comm_overlap_cost"] = s.gpu.dp_comm_overlap_cost;
  gpu["straggler_jitter"] = s.gpu.straggler_jitter;
  if (s.gpu.moe_layer_overhead_s > 0) gpu["moe_layer_overhead"] = units::FormatDuration(s.gpu.moe_layer_overhead_s);
  if (s.gpu.host_launch_s > 0) gpu["host_launch"] = units::FormatDuration(s.gpu.host_launch_s);
  gpu["memory_reserved"] = units::FormatBytes(s.gpu.memory_reserved_bytes);
  gpu["sources"] = SourcesJson(s.gpu.sources);
  nlohmann::ordered_json j;
  j["name"] = s.name;
  j["description"] = s.description;
  j["gpu"] = gpu;
  j["hb_domain_size"] = s.hb_domain_size;
  j["hb_bandwidth"] = units::FormatByteRate(s.hb_bw_Bps);
  j["hb_efficiency"] = s.hb_efficiency;
  j["hb_latency"] = units::FormatDuration(s.hb_latency_s);
  j["hb_in_network_allreduce_efficiency"] = s.hb_in_network_allreduce_efficiency;
  j["nic_bandwidth"] = units::FormatBitRate(s.nic_bw_Bps);
  j["nic_efficiency"] = s.nic_efficiency;
  j["nic_latency"] = units::FormatDuration(s.nic_latency_s);
  j["switch_latency"] = units::FormatDuration(s.switch_latency_s);
  j["nic_routing"] = s.nic_routing;
  j["nics_per_gpu"] = s.nics_per_gpu;
  if (s.gpus_per_nic > 1) j["gpus_per_nic"] = s.gpus_per_nic;
  j["nic_fabric"] = s.nic_fabric;
  if (s.nccl.enabled) j["nccl"] = NcclConstantsJson(s.nccl, s.nccl_sources);
  j["sources"] = SourcesJson(s.sources);
  return j.dump(2) + "\n";
}

}  // namespace railsim::spec
