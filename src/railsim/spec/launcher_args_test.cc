// Strategies written as Megatron-LM flags and NeMo overrides read back into
// the same strategies; the text of one by hand; the reader's errors.
#include "railsim/spec/launcher_args.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/strategy_test_util.h"

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
      "--tensor-model-parallel-size 8 \\\n--pipeline-model-parallel-size 8 \\\n"
      "--num-layers-per-virtual-pipeline-stage 4 \\\n--context-parallel-size 1 \\\n"
      "--expert-model-parallel-size 1 \\\n--micro-batch-size 1 \\\n--global-batch-size 1536 \\\n"
      "--sequence-parallel \\\n--recompute-granularity selective \\\n--use-distributed-optimizer \\\n"
      "--overlap-grad-reduce \\\n--overlap-param-gather \\\n--tp-comm-overlap \\\n--bf16 \\\n--use-flash-attn\n",
      LauncherArgs(Launcher::kMegatron, s, gpt));
  // 96 layers do not split into 7 x 2 virtual stages evenly: the count of
  // virtual stages is written instead.
  Strategy uneven = Make(8, 7, 1, 2, 1, 14);
  EXPECT_NE(std::string::npos,
            LauncherArgs(Launcher::kMegatron, uneven, gpt).find("--virtual-pipeline-model-parallel-size 2 \\\n"));
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
