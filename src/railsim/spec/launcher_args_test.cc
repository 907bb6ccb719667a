// Strategies written as Megatron-LM flags and NeMo overrides read back into
// the same strategies; the text of one by hand; the reader's errors.
#include "railsim/spec/launcher_args.h"

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/spec/pipeline_split.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::spec {
namespace {

// The fields a launcher carries (the MoE dispatch settings are railsim's).
void ExpectSameStrategy(const Strategy& a, const Strategy& b, const std::string& what) {
  EXPECT_EQ(a.tp, b.tp) << what;
  EXPECT_EQ(a.pp, b.pp) << what;
  EXPECT_EQ(a.dp, b.dp) << what;
  EXPECT_EQ(a.cp, b.cp) << what;
  EXPECT_EQ(a.ep, b.ep) << what;
  EXPECT_EQ(a.vp, b.vp) << what;
  EXPECT_EQ(a.micro_batch, b.micro_batch) << what;
  EXPECT_EQ(a.global_batch, b.global_batch) << what;
  EXPECT_EQ(a.recompute, b.recompute) << what;
  EXPECT_EQ(a.sequence_parallel, b.sequence_parallel) << what;
  EXPECT_EQ(a.dp_sharding, b.dp_sharding) << what;
  EXPECT_EQ(a.overlap_dp_comm, b.overlap_dp_comm) << what;
  EXPECT_EQ(a.grad_reduce_16bit, b.grad_reduce_16bit) << what;
  EXPECT_EQ(a.overlap_p2p_comm, b.overlap_p2p_comm) << what;
  EXPECT_EQ(a.tp_comm_overlap, b.tp_comm_overlap) << what;
  EXPECT_EQ(a.precision, b.precision) << what;
  EXPECT_EQ(a.attention, b.attention) << what;
}

// MakeStrategy with virtual pipeline stages.
Strategy Make(int tp, int pp, int64_t dp, int vp, int64_t micro, int64_t global) {
  Strategy s = testutil::MakeStrategy(tp, pp, dp, micro, global);
  s.vp = vp;
  return s;
}

TEST(LauncherArgsTest, EveryFieldRoundTrips) {
  const ModelSpec gpt = LoadModel("gpt3-175b", "--model");        // 96 layers
  const ModelSpec mixtral = LoadModel("mixtral-8x22b", "--model");  // 56 layers, 8 experts
  std::vector<std::pair<ModelSpec, Strategy>> cases;
  Strategy a = Make(8, 8, 16, 3, 1, 1536);  // 96 / (8 x 3): 4 layers per virtual stage
  a.sequence_parallel = a.tp_comm_overlap = true;
  a.dp_sharding = DpSharding::kOptimizer;
  a.recompute = Recompute::kSelective;
  cases.push_back({gpt, a});
  Strategy b = Make(4, 1, 64, 1, 2, 1024);
  b.recompute = Recompute::kFull;
  b.overlap_dp_comm = false;
  b.grad_reduce_16bit = true;
  b.precision = Precision::kFp8;
  b.attention = Attention::kClassic;
  cases.push_back({gpt, b});
  Strategy c = Make(2, 7, 8, 2, 1, 112);  // 56 layers / 7 stages / 2: 4 per virtual stage
  c.ep = 8;
  c.cp = 2;
  c.sequence_parallel = true;
  c.overlap_p2p_comm = false;
  cases.push_back({mixtral, c});
  Strategy d = Make(8, 12, 2, 2, 1, 96);  // 96 layers / 12 / 2 = 4
  d.dp_sharding = DpSharding::kOptimizer;
  cases.push_back({gpt, d});
  for (const auto& [model, s] : cases) {
    ValidateStrategy(model, s.gpus(), s);
    for (Launcher l : {Launcher::kMegatron, Launcher::kNemo}) {
      const std::string text = LauncherArgs(l, s, model);
      ExpectSameStrategy(s, ParseLauncherArgs(l, text, model, s.gpus()), text);
    }
  }
}

TEST(LauncherArgsTest, MegatronTextByHand) {
  const ModelSpec gpt = LoadModel("gpt3-175b", "--model");
  Strategy s = Make(8, 8, 16, 3, 1, 1536);
  s.sequence_parallel = s.tp_comm_overlap = true;
  s.dp_sharding = DpSharding::kOptimizer;
  s.recompute = Recompute::kSelective;
  EXPECT_EQ(
      "# Megatron-LM commit 000c4ac24f61159c138b0975def722c65245983c (flag names from megatron/training/arguments.py)\n"
      "# gpt3-175b: a timing run on mock data; to train, replace --mock-data, --tokenizer-type, --train-iters and --lr "
      "with the run's data, tokenizer and schedule (NullTokenizer adds one token to --vocab-size)\n"
      "--num-layers 96 \\\n--hidden-size 12288 \\\n--ffn-hidden-size 49152 \\\n--num-attention-heads 96 \\\n"
      "--kv-channels 128 \\\n--seq-length 2048 \\\n--max-position-embeddings 2048 \\\n"
      "--position-embedding-type learned_absolute \\\n--normalization LayerNorm \\\n--hidden-dropout 0.1 \\\n"
      "--attention-dropout 0.1 \\\n--tokenizer-type NullTokenizer \\\n--vocab-size 50257 \\\n--mock-data \\\n"
      "--train-iters 100 \\\n--lr 1.0e-4 \\\n"
      "--tensor-model-parallel-size 8 \\\n--pipeline-model-parallel-size 8 \\\n"
      "--num-virtual-stages-per-pipeline-rank 3 \\\n--context-parallel-size 1 \\\n"
      "--expert-model-parallel-size 1 \\\n--micro-batch-size 1 \\\n--global-batch-size 1536 \\\n"
      "--sequence-parallel \\\n--recompute-granularity selective \\\n--use-distributed-optimizer \\\n"
      "--overlap-grad-reduce \\\n--overlap-param-gather \\\n--tp-comm-overlap \\\n--bf16 \\\n--use-flash-attn\n",
      LauncherArgs(Launcher::kMegatron, s, gpt));
  // 96 layers on 7 stages: railsim's own split, 13, 14 x 5, 13, is
  // Megatron-Core's with 13 on the first and last stage, but not of 2
  // virtual stages (13 is odd): refused, not printed unlaunchable.
  Strategy uneven = Make(8, 7, 1, 2, 1, 14);
  EXPECT_EQ("Megatron-LM cannot split 96 layers over 7 stages of 2 virtual stages as railsim does (13, 14, 14, 14, "
            "14, 14, 13): Megatron-Core's middle stages hold equal shares, each stage's a multiple of the virtual "
            "stages; give --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers, or "
            "--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split",
            LauncherProblem(Launcher::kMegatron, uneven, gpt));
  uneven.vp = 1;
  EXPECT_NE(std::string::npos, LauncherArgs(Launcher::kMegatron, uneven, gpt)
                                   .find("--decoder-first-pipeline-num-layers 13 \\\n"
                                         "--decoder-last-pipeline-num-layers 13 \\\n"));
}

std::string ErrorOf(Launcher l, const std::string& text, int64_t gpus = 1024) {
  try {
    ParseLauncherArgs(l, text, LoadModel("gpt3-175b", "--model"), gpus);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(LauncherArgsTest, ErrorsNameTheLaunchersFlag) {
  const std::string batch = " --micro-batch-size 1 --global-batch-size 512";
  EXPECT_EQ(0u, ErrorOf(Launcher::kMegatron, "--tensor-model-parallel-size 7" + batch, 7 * 128)
                    .find("--tensor-model-parallel-size: expected a divisor of num_attention_heads 96"));
  EXPECT_EQ("--tensor-model-parallel-size: expected an integer in [1, 16777216], got 'x'",
            ErrorOf(Launcher::kMegatron, "--tensor-model-parallel-size x" + batch));
  EXPECT_EQ(0u, ErrorOf(Launcher::kMegatron, "--sequence-paralel" + batch)
                    .find("--sequence-paralel: unknown (did you mean '--sequence-parallel'?); expected one of "
                          "--tensor-model-parallel-size, "));
  EXPECT_EQ("--global-batch-size: required: the launchers need it",
            ErrorOf(Launcher::kMegatron, "--micro-batch-size 1"));
  EXPECT_EQ("--sequence-parallel: takes no value, got 'yes'",
            ErrorOf(Launcher::kMegatron, "--sequence-parallel yes" + batch));
  EXPECT_EQ("--tensor-model-parallel-size: tp x pp x cp = 3 does not divide the 1024 GPUs",
            ErrorOf(Launcher::kMegatron, "--tensor-model-parallel-size 3" + batch));
  EXPECT_EQ("megatron-args: expected a --flag, got 'tp=8'", ErrorOf(Launcher::kMegatron, "tp=8" + batch));
  EXPECT_EQ("model.sequence_parallel: expected true or false, got 'yes'",
            ErrorOf(Launcher::kNemo, "model.micro_batch_size=1 model.global_batch_size=512 model.sequence_parallel=yes"));
  EXPECT_EQ("model.micro_batch_size: given twice",
            ErrorOf(Launcher::kNemo, "model.micro_batch_size=1 model.micro_batch_size=2 model.global_batch_size=512"));
  EXPECT_EQ("model.activations_checkpoint_method: required with model.activations_checkpoint_granularity=full",
            ErrorOf(Launcher::kNemo, "model.micro_batch_size=1 model.global_batch_size=512 "
                                     "model.activations_checkpoint_granularity=full"));
  EXPECT_EQ("nemo-overrides: expected key=value, got '--tp'", ErrorOf(Launcher::kNemo, "--tp 8"));
}

}  // namespace
}  // namespace railsim::spec

namespace railsim::spec {
namespace {

TEST(LauncherArgsTest, BlockScaledFormatsAndBf16LayersRoundTripThroughMegatron) {
  // Megatron-LM's names (megatron/training/arguments.py): --fp8-recipe
  // mxfp8 with --fp8-format e4m3, --fp4-format e2m1 --fp4-recipe nvfp4,
  // --fp8-param-gather / --fp4-param-gather, --first-last-layers-bf16.
  const ModelSpec m = LoadModel("llama3-70b", "--model");
  Strategy s = testutil::MakeStrategy(2, 4, 8, 1, 256);
  s.sequence_parallel = true;
  s.precision = Precision::kMxfp8;
  s.low_precision_params = true;
  std::string text = LauncherArgs(Launcher::kMegatron, s, m);
  EXPECT_NE(std::string::npos, text.find("--fp8-format e4m3 \\\n--fp8-recipe mxfp8")) << text;
  EXPECT_NE(std::string::npos, text.find("--fp8-param-gather")) << text;
  Strategy back = ParseLauncherArgs(Launcher::kMegatron, text, m, 64);
  EXPECT_EQ(Precision::kMxfp8, back.precision);
  EXPECT_TRUE(back.low_precision_params);
  s.precision = Precision::kFp4;
  s.bf16_layers_at_start = 1;
  s.bf16_layers_at_end = 11;
  text = LauncherArgs(Launcher::kMegatron, s, m);
  EXPECT_NE(std::string::npos, text.find("--fp4-format e2m1 \\\n--fp4-recipe nvfp4")) << text;
  EXPECT_NE(std::string::npos, text.find("--fp4-param-gather")) << text;
  EXPECT_NE(std::string::npos,
            text.find("--first-last-layers-bf16 \\\n--num-layers-at-start-in-bf16 1 \\\n--num-layers-at-end-in-bf16 11"))
      << text;
  back = ParseLauncherArgs(Launcher::kMegatron, text, m, 64);
  EXPECT_EQ(Precision::kFp4, back.precision);
  EXPECT_EQ(1, back.bf16_layers_at_start);
  EXPECT_EQ(11, back.bf16_layers_at_end);
  // NeMo's megatron_gpt_config.yaml has no keys for them: refused, not dropped.
  try {
    LauncherArgs(Launcher::kNemo, s, m);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ("--format", e.where());
  }
}

TEST(LauncherArgsTest, CudaGraphImplRoundTripsThroughMegatronOnlyWhenStated) {
  // Megatron-LM's --cuda-graph-impl (arguments.py at the named commit):
  // written when the job states it, read back the same; NeMo has no key.
  const ModelSpec m = LoadModel("llama3-70b", "--model");
  Strategy s = testutil::MakeStrategy(2, 4, 8, 1, 256);
  EXPECT_EQ(std::string::npos, LauncherArgs(Launcher::kMegatron, s, m).find("--cuda-graph-impl"));
  EXPECT_FALSE(ParseLauncherArgs(Launcher::kMegatron, LauncherArgs(Launcher::kMegatron, s, m), m, 64).cuda_graph_impl);
  for (CudaGraphImpl c : {CudaGraphImpl::kNone, CudaGraphImpl::kLocal, CudaGraphImpl::kTransformerEngine}) {
    s.cuda_graph_impl = c;
    const std::string text = LauncherArgs(Launcher::kMegatron, s, m);
    EXPECT_NE(std::string::npos, text.find(std::string("--cuda-graph-impl ") + CudaGraphImplName(c))) << text;
    EXPECT_EQ(c, ParseLauncherArgs(Launcher::kMegatron, text, m, 64).cuda_graph_impl);
  }
  EXPECT_NE("", LauncherProblem(Launcher::kNemo, s, m));
}

TEST(LauncherArgsTest, ExpertTensorParallelSizeRoundTripsThroughMegatron) {
  // Megatron-LM's --expert-tensor-parallel-size (default: tp) is written when
  // the experts' tensor parallelism is not tp, and read back; a value that
  // breaks the folding rule is refused under the launcher's flag.
  const ModelSpec m = LoadModel("mixtral-8x22b", "--model");
  Strategy s = testutil::MakeStrategy(4, 1, 8, 1, 16);
  s.sequence_parallel = true;
  s.ep = 8;
  EXPECT_EQ(std::string::npos, LauncherArgs(Launcher::kMegatron, s, m).find("--expert-tensor-parallel-size"));
  s.etp = 1;
  const std::string text = LauncherArgs(Launcher::kMegatron, s, m);
  EXPECT_NE(std::string::npos, text.find("--expert-model-parallel-size 8 \\\n")) << text;
  EXPECT_NE(std::string::npos, text.find("--expert-tensor-parallel-size 1 \\\n")) << text;
  const Strategy back = ParseLauncherArgs(Launcher::kMegatron, text, m, 32);
  EXPECT_EQ(1, back.expert_tp());
  ExpectSameStrategy(s, back, text);
  try {
    ParseLauncherArgs(Launcher::kMegatron, text + " --expert-tensor-parallel-size 0", m, 32);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ("--expert-tensor-parallel-size: given twice", std::string(e.what()));
  }
  std::string wide = text;
  wide.replace(wide.find("--expert-tensor-parallel-size 1"), 31, "--expert-tensor-parallel-size 8");
  try {
    ParseLauncherArgs(Launcher::kMegatron, wide, m, 32);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ("--expert-tensor-parallel-size: expected ep x expert tensor-parallel size to divide tp x cp x dp = 32 "
              "(the expert layers fold onto the attention's GPUs, as in Megatron-Core), got 8 x 8 = 64; "
              "--expert-tensor-parallel-size 1 fits",
              std::string(e.what()));
  }
}

}  // namespace
}  // namespace railsim::spec

namespace railsim::spec {
namespace {

// Megatron-LM's argument names at the commit LauncherArgs names, copied from
// its megatron/training/arguments.py (tests/data/README.md).
std::set<std::string> MegatronLmArguments() {
  std::ifstream in(std::string(RAILSIM_SOURCE_DIR) + "/tests/data/megatron-arguments-000c4ac.txt");
  std::set<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') names.insert(line);
  }
  return names;
}

std::vector<std::string> FlagsOf(const std::string& text) {
  std::vector<std::string> flags;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("--")) flags.push_back(line.substr(0, line.find(' ')));
  }
  return flags;
}

// Jobs that between them print every flag MegatronArgs writes.
std::vector<std::pair<ModelSpec, Strategy>> EveryKindOfJob() {
  std::vector<std::pair<ModelSpec, Strategy>> jobs;
  Strategy a = testutil::MakeStrategy(8, 16, 8, 1, 256);  // Llama 3.1 405B as NVIDIA runs it
  a.vp = 8;
  a.microbatch_group_size_per_vp_stage = 32;
  a.sequence_parallel = a.tp_comm_overlap = true;
  a.account_for_embedding_in_pipeline_split = a.account_for_loss_in_pipeline_split = true;
  a.dp_sharding = DpSharding::kOptimizer;
  a.precision = Precision::kFp8;
  a.low_precision_params = true;
  a.cuda_graph_impl = CudaGraphImpl::kTransformerEngine;
  jobs.push_back({LoadModel("llama3-405b", "--model"), a});
  Strategy b = testutil::MakeStrategy(2, 1, 8, 1, 64);  // MLA, shared experts, dense first layers
  b.ep = 8;
  b.sequence_parallel = true;
  b.precision = Precision::kMxfp8;
  b.exp_avg_dtype = b.exp_avg_sq_dtype = MomentDtype::kBf16;
  b.main_grads_dtype = MainGradsDtype::kBf16;
  b.main_params_dtype = MainParamsDtype::kFp16;
  b.dp_sharding = DpSharding::kOptimizer;
  jobs.push_back({LoadModel("deepseek-v3", "--model"), b});
  Strategy c = testutil::MakeStrategy(2, 4, 8, 1, 256);  // NVFP4 with its bf16 layers, hybrid FSDP
  c.sequence_parallel = true;
  c.precision = Precision::kFp4;
  c.bf16_layers_at_end = 12;  // NVIDIA's NVFP4 recipe keeps about 15% (none by default)
  c.dp_sharding = DpSharding::kFull;
  c.fsdp_shard_group_size = 4;
  c.recompute = Recompute::kFull;
  c.attention = Attention::kClassic;
  c.decoder_first_pipeline_num_layers = c.decoder_last_pipeline_num_layers = 19;  // 19, 21, 21, 19
  jobs.push_back({LoadModel("llama3-70b", "--model"), c});
  Strategy d = testutil::MakeStrategy(1, 2, 4, 1, 64);  // qk norm, ZeRO-2, no overlaps
  d.ep = 4;
  d.cp = 2;
  d.dp_sharding = DpSharding::kGradients;
  d.overlap_dp_comm = d.overlap_p2p_comm = false;
  d.grad_reduce_16bit = true;
  jobs.push_back({LoadModel("qwen3-30b-a3b", "--model"), d});
  return jobs;
}

TEST(LauncherArgsTest, EveryMegatronFlagIsAnArgumentOfTheNamedMegatronLm) {
  const std::set<std::string> names = MegatronLmArguments();
  ASSERT_GT(names.size(), 500u);
  ASSERT_TRUE(names.contains("--num-virtual-stages-per-pipeline-rank"));
  ASSERT_FALSE(names.contains("--virtual-pipeline-model-parallel-size"));  // not an argument
  std::set<std::string> printed;
  for (const auto& [model, s] : EveryKindOfJob()) {
    ValidateStrategy(model, s.gpus(), s);
    const std::string text = LauncherArgs(Launcher::kMegatron, s, model);
    ASSERT_EQ(0u, text.find("# Megatron-LM commit 000c4ac24f61159c138b0975def722c65245983c")) << text;
    for (const std::string& flag : FlagsOf(text)) {
      EXPECT_TRUE(names.contains(flag)) << flag << " is not in Megatron-LM's arguments.py\n" << text;
      printed.insert(flag);
    }
  }
  for (const char* flag : {"--num-layers", "--group-query-attention", "--num-query-groups", "--seq-length",
                           "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
                           "--num-experts", "--moe-router-topk", "--moe-ffn-hidden-size", "--moe-layer-freq",
                           "--moe-shared-expert-intermediate-size", "--multi-latent-attention", "--q-lora-rank",
                           "--qk-layernorm", "--vocab-size", "--account-for-embedding-in-pipeline-split",
                           "--account-for-loss-in-pipeline-split", "--decoder-first-pipeline-num-layers",
                           "--decoder-last-pipeline-num-layers", "--num-virtual-stages-per-pipeline-rank",
                           "--fp8-param-gather", "--fp4-format", "--first-last-layers-bf16", "--use-megatron-fsdp",
                           "--num-distributed-optimizer-instances", "--use-precision-aware-optimizer",
                           "--cuda-graph-impl"}) {
    EXPECT_TRUE(printed.contains(flag)) << flag;
  }
}

TEST(LauncherArgsTest, CompleteMegatronArgumentsReadBackIntoTheJob) {
  for (const auto& [model, s] : EveryKindOfJob()) {
    const std::string text = LauncherArgs(Launcher::kMegatron, s, model);
    const Strategy back = ParseLauncherArgs(Launcher::kMegatron, text, model, s.gpus());
    ExpectSameStrategy(s, back, text);
    EXPECT_EQ(s.account_for_embedding_in_pipeline_split, back.account_for_embedding_in_pipeline_split) << text;
    EXPECT_EQ(s.account_for_loss_in_pipeline_split, back.account_for_loss_in_pipeline_split) << text;
    EXPECT_EQ(s.decoder_first_pipeline_num_layers, back.decoder_first_pipeline_num_layers) << text;
    EXPECT_EQ(s.decoder_last_pipeline_num_layers, back.decoder_last_pipeline_num_layers) << text;
    EXPECT_EQ(s.group_size(), back.group_size()) << text;
    EXPECT_EQ(s.shard_group(), back.shard_group()) << text;
    EXPECT_EQ(s.main_grads_dtype, back.main_grads_dtype) << text;
    EXPECT_EQ(s.main_params_dtype, back.main_params_dtype) << text;
    EXPECT_EQ(s.exp_avg_dtype, back.exp_avg_dtype) << text;
    EXPECT_EQ(s.low_precision_params, back.low_precision_params) << text;
    EXPECT_EQ(s.Bf16LayersAtEnd(model.num_layers), back.Bf16LayersAtEnd(model.num_layers)) << text;
  }
}

TEST(LauncherArgsTest, UnevenSplitsAsMegatronCoresFlags) {
  const ModelSpec m = LoadModel("llama3-405b", "--model");
  Strategy s = testutil::MakeStrategy(8, 16, 8, 1, 256);
  s.sequence_parallel = true;
  s.vp = 8;
  s.account_for_embedding_in_pipeline_split = s.account_for_loss_in_pipeline_split = true;
  EXPECT_NE(std::string::npos, LauncherArgs(Launcher::kMegatron, s, m)
                                   .find("--pipeline-model-parallel-size 16 \\\n"
                                         "--account-for-embedding-in-pipeline-split \\\n"
                                         "--account-for-loss-in-pipeline-split \\\n"
                                         "--num-virtual-stages-per-pipeline-rank 8 \\\n"));
  // railsim's own split of 126 layers over 16 stages (7, 8 x 14, 7) is
  // Megatron-Core's with 7 on the first and last stage.
  Strategy own = testutil::MakeStrategy(8, 16, 8, 1, 256);
  own.sequence_parallel = true;
  const std::string text = LauncherArgs(Launcher::kMegatron, own, m);
  EXPECT_NE(std::string::npos,
            text.find("--decoder-first-pipeline-num-layers 7 \\\n--decoder-last-pipeline-num-layers 7 \\\n"));
  const Strategy back = ParseLauncherArgs(Launcher::kMegatron, text, m, 1024);
  EXPECT_EQ(7, back.decoder_first_pipeline_num_layers);
  for (int r = 0; r < 16; ++r) EXPECT_EQ(LayersOnRank(own, 126, r), LayersOnRank(back, 126, r)) << r;
  // Deepseek-V3's 61 layers over 8 stages: 7, 8 x 5, 7, 7: unequal middle
  // stages, which Megatron-Core's flags cannot say.
  const ModelSpec deepseek = LoadModel("deepseek-v3", "--model");
  Strategy ds = testutil::MakeStrategy(1, 8, 8, 1, 64);
  ds.ep = 8;
  EXPECT_EQ("Megatron-LM cannot split 61 layers over 8 stages as railsim does (7, 8, 8, 8, 8, 8, 7, 7): "
            "Megatron-Core's middle stages hold equal shares; give --decoder-first-pipeline-num-layers and "
            "--decoder-last-pipeline-num-layers, or --account-for-embedding-in-pipeline-split and "
            "--account-for-loss-in-pipeline-split",
            LauncherProblem(Launcher::kMegatron, ds, deepseek));
  EXPECT_NE(std::string::npos,
            LauncherArgs(Launcher::kMegatron, testutil::MakeStrategy(1, 1, 8, 1, 64), deepseek)
                .find("--moe-layer-freq '([0]*3+[1]*58)' \\\n"));
  // NeMo's megatron_gpt_config.yaml has no keys for the split.
  EXPECT_EQ(0u, LauncherProblem(Launcher::kNemo, s, m).find("nemo-overrides have no keys for Megatron-Core's uneven"));
}

TEST(LauncherArgsTest, ModelFlagsReadBackMustDescribeTheModel) {
  const std::string batch = " --micro-batch-size 1 --global-batch-size 512";
  EXPECT_EQ("--hidden-size: expected the model's 12288, got 8192",
            ErrorOf(Launcher::kMegatron, "--hidden-size 8192" + batch));
  EXPECT_EQ("--swiglu: expected absent: the model does not have it",
            ErrorOf(Launcher::kMegatron, "--num-layers 96 --swiglu" + batch));
  EXPECT_EQ("--moe-layer-freq: applies to MoE models only (num_experts is 0)",
            ErrorOf(Launcher::kMegatron, "--moe-layer-freq 1" + batch));
  EXPECT_EQ("--max-position-embeddings: expected at least seq_length 2048, got 1024",
            ErrorOf(Launcher::kMegatron, "--max-position-embeddings 1024" + batch));
  EXPECT_EQ(0u, ErrorOf(Launcher::kMegatron, "--virtual-pipeline-model-parallel-size 2" + batch)
                    .find("--virtual-pipeline-model-parallel-size: unknown"));
  EXPECT_EQ("--num-layers-per-virtual-pipeline-stage: give it or --num-virtual-stages-per-pipeline-rank, not both",
            ErrorOf(Launcher::kMegatron,
                    "--num-layers-per-virtual-pipeline-stage 4 --num-virtual-stages-per-pipeline-rank 3" + batch));
  EXPECT_EQ("--decoder-first-pipeline-num-layers: expected the 82 layers left (96 - 7 - 7) to split evenly over the "
            "6 middle stages, at least one each",
            ErrorOf(Launcher::kMegatron,
                    "--pipeline-model-parallel-size 8 --decoder-first-pipeline-num-layers 7 "
                    "--decoder-last-pipeline-num-layers 7" + batch));
  // The run's flags are read, not checked; the virtual stages from layers
  // per virtual stage: 96 / (8 x 4) = 3.
  const Strategy s = ParseLauncherArgs(Launcher::kMegatron,
                                       "# a comment\n--pipeline-model-parallel-size 8 --mock-data --lr 3e-4 "
                                       "--tokenizer-type GPT2BPETokenizer --num-layers-per-virtual-pipeline-stage 4" +
                                           batch,
                                       LoadModel("gpt3-175b", "--model"), 256);
  EXPECT_EQ(3, s.vp);
}

}  // namespace
}  // namespace railsim::spec
