#include "railsim/cli/strategy_flags.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/spec/model.h"

namespace railsim::cli {

void AddMoeFlags(CLI::App* sub, MoeFlags* f) {
  sub->add_option("--moe-alltoall", f->alltoall,
                  "MoE dispatch: forwarded (NIC once per HB domain reached, then NVLink), direct (any NIC to any "
                  "NIC) or auto (forwarded on Rail-only)")
      ->capture_default_str();
  sub->add_option("--moe-imbalance", f->imbalance, "busiest expert rank's load over the mean (1 = balanced)")
      ->capture_default_str();
  sub->add_option("--moe-max-domains", f->max_domains,
                  "node-limited routing: HB domains each token may reach (DeepSeek-V3: 4), or any")
      ->capture_default_str();
  sub->add_option("--moe-dispatch-precision", f->dispatch_precision,
                  "MoE dispatch payload: bf16, or fp8 with one fp32 scale per 128 values (DeepEP, DeepSeek-V3); "
                  "the combine stays bf16")
      ->capture_default_str();
  sub->add_flag("--moe-overlap", f->overlap,
                "run dispatch and combine behind the layer's compute of another micro-batch");
}

void ParseMoeFlags(const MoeFlags& f, spec::Strategy* s) {
  std::string a = ParseChoiceFlag("--moe-alltoall", f.alltoall, {"auto", "forwarded", "direct"});
  s->moe_alltoall = a == "forwarded" ? spec::MoeAllToAll::kForwarded
                    : a == "direct"  ? spec::MoeAllToAll::kDirect
                                     : spec::MoeAllToAll::kAuto;
  s->moe_imbalance = ParseNumberFlag("--moe-imbalance", f.imbalance, 1, spec::kMaxMoeImbalance);
  s->moe_max_domains = f.max_domains == "any" ? 0 : int(ParseIntFlag("--moe-max-domains", f.max_domains, 1, 1 << 20));
  s->moe_overlap = f.overlap;
  s->moe_dispatch_precision =
      ParseChoiceFlag("--moe-dispatch-precision", f.dispatch_precision, {"bf16", "fp8"}) == "fp8"
          ? spec::MoeDispatchPrecision::kFp8
          : spec::MoeDispatchPrecision::kBf16;
}

void AddOptimizerFlags(CLI::App* sub, OptimizerFlags* f) {
  sub->add_option("--main-grads-dtype", f->main_grads_dtype, "main-gradient buffer: fp32 or bf16")
      ->capture_default_str();
  sub->add_option("--main-params-dtype", f->main_params_dtype,
                  "master weights: fp32, fp16 (16-bit remainders of the fp32 master) or none")
      ->capture_default_str();
  sub->add_option("--exp-avg-dtype", f->exp_avg_dtype, "Adam's first moment: fp32 or bf16")->capture_default_str();
  sub->add_option("--exp-avg-sq-dtype", f->exp_avg_sq_dtype, "Adam's second moment: fp32 or bf16")
      ->capture_default_str();
  f->sharding_option = sub->add_option("--data-parallel-sharding", f->data_parallel_sharding,
                  "shard over data-parallel ranks: optimizer (ZeRO-1), gradients (ZeRO-2) or full (ZeRO-3/FSDP)");
  sub->add_option("--fsdp-shard-group-size", f->fsdp_shard_group_size,
                  "hybrid sharding: shard within groups of this many data-parallel ranks, replicate across them "
                  "(all = no replicas)")
      ->capture_default_str();
}

void ParseOptimizerFlags(const OptimizerFlags& f, spec::Strategy* s) {
  auto moment = [](const char* flag, const std::string& text) {
    return ParseChoiceFlag(flag, text, {"fp32", "bf16"}) == "bf16" ? spec::MomentDtype::kBf16
                                                                   : spec::MomentDtype::kFp32;
  };
  s->main_grads_dtype = ParseChoiceFlag("--main-grads-dtype", f.main_grads_dtype, {"fp32", "bf16"}) == "bf16"
                            ? spec::MainGradsDtype::kBf16
                            : spec::MainGradsDtype::kFp32;
  std::string master = ParseChoiceFlag("--main-params-dtype", f.main_params_dtype, {"fp32", "fp16", "none"});
  s->main_params_dtype = master == "fp16"   ? spec::MainParamsDtype::kFp16
                         : master == "none" ? spec::MainParamsDtype::kNone
                                            : spec::MainParamsDtype::kFp32;
  s->exp_avg_dtype = moment("--exp-avg-dtype", f.exp_avg_dtype);
  s->exp_avg_sq_dtype = moment("--exp-avg-sq-dtype", f.exp_avg_sq_dtype);
  if (f.fsdp_shard_group_size != "all") {
    s->fsdp_shard_group_size = ParseIntFlag("--fsdp-shard-group-size", f.fsdp_shard_group_size, 1, spec::kMaxModelGpus);
  }
  if (f.sharding_option == nullptr || f.sharding_option->count() == 0) return;
  std::string sharding =
      ParseChoiceFlag("--data-parallel-sharding", f.data_parallel_sharding, {"optimizer", "gradients", "full"});
  s->dp_sharding = sharding == "full"        ? spec::DpSharding::kFull
                   : sharding == "gradients" ? spec::DpSharding::kGradients
                                             : spec::DpSharding::kOptimizer;
}

void AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional) {
  sub->add_option("--tp", f->tp, "tensor-parallel degree")->required(!optional);
  sub->add_option("--pp", f->pp, "pipeline-parallel degree")->required(!optional);
  sub->add_option("--dp", f->dp, "data-parallel degree (default N / (tp x pp x cp))");
  sub->add_option("--cp", f->cp, "context-parallel degree")->capture_default_str();
  sub->add_option("--ep", f->ep, "expert-parallel degree (MoE)")->capture_default_str();
  sub->add_option("--vp", f->vp, "virtual pipeline stages per rank (1 = no interleaving)")->capture_default_str();
  sub->add_option("--micro-batch-size", f->micro_batch, "sequences per micro-batch")->required(!optional);
  sub->add_option("--recompute", f->recompute, "none, selective or full")->capture_default_str();
  sub->add_flag("--sequence-parallel", f->sequence_parallel, "sequence parallelism (with tp > 1)");
  sub->add_flag("--distributed-optimizer", f->distributed_optimizer, "shard optimizer states (ZeRO-1)");
  sub->add_flag("--no-dp-overlap", f->no_dp_overlap,
                "do not overlap data-parallel communication with compute");
  sub->add_flag("--grad-reduce-in-bf16", f->grad_reduce_in_bf16, "reduce gradients in 16-bit, not fp32");
  sub->add_flag("--tp-comm-overlap", f->tp_comm_overlap,
                "overlap the sequence-parallel all-gathers and reduce-scatters with the GEMMs (needs "
                "--sequence-parallel)");
  sub->add_flag("--no-overlap-p2p-communication", f->no_p2p_overlap,
                "with --vp > 1, send between pipeline stages in the critical path instead of behind compute");
  sub->add_option("--precision", f->precision, "GEMM precision: bf16 or fp8")->capture_default_str();
  AddOptimizerFlags(sub, &f->optimizer);
  AddMoeFlags(sub, &f->moe);
}

