// The pipeline split against Megatron-Core's rules, worked out by hand from
// get_num_layers_to_build and get_transformer_layer_offset
// (megatron/core/transformer/transformer_block.py, transformer_layer.py),
// and the checks of its four flags, each message whole.
#include "railsim/spec/pipeline_split.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::spec {
namespace {

Strategy Pipeline(int pp, int vp, int64_t gpus = 0) {
  Strategy s = testutil::MakeStrategy(1, pp, 1, 1, 2 * pp);
  s.vp = vp;
  if (gpus > 0) s.dp = gpus / pp;
  s.global_batch = 2 * pp * s.dp;
  return s;
}

std::vector<int> RankLayers(const Strategy& s, int n) {
  std::vector<int> out;
  for (int r = 0; r < s.pp; ++r) out.push_back(LayersOnRank(s, n, r));
  return out;
}

std::string ErrorOf(const ModelSpec& m, const Strategy& s) {
  try {
    ValidateStrategy(m, s.gpus(), s);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(PipelineSplitTest, Llama405bOnSixteenStagesOfEightVirtualStagesCountsEmbeddingAndLoss) {
  // Llama 3.1 405B's 126 layers + the embedding + the loss = 128 slots over
  // 16 x 8 virtual stages: one each. Virtual stage v of rank r is chunk
  // g = 16 v + r; chunk 0 holds the embedding alone, chunk 127 the loss
  // alone, chunk g > 0 layer g - 1 (Megatron's offset v x 16 + r - 1).
  const ModelSpec m = LoadModel("llama3-405b", "--model");
  Strategy s = Pipeline(16, 8);
  EXPECT_EQ("--vp: expected at most 7 virtual stages (each needs a layer; 126 layers over 16 stages), got 8; "
            "Megatron-Core's --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split or "
            "--decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers split otherwise",
            ErrorOf(m, s));
  s.account_for_embedding_in_pipeline_split = s.account_for_loss_in_pipeline_split = true;
  ValidateStrategy(m, s.gpus(), s);
  const std::vector<LayerRange> chunks = PipelineChunks(s, 126);
  ASSERT_EQ(128u, chunks.size());
  EXPECT_EQ(0, chunks[0].count);                           // rank 0, virtual stage 0: the embedding
  EXPECT_EQ(0, chunks[1].first);                           // rank 1, virtual stage 0: layer 0
  EXPECT_EQ(1, chunks[1].count);
  EXPECT_EQ(15, chunks[16].first);                         // rank 0, virtual stage 1: 16 - 1
  EXPECT_EQ(52, chunks[3 * 16 + 5].first);                 // rank 5, virtual stage 3: 3 x 16 + 5 - 1
  EXPECT_EQ(125, chunks[7 * 16 + 14].first);               // rank 14, the last virtual stage: layer 125
  EXPECT_EQ(0, chunks[127].count);                         // rank 15's last: the loss
  std::vector<int> want(16, 8);
  want.front() = want.back() = 7;  // as Meta trained it: one layer fewer on the first and last stage
  EXPECT_EQ(want, RankLayers(s, 126));
}

TEST(PipelineSplitTest, FirstAndLastStageLayersShareTheRestOverTheMiddle) {
  // 126 layers, 16 stages, 7 on the first and the last: 112 / 14 = 8 each
  // in the middle; rank r > 0 starts at 7 + 8 (r - 1).
  Strategy s = Pipeline(16, 1);
  s.decoder_first_pipeline_num_layers = s.decoder_last_pipeline_num_layers = 7;
  ASSERT_FALSE(CheckPipelineSplit(s, 126));
  std::vector<int> want(16, 8);
  want.front() = want.back() = 7;
  EXPECT_EQ(want, RankLayers(s, 126));
  const std::vector<LayerRange> chunks = PipelineChunks(s, 126);
  EXPECT_EQ(7, chunks[1].first);
  EXPECT_EQ(119, chunks[15].first);
  // Interleaved: 64 layers, 4 stages of 2 virtual stages, 8 first and last,
  // (64 - 16) / 2 = 24 on each middle rank. Per virtual stage 4, 12, 12, 4
  // (32 a round); Megatron's offset v x 32 + 4 + 12 (r - 1) for r > 0.
  Strategy v = Pipeline(4, 2);
  v.decoder_first_pipeline_num_layers = v.decoder_last_pipeline_num_layers = 8;
  ASSERT_FALSE(CheckPipelineSplit(v, 64));
  const std::vector<LayerRange> interleaved = PipelineChunks(v, 64);
  EXPECT_EQ(4, interleaved[0].count);
  EXPECT_EQ(12, interleaved[1].count);
  EXPECT_EQ(32 + 4 + 12, interleaved[4 + 2].first);  // rank 2, virtual stage 1
  EXPECT_EQ(32 + 28, interleaved[4 + 3].first);      // rank 3, virtual stage 1
  EXPECT_EQ((std::vector<int>{8, 24, 24, 8}), RankLayers(v, 64));
  // Only the last given: the first rank is a middle one, (64 - 4) / 3 = 20.
  Strategy last = Pipeline(4, 1);
  last.decoder_last_pipeline_num_layers = 4;
  EXPECT_EQ((std::vector<int>{20, 20, 20, 4}), RankLayers(last, 64));
}

TEST(PipelineSplitTest, EmbeddingAndLossAccountingMovesLayersAsMegatronDoes) {
  // 7 layers on 4 stages. railsim's own split: 7 = 4 + 3, the remainder to
  // the middle then the first: 2, 2, 2, 1. With the embedding counted, 8
  // slots of 2: the first rank holds the embedding and one layer: 1, 2, 2, 2.
  Strategy s = Pipeline(4, 1);
  EXPECT_EQ((std::vector<int>{2, 2, 2, 1}), RankLayers(s, 7));
  s.account_for_embedding_in_pipeline_split = true;
  ASSERT_FALSE(CheckPipelineSplit(s, 7));
  EXPECT_EQ((std::vector<int>{1, 2, 2, 2}), RankLayers(s, 7));
  // The loss too on 6 layers: 8 slots, 1, 2, 2, 1.
  s.account_for_loss_in_pipeline_split = true;
  EXPECT_EQ((std::vector<int>{1, 2, 2, 1}), RankLayers(s, 6));
  // ... and the loss alone: 7 slots do not split over 4.
  s.account_for_embedding_in_pipeline_split = false;
  ASSERT_TRUE(CheckPipelineSplit(s, 6));
  EXPECT_EQ("expected --pp to divide the 7 layers of the split (6 + the loss), got 4",
            CheckPipelineSplit(s, 6)->message);
  EXPECT_STREQ("--account-for-loss-in-pipeline-split", CheckPipelineSplit(s, 6)->flag);
}

TEST(PipelineSplitTest, MegatronCoresChecksOfTheFlags) {
  const ModelSpec m = LoadModel("llama3-405b", "--model");  // 126 layers
  auto with = [](Strategy s, int first, int last) {
    s.decoder_first_pipeline_num_layers = first;
    s.decoder_last_pipeline_num_layers = last;
    return s;
  };
  EXPECT_EQ("--decoder-first-pipeline-num-layers: expected a multiple of --vp 8 (each virtual stage holds the same "
            "share), got 7",
            ErrorOf(m, with(Pipeline(16, 8), 7, 7)));
  EXPECT_EQ("--decoder-first-pipeline-num-layers: expected the 113 layers left (126 - 6 - 7) to split evenly over "
            "the 14 middle stages, at least one each",
            ErrorOf(m, with(Pipeline(16, 1), 6, 7)));
  EXPECT_EQ("--decoder-first-pipeline-num-layers: expected the first and last stages' layers to add up to exactly "
            "num_layers 126 with --pp 2, got 60 + 60 = 120",
            ErrorOf(m, with(Pipeline(2, 1), 60, 60)));
  EXPECT_EQ("--decoder-last-pipeline-num-layers: expected the first and last stages' layers to add up to less than "
            "num_layers 126 with --pp 4, got 0 + 127 = 127",
            ErrorOf(m, with(Pipeline(4, 1), 0, 127)));
  EXPECT_EQ("--decoder-first-pipeline-num-layers: applies to --pp 2 or more, got 1",
            ErrorOf(m, with(Pipeline(1, 1), 126, 0)));
  Strategy both = with(Pipeline(16, 1), 7, 7);
  both.account_for_embedding_in_pipeline_split = true;
  EXPECT_EQ("--decoder-first-pipeline-num-layers: cannot be combined with --account-for-embedding-in-pipeline-split "
            "or --account-for-loss-in-pipeline-split (Megatron-Core refuses both)",
            ErrorOf(m, both));
  EXPECT_EQ("--decoder-last-pipeline-num-layers: expected a positive integer, got -2",
            ErrorOf(m, with(Pipeline(16, 1), 0, -2)));
  // 126 + 2 = 128 slots over 16 stages of 8 each, not of 3 virtual stages.
  Strategy accounted = Pipeline(16, 3);
  accounted.account_for_embedding_in_pipeline_split = accounted.account_for_loss_in_pipeline_split = true;
  EXPECT_EQ("--vp: expected a divisor of the 8 layers per stage of the split (126 + the embedding + the loss over 16 "
            "stages), got 3",
            ErrorOf(m, accounted));
  // A middle rank's share must split over the virtual stages too: (126 - 4
  // - 4) / 2 = 59 layers on each of the 2 middle ranks.
  Strategy middle = with(Pipeline(4, 4), 4, 4);
  EXPECT_EQ("--vp: expected a divisor of the 59 layers on each middle stage, got 4", ErrorOf(m, middle));
}

}  // namespace
}  // namespace railsim::spec
