// Parameter counts of the MoE presets against their published totals and
// active counts, and the MoE keys' effect on them by hand.
#include "railsim/perf/model_stats.h"

#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

TEST(ModelStatsTest, MoePresetsMatchTheirPublishedParameterCounts) {
  // Totals within 1%. DeepSeek-V3's "37B activated" has two significant
  // figures: counting every matrix a token uses (embedding and output layer
  // included, as the totals do) gives 37.55B, +1.5%; leaving the embedding
  // lookup out gives 36.63B, -1.0%. Its active count is held to 1.5%.
  struct Published {
    const char* preset;
    double total, active;  // as their model cards state them
    double active_tolerance;
  };
  for (Published p : {Published{"deepseek-v3", 671e9, 37e9, 0.015}, Published{"qwen3-235b-a22b", 235e9, 22e9, 0.01},
                      Published{"mixtral-8x22b", 141e9, 39e9, 0.01}}) {
    ParamCounts c = CountParams(spec::LoadModel(p.preset, "--model"));
    std::printf("  %s: total %.2fB (published %.0fB, %+.2f%%), active %.2fB (published %.0fB, %+.2f%%)\n", p.preset,
                c.total / 1e9, p.total / 1e9, 100 * (c.total / p.total - 1), c.active / 1e9, p.active / 1e9,
                100 * (c.active / p.active - 1));
    EXPECT_NEAR(p.total, c.total, 0.01 * p.total) << p.preset;
    EXPECT_NEAR(p.active, c.active, p.active_tolerance * p.active) << p.preset;
  }
}

// DeepSeek-V3's latent attention per layer, by hand: q 7168 x 1536 +
// 1536 x 128 x 192; kv 7168 x (512 + 64) + 512 x 128 x (128 + 128); out
// 128 x 128 x 7168. Three dense layers of width 18432; 58 MoE layers of 256
// experts of width 2048, a shared one and a 7168 x 256 router.
TEST(ModelStatsTest, LatentAttentionAndDenseLayersByHand) {
  spec::ModelSpec m = spec::LoadModel("deepseek-v3", "--model");
  ParamCounts c = CountParams(m);
  const double q = 7168.0 * 1536 + 1536.0 * 128 * 192;
  const double kv = 7168.0 * 576 + 512.0 * 128 * 256;
  const double out = 128.0 * 128 * 7168;
  EXPECT_DOUBLE_EQ(q + kv + out, c.attention_per_layer);
  EXPECT_EQ(3, c.dense_layers);
  EXPECT_EQ(58, c.moe_layers);
  EXPECT_DOUBLE_EQ(3.0 * 7168 * 18432, c.dense_mlp_per_layer);
  EXPECT_DOUBLE_EQ(3.0 * 7168 * 2048, c.expert);
  EXPECT_DOUBLE_EQ(257 * 3.0 * 7168 * 2048 + 7168.0 * 256, c.mlp_per_layer);
  // Forward FLOPs of a token: twice the weights it uses, plus attention scores.
  const double s = m.seq_length;
  const double moe_layer = 2 * s * (q + kv + out + 9 * 3.0 * 7168 * 2048 + 7168.0 * 256) +
                           2 * s * s * 128 * (192 + 128);
  EXPECT_DOUBLE_EQ(moe_layer, LayerForwardFlops(m, true, ScoreSquare::kFull));
}

}  // namespace
}  // namespace railsim::perf
