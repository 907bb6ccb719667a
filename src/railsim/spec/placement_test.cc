// Placements: rank orders, placement files, and the GPU each rank lands on.
#include "railsim/spec/placement.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::spec {
namespace {

Strategy Degrees(int tp, int cp, int ep, int64_t dp, int pp) {
  Strategy s;
  s.tp = tp;
  s.cp = cp;
  s.ep = ep;
  s.dp = dp;
  s.pp = pp;
  return s;
}

TEST(PlacementTest, OrdersFillInCpAndEpWhereMegatronPutsThem) {
  EXPECT_EQ(ParseRankOrder("tp-cp-ep-dp-pp", "--placement").Name(), "tp-cp-ep-dp-pp");
  EXPECT_TRUE(ParseRankOrder("tp-dp-pp", "--placement").is_default());
  EXPECT_EQ(ParseRankOrder("dp-tp-pp", "--placement").Name(), "ep-dp-tp-cp-pp");
  EXPECT_EQ(ParseRankOrder("pp-tp-cp-dp", "--placement").Name(), "pp-tp-cp-ep-dp");
  for (const char* bad : {"tp-dp", "tp-tp-dp-pp", "tp-xp-dp-pp", "", "tp--dp-pp", "tp-dp-pp-"}) {
    EXPECT_THROW(ParseRankOrder(bad, "--placement"), Error) << bad;
  }
}

TEST(PlacementTest, DefaultOrderIsTheMegatronRank) {
  Strategy s = Degrees(4, 2, 2, 4, 3);  // 96 GPUs
  Placement p;
  std::vector<int32_t> gpus = GpuOfEveryRank(p, s);
  for (int32_t r = 0; r < 96; ++r) EXPECT_EQ(gpus[size_t(r)], r);
}

TEST(PlacementTest, OrderStridesAreProductsOfFasterDegrees) {
  Strategy s = Degrees(8, 1, 1, 4, 2);
  Placement p;
  p.order = ParseRankOrder("dp-tp-pp", "--placement");
  EXPECT_EQ(DimStride(p.order, s, Dim::kDp), 1);
  EXPECT_EQ(DimStride(p.order, s, Dim::kTp), 4);
  EXPECT_EQ(DimStride(p.order, s, Dim::kPp), 32);
  // Rank (tp 3, dp 2, pp 1) of dp-tp-pp: 2 + 4 x 3 + 32 x 1.
  EXPECT_EQ(GpuOf(p, s, {3, 0, 0, 2, 1}), 46);
  std::vector<int32_t> gpus = GpuOfEveryRank(p, s);
  std::vector<bool> seen(64, false);
  for (int32_t g : gpus) seen[size_t(g)] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 64);
}

TEST(PlacementTest, FilesRoundTripAndAreValidated) {
  PlacementMap m;
  m.tp = 2;
  m.dp = 2;
  m.pp = 2;
  m.gpu_of_rank = {7, 6, 5, 4, 3, 2, 1, 0};
  PlacementMap back = ParsePlacementJson(PlacementJson(m));
  EXPECT_EQ(back.gpu_of_rank, m.gpu_of_rank);
  Placement p;
  p.map = std::make_shared<PlacementMap>(back);
  Strategy s = Degrees(2, 1, 1, 2, 2);
  EXPECT_NO_THROW(ValidatePlacement(p, s, "--placement"));
  EXPECT_EQ(GpuOf(p, s, {1, 0, 0, 1, 1}), 0);  // rank 1 + 2 (1 + 2 x 1) = 7
  EXPECT_THROW(ValidatePlacement(p, Degrees(4, 1, 1, 1, 2), "--placement"), Error);

  auto error_at = [](const std::string& text) {
    try {
      ParsePlacementJson(text);
    } catch (const Error& e) {
      return e.where();
    }
    return std::string("no error");
  };
  const std::string head = R"({"degrees": {"tp": 2, "dp": 1, "pp": 1}, "ranks": [)";
  EXPECT_EQ(error_at(head + R"({"tp": 0, "dp": 0, "pp": 0, "gpu": 1}, {"tp": 1, "dp": 0, "pp": 0, "gpu": 1}]})"),
            "/ranks/1/gpu");
  EXPECT_EQ(error_at(head + R"({"tp": 0, "dp": 0, "pp": 0, "gpu": 1}, {"tp": 0, "dp": 0, "pp": 0, "gpu": 0}]})"),
            "/ranks/1");
  EXPECT_EQ(error_at(head + R"({"tp": 0, "dp": 0, "pp": 0, "gpu": 2}, {"tp": 1, "dp": 0, "pp": 0, "gpu": 0}]})"),
            "/ranks/0/gpu");
  EXPECT_EQ(error_at(head + R"({"tp": 2, "dp": 0, "pp": 0, "gpu": 1}, {"tp": 1, "dp": 0, "pp": 0, "gpu": 0}]})"),
            "/ranks/0/tp");
  EXPECT_EQ(error_at(head + R"({"tp": 0, "dp": 0, "pp": 0, "gpu": 1}]})"), "/ranks");
  EXPECT_EQ(error_at(R"({"degrees": {"tp": 2, "dp": 3, "pp": 1, "ep": 4}, "ranks": []})"), "/degrees/ep");
  EXPECT_EQ(error_at(R"({"degrees": {"tp": 16777216, "dp": 16777216, "pp": 1}, "ranks": []})"), "/degrees");
}

