#include "railsim/cli/strategy_flags.h"

#include <CLI/CLI.hpp>

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

CLI::Option* AddOptimizerFlags(CLI::App* sub, OptimizerFlags* f) {
  sub->add_option("--main-grads-dtype", f->main_grads_dtype, "main-gradient buffer: fp32, bf16 or stack (the "
                  "stack profile's)")->capture_default_str();
  sub->add_option("--main-params-dtype", f->main_params_dtype,
                  "master weights: fp32, fp16 (16-bit remainders of the fp32 master), none or stack")
      ->capture_default_str();
  sub->add_option("--exp-avg-dtype", f->exp_avg_dtype, "Adam's first moment: fp32, bf16 or stack")
      ->capture_default_str();
  sub->add_option("--exp-avg-sq-dtype", f->exp_avg_sq_dtype, "Adam's second moment: fp32, bf16 or stack")
      ->capture_default_str();
  CLI::Option* sharding = sub->add_option("--data-parallel-sharding", f->data_parallel_sharding,
                  "shard over data-parallel ranks: optimizer (ZeRO-1), gradients (ZeRO-2) or full (ZeRO-3/FSDP)");
  sub->add_option("--fsdp-shard-group-size", f->fsdp_shard_group_size,
                  "hybrid sharding: shard within groups of this many data-parallel ranks, replicate across them "
                  "(all = no replicas)")
      ->capture_default_str();
  return sharding;
}

CLI::Option* AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional) {
  sub->add_option("--tp", f->tp, "tensor-parallel degree")->required(!optional);
  sub->add_option("--pp", f->pp, "pipeline-parallel degree")->required(!optional);
  sub->add_option("--dp", f->dp, "data-parallel degree (default N / (tp x pp x cp))");
  sub->add_option("--cp", f->cp, "context-parallel degree")->capture_default_str();
  sub->add_option("--ep", f->ep, "expert-parallel degree (MoE)")->capture_default_str();
  sub->add_option("--expert-tensor-parallel-size", f->etp,
                  "MoE: tensor-parallel degree of the routed experts, or tp (Megatron-Core's default); ep x this "
                  "must divide tp x cp x dp (MoE parallel folding)")
      ->capture_default_str();
  sub->add_option("--vp", f->vp, "virtual pipeline stages per rank (1 = no interleaving)")->capture_default_str();
  sub->add_option("--microbatch-group-size-per-virtual-pipeline-stage", f->group_size,
                  "with --vp > 1, micro-batches run through one virtual stage before the next (Megatron-Core's "
                  "N, in [pp, micro-batches]; larger holds more warm-up activations, hides the wrap-around sends)")
      ->capture_default_str();
  sub->add_flag("--account-for-embedding-in-pipeline-split", f->account_for_embedding,
                "Megatron-Core's uneven split: the input embedding counts as one layer of the pipeline split "
                "(the first stage holds one transformer layer fewer)");
  sub->add_flag("--account-for-loss-in-pipeline-split", f->account_for_loss,
                "the same for the loss (the last stage holds one transformer layer fewer)");
  sub->add_option("--decoder-first-pipeline-num-layers", f->decoder_first_layers,
                  "transformer layers on the first pipeline stage; the middle stages share the rest evenly "
                  "(Megatron-Core's uneven split)");
  sub->add_option("--decoder-last-pipeline-num-layers", f->decoder_last_layers,
                  "transformer layers on the last pipeline stage");
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
  sub->add_option("--precision", f->precision,
                  "the transformer layers' GEMM format: bf16, fp8 (one scale per tensor), mxfp8 (FP8 with a scale "
                  "per 32 values) or fp4 (NVFP4); mxfp8 and fp4 need Blackwell's block-scaled tensor cores")
      ->capture_default_str();
  sub->add_flag("--fp8-params", f->fp8_params,
                "keep the weights only in FP8 (Megatron-Core's --fp8-param-gather: no 16-bit copy, 1-byte "
                "parameter all-gather); with --precision fp8 or mxfp8");
  sub->add_flag("--fp4-params", f->fp4_params,
                "keep the weights only in NVFP4 (Megatron-Core's --fp4-param-gather); with --precision fp4");
  sub->add_option("--num-layers-at-start-in-bf16", f->bf16_layers_at_start,
                  "transformer layers at the start kept in bf16 under a low precision (auto: none)")
      ->capture_default_str();
  sub->add_option("--num-layers-at-end-in-bf16", f->bf16_layers_at_end,
                  "transformer layers at the end kept in bf16 under a low precision (auto: none; NVIDIA's NVFP4 "
                  "recipe keeps about 15% of them, most at the end)")
      ->capture_default_str();
  CLI::Option* sharding = AddOptimizerFlags(sub, &f->optimizer);
  AddMoeFlags(sub, &f->moe);
  return sharding;
}

}  // namespace railsim::cli