void CheckStrategyFlagValues(const StrategyFlags& f) {
  for (auto [flag, value] : {std::pair{"--tp", &f.tp}, {"--pp", &f.pp}, {"--dp", &f.dp}, {"--cp", &f.cp},
                             {"--ep", &f.ep}, {"--vp", &f.vp}}) {
    if (!value->empty()) ParseIntFlag(flag, *value, 1, 1 << 20);
  }
  if (!f.micro_batch.empty()) ParseIntFlag("--micro-batch-size", f.micro_batch, 1, spec::kMaxGlobalBatch);
  ParseChoiceFlag("--recompute", f.recompute, {"none", "selective", "full"});
  ParseChoiceFlag("--precision", f.precision, {"bf16", "fp8"});
  spec::Strategy unused;
  ParseMoeFlags(f.moe, &unused);
}

spec::Precision ParsePrecision(const std::string& text, const perf::PerfContext& c) {
  spec::Precision p = ParseChoiceFlag("--precision", text, {"bf16", "fp8"}) == "fp8" ? spec::Precision::kFp8
                                                                                     : spec::Precision::kBf16;
  if (p == spec::Precision::kFp8 && c.gpu.fp8_gemm_flops <= 0) {
    throw Error("--precision", fmt::format("the system's GPU {} has no FP8 peak (gpu.peak_flops_fp8); use bf16",
                                           c.system.gpu.name));
  }
  return p;
}

spec::Strategy ParseStrategy(const StrategyFlags& f, const perf::PerfContext& c, int64_t global_batch,
                             spec::Attention attention) {
  const int64_t n = c.gpus;
  spec::Strategy s;
  s.tp = int(ParseIntFlag("--tp", f.tp, 1, 1 << 20));
  s.pp = int(ParseIntFlag("--pp", f.pp, 1, 1 << 20));
  s.cp = int(ParseIntFlag("--cp", f.cp, 1, 1 << 20));
  s.ep = int(ParseIntFlag("--ep", f.ep, 1, 1 << 20));
  s.vp = int(ParseIntFlag("--vp", f.vp, 1, 1 << 20));
  s.micro_batch = ParseIntFlag("--micro-batch-size", f.micro_batch, 1, spec::kMaxGlobalBatch);
  s.global_batch = global_batch;
  spec::ValidateDegrees(c.model, s);
  s.dp = ParseDpFlag(f.dp, s.tp, s.pp, s.cp, n);
  std::string r = ParseChoiceFlag("--recompute", f.recompute, {"none", "selective", "full"});
  s.recompute = r == "full" ? spec::Recompute::kFull
                            : r == "selective" ? spec::Recompute::kSelective : spec::Recompute::kNone;
  s.sequence_parallel = f.sequence_parallel;
  s.dp_sharding = f.distributed_optimizer ? spec::DpSharding::kOptimizer : spec::DpSharding::kNone;
  ParseOptimizerFlags(f.optimizer, &s);
  s.overlap_dp_comm = !f.no_dp_overlap;
  s.grad_reduce_16bit = f.grad_reduce_in_bf16;
  s.tp_comm_overlap = f.tp_comm_overlap;
  s.overlap_p2p_comm = !f.no_p2p_overlap;
  s.precision = ParsePrecision(f.precision, c);
  s.attention = attention;
  ParseMoeFlags(f.moe, &s);
  spec::ValidateStrategy(c.model, n, s);
  spec::ValidatePlacement(c.placement, s, "--placement");
  return s;
}

}  // namespace railsim::cli