TEST(PlacementTest, ExpertGridFoldsOntoTheSameGpus) {
  // tp 2, cp 2, dp 4 (16 GPUs a stage), pp 2; ep 8 with etp 1: expert-dp
  // 16 / 8 = 2. Megatron-Core's expert generator, etp-ep-edp-pp: rank 21 is
  // etp 0, ep 5, edp 0, pp 1 (5 + 8 x (0 + 2 x 1)); the attention's
  // tp-cp-dp-pp reads it as tp 1, cp 0, dp 1, pp 1 (1 + 2 x (0 + 2 x (1 + 4 x 1))).
  Strategy s = Degrees(2, 2, 8, 4, 2);
  s.etp = 1;
  EXPECT_EQ((std::array<int64_t, kDims>{1, 1, 8, 2, 2}), DimDegrees(s, Layers::kExpert));
  EXPECT_EQ((std::array<int64_t, kDims>{2, 2, 1, 4, 2}), DimDegrees(s));
  EXPECT_EQ((std::array<int64_t, kDims>{0, 0, 5, 0, 1}), RankIndices(21, s, Layers::kExpert));
  EXPECT_EQ((std::array<int64_t, kDims>{1, 0, 0, 1, 1}), RankIndices(21, s));
  Placement p;
  EXPECT_EQ(21, GpuOf(p, s, {0, 0, 5, 0, 1}, Layers::kExpert));
  // Another order places both grids by it: dp-tp-pp (ep-dp-tp-cp-pp) puts
  // ep fastest in the experts' grid and dp in the attention's.
  p.order = ParseRankOrder("dp-tp-pp", "--placement");
  EXPECT_EQ(1, DimStride(p.order, s, Dim::kEp, Layers::kExpert));
  EXPECT_EQ(8, DimStride(p.order, s, Dim::kDp, Layers::kExpert));
  EXPECT_EQ(1, DimStride(p.order, s, Dim::kDp));
  EXPECT_EQ(16, DimStride(p.order, s, Dim::kPp, Layers::kExpert));
  EXPECT_EQ(16, DimStride(p.order, s, Dim::kPp));
  EXPECT_NO_THROW(ValidatePlacement(p, s, "--placement"));
  // A placement file maps Megatron's global ranks: the expert tuple of rank
  // 21 lands where the file puts rank 21.
  PlacementMap m;
  m.tp = 2, m.cp = 2, m.ep = 8, m.dp = 4, m.pp = 2;
  for (int32_t r = 0; r < 32; ++r) m.gpu_of_rank.push_back(31 - r);
  p.map = std::make_shared<PlacementMap>(m);
  EXPECT_EQ(10, GpuOf(p, s, {0, 0, 5, 0, 1}, Layers::kExpert));
}

TEST(PlacementTest, OrdersKeepMegatronCoresTwoFoldingChecks) {
  // tp 2, dp 8, pp 2, ep 8, etp 1: expert-dp 2, not dp 8.
  Strategy s = Degrees(2, 1, 8, 8, 2);
  s.etp = 1;
  auto error = [&](const std::string& order) {
    Placement p;
    p.order = ParseRankOrder(order, "--placement");
    try {
      ValidatePlacement(p, s, "--placement");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ("no error", error("tp-cp-ep-dp-pp"));
  EXPECT_EQ("--placement: order tp-cp-pp-ep-dp does not end in pp, so Megatron-Core needs the expert data-parallel "
            "size tp x cp x dp / (ep x etp) = 2 to equal dp 8; put pp last",
            error("tp-pp-dp"));
  // ep 2, etp 1: expert-dp 8 = dp, but ep (degree 1 in the attention's
  // grid, 2 in the experts') comes before pp: the stages would differ.
  s.ep = 2;
  EXPECT_EQ("--placement: order ep-pp-tp-cp-dp puts the expert layers' pipeline stages 2 GPUs apart and the "
            "attention's 1; Megatron-Core needs the same pipeline groups; put pp last",
            error("ep-pp-tp-dp"));
  // A dense layout (ep 1, etp = tp) has no expert grid of its own to check.
  s.ep = 1;
  s.etp = 0;
  EXPECT_EQ("no error", error("tp-pp-dp"));
}

}  // namespace
}  // namespace railsim::spec
