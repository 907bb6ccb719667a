#include "testutil/public_step_times.h"

#include <algorithm>
#include <cstdlib>

#include "railsim/core/error.h"
#include "testutil/reference_data.h"
#include "railsim/spec/presets.h"

namespace railsim::testutil {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool StartsWith(const std::string& text, const std::string& part) { return text.rfind(part, 0) == 0; }

// A whole non-negative integer cell ("24576(default)" reads 24576), or -1.
long long Int(const std::string& cell) {
  if (cell.empty() || cell[0] < '0' || cell[0] > '9') return -1;
  return std::atoll(cell.c_str());
}

// The vocabulary a tokenizer cell names, or -1.
long long Vocab(const std::string& cell) {
  if (Int(cell) > 0) return Int(cell);
  if (Contains(cell, "nemotron_2_256k")) return 256000;
  if (Contains(cell, "gpt2-bpe-50257")) return 50257;
  return -1;
}

}  // namespace

std::vector<PublicRow> ReadPublicRows() {
  std::vector<PublicRow> rows;
  for (const std::vector<std::string>& c : ReadReferenceCsv("step-times-public.csv")) {
    if (c.size() < 32) continue;
    PublicRow r{c[0],  c[1],  c[2],  c[3],  c[5],  c[6],  c[7],  c[8],  c[9],  c[10], c[11], c[12], c[13],
                c[14], c[15], c[16], c[17], c[18], c[19], c[20], c[21], c[23], c[24], c[25], 0,     c[31]};
    r.step_time_s = Int(c[26]) >= 0 ? std::atof(c[26].c_str()) : 0;
    rows.push_back(r);
  }
  return rows;
}

bool IsFitRow(const std::string& id) {
  // The NeMo rows join the H100 calibration rows in the GPU's fit; the two
  // Megatron-LM functional tests set the megatron-core stack's per-step cost
  // (H100RefitTest.StepTimeParameters).
  static const char* const kFit[] = {
      "mlm-golden-gpt3_7b_tp1_pp4_memory_speed-dev_dgx_h100",  // megatron-core: its per-step cost
      "mlm-golden-gpt3_7b_tp4_pp1_memory_speed-dev_dgx_h100",  // the same model, no pipeline
      "mlm-golden-gpt3_7b_tp4_pp1_memory_speed-dev_dgx_gb200",  // GB200's host_launch (eager, tp 4)
      "dgxc2504-gpt3-175b-bf16-128",  // vp 6 against the calibration rows' vp 12
      "dgxc2504-nemotron15b-bf16-16",  // a short step on few GPUs
  };
  return std::find(std::begin(kFit), std::end(kFit), id) != std::end(kFit);
}

Expressed Express(const PublicRow& r) {
  Expressed x;
  auto no = [&](const std::string& why) {
    x.why_not = why;
    return x;
  };
  if (r.step_time_s <= 0) return no("no step time (tokens/s only, sequence length not stated)");
  if (Contains(r.id, "lora")) return no("LoRA fine-tuning (frozen base weights) is not modelled");
  if (Contains(r.notes, "SUSPECT") || Contains(r.notes, "7.6x slower")) {
    return no("the source's notes flag this value (copied golden / a 7.6x slower cluster run)");
  }
  if (Contains(r.notes, "hybrid pattern")) return no("hybrid Mamba layers are not modelled");
  if (Int(r.gpus) <= 0) return no("GPU count not stated (release test)");
  if (Int(r.layers) <= 0 || Int(r.hidden) <= 0 || Int(r.ffn) <= 0 || Int(r.seq) <= 0) {
    return no("model dimensions not stated");
  }
  if (Vocab(r.vocab) <= 0) return no("vocabulary not stated");
  if (!r.vp.empty() && Int(r.vp) <= 0) return no("pipeline layout string or vp not stated");
  // The system.
  std::string system;
  if (StartsWith(r.gpu, "H100-SXM")) system = "dgx-h100";
  else if (StartsWith(r.gpu, "A100")) system = "dgx-a100";
  else if (StartsWith(r.gpu, "GB200")) system = "gb200-nvl72";
  else return no("GPU " + r.gpu + " has no system preset");
  // The stack.
  bool eager = false;
  if (StartsWith(r.id, "mlm-golden")) {
    x.stack = spec::Stack::kMegatronCore;  // Megatron-LM's functional tests
    x.iteration_overhead_s = kFunctionalTestIterationOverheadS;
    eager = true;  // their model_config.yaml captures no CUDA graphs
  } else if (Contains(r.stack, "megatron") || StartsWith(r.stack, "nemo (") || StartsWith(r.stack, "nemo2") ||
             StartsWith(r.stack, "nemo 2")) {
    x.stack = spec::Stack::kNemo;
  } else if (Contains(r.stack, "llm-foundry") || Contains(r.stack, "automodel")) {
    x.stack = spec::Stack::kFsdp;
    // Benchmark runs timed per batch: they keep the per-iteration cost they
    // were timed with when it was the GPU's (the functional tests'); whether
    // their runs pay it is not established (docs/MODEL.md).
    x.iteration_overhead_s = kFunctionalTestIterationOverheadS;
  } else {
    return no("stack " + r.stack.substr(0, 24) + " not modelled");
  }
  // The model: a preset of the same MLP and architecture family, resized.
  std::string base = Contains(r.mlp, "swiglu") ? "llama3.1-8b" : StartsWith(r.mlp, "gelu") ? "gpt3-175b" : "nemotron4-15b";
  x.model = spec::LoadModel(base, "--model");
  spec::ModelSpec& m = x.model;
  m.name = r.id;
  m.num_layers = int(Int(r.layers));
  m.hidden_size = int(Int(r.hidden));
  m.num_attention_heads = int(Int(r.heads));
  m.num_query_groups = Int(r.kv_groups) > 0 ? int(Int(r.kv_groups)) : m.num_attention_heads;
  m.ffn_hidden_size = int(Int(r.ffn));
  m.head_dim = m.hidden_size / m.num_attention_heads;
  m.vocab_size = int(Vocab(r.vocab));
  m.seq_length = int(Int(r.seq));
  if (!r.moe.empty()) {
    // "E8/top2/moe_ffn" or "E64/top8/moe_ffn2048".
    if (r.moe[0] != 'E') return no("MoE description " + r.moe + " not parsed");
    m.num_experts = std::atoi(r.moe.c_str() + 1);
    size_t top = r.moe.find("top");
    size_t ffn = r.moe.find("moe_ffn");
    if (top == std::string::npos || ffn == std::string::npos) return no("MoE description " + r.moe + " not parsed");
    m.moe_router_topk = std::atoi(r.moe.c_str() + top + 3);
    m.moe_ffn_hidden_size = Int(r.moe.substr(ffn + 7)) > 0 ? int(Int(r.moe.substr(ffn + 7))) : m.ffn_hidden_size;
    m.moe_layers.assign(size_t(m.num_layers), 1);
  }
  if (Contains(r.mlp, "ALiBi")) m.position_embedding_type = spec::PositionEmbedding::kRope;  // no table (ALiBi)
  // The strategy.
  spec::Strategy& s = x.strategy;
  s.tp = Int(r.tp) > 0 ? int(Int(r.tp)) : 1;
  s.pp = Int(r.pp) > 0 ? int(Int(r.pp)) : 1;
  s.cp = Int(r.cp) > 0 ? int(Int(r.cp)) : 1;
  s.ep = Int(r.ep) > 0 ? int(Int(r.ep)) : 1;
  s.vp = Int(r.vp) > 0 ? int(Int(r.vp)) : 1;
  x.gpus = Int(r.gpus);
  s.dp = x.gpus / (int64_t{s.tp} * s.pp * s.cp);
  s.micro_batch = Int(r.micro_batch);
  s.global_batch = Int(r.global_batch);
  if (s.micro_batch <= 0 || s.global_batch <= 0) return no("batch not stated");
  s.recompute = StartsWith(r.recompute, "full") ? spec::Recompute::kFull
                : StartsWith(r.recompute, "selective") ? spec::Recompute::kSelective
                                                       : spec::Recompute::kNone;
  s.precision = Contains(r.precision, "fp8") ? spec::Precision::kFp8 : spec::Precision::kBf16;
  s.sequence_parallel = x.megatron() && s.tp > 1;
  if (eager) s.cuda_graph_impl = spec::CudaGraphImpl::kNone;
  // The profile: NeMo's recipes bring the distributed optimizer and TP
  // overlap; Megatron-Core's functional tests pass
  // --use-distributed-optimizer but not --tp-comm-overlap; FSDP shards all.
  spec::ApplyStackDefaults(spec::StackProfileOf(x.stack), &s);
  if (x.stack == spec::Stack::kMegatronCore) s.dp_sharding = spec::DpSharding::kOptimizer;
  try {
    x.system = spec::LoadSystem(system, "--system");
    // Megatron-LM's GB200 functional tests run on 2 nodes x 4 GPUs.
    if (system == "gb200-nvl72") x.system.hb_domain_size = 4;
    spec::ValidateStrategy(m, x.gpus, s);
  } catch (const Error& e) {
    return no(std::string("not a valid railsim strategy: ") + e.what());
  }
  return x;
}

}  // namespace railsim::testutil
