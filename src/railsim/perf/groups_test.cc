// Where the groups of a strategy sit: the expert layers folded onto the
// attention's GPUs (MoE parallel folding), hand-checked member by member.
#include "railsim/perf/groups.h"

#include <vector>

#include <gtest/gtest.h>

#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

// Mixtral 8x22B (8 experts) on 16 GPUs of two 8-GPU domains: tp 2, dp 8.
PerfContext SixteenGpus() {
  return MakePerfContext(spec::LoadModel("mixtral-8x22b", "--model"), spec::LoadSystem("dgx-h100", "--system"), 16,
                         comm::NetworkKind::kRailOptimized);
}

spec::Strategy Tp2Ep8(int etp) {
  spec::Strategy s;
  s.tp = 2;
  s.dp = 8;
  s.ep = 8;
  s.etp = etp;
  s.sequence_parallel = true;
  s.global_batch = 8;
  return s;
}

// The members of every group of `kind`, one vector per group.
std::vector<std::vector<int64_t>> Groups(const PerfContext& c, const spec::Strategy& s, GroupKind kind) {
  const GroupMembers m = MembersOf(c, s, kind);
  std::vector<std::vector<int64_t>> out;
  for (int64_t g = 0; g < m.count; ++g) {
    out.emplace_back(m.gpus.begin() + g * m.size, m.gpus.begin() + (g + 1) * m.size);
  }
  return out;
}

TEST(GroupsTest, FoldedExpertGroupsWithExpertTpEqualToTp) {
  // ep 8 x etp 2 = 16 = tp x dp: Megatron-Core's expert rank generator
  // (etp-ep-edp-pp) puts etp fastest, so an EP group is every other GPU and
  // each expert is held once (expert-dp 1). Today's rule (ep divides dp 8)
  // gives the same groups: nothing moves when ep divides dp.
  const PerfContext c = SixteenGpus();
  const spec::Strategy s = Tp2Ep8(0);
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 16, s));
  EXPECT_EQ(1, s.expert_dp());
  const std::vector<std::vector<int64_t>> ep = {{0, 2, 4, 6, 8, 10, 12, 14}, {1, 3, 5, 7, 9, 11, 13, 15}};
  EXPECT_EQ(ep, Groups(c, s, GroupKind::kEp));
  const GroupMembers expert_dp = MembersOf(c, s, GroupKind::kExpertDp);
  EXPECT_EQ(1, expert_dp.size);
  EXPECT_EQ(16, expert_dp.count);
  // The expert tensor-parallel groups are the attention's: {0, 1}, {2, 3}, ...
  EXPECT_TRUE(ExpertTpIsTp(c, s));
  EXPECT_EQ(Groups(c, s, GroupKind::kTp), Groups(c, s, GroupKind::kEtp));
  EXPECT_EQ((std::vector<int64_t>{2, 3}), Groups(c, s, GroupKind::kTp)[1]);
}

TEST(GroupsTest, FoldedExpertGroupsWithExpertTpOne) {
  // etp 1: an EP group is 8 consecutive GPUs, one HB domain (it spans the
  // attention's tp and dp ranks), and the 16 / 8 = 2 copies of each expert
  // reduce their gradients across the two domains: {g, g + 8}.
  const PerfContext c = SixteenGpus();
  const spec::Strategy s = Tp2Ep8(1);
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 16, s));
  EXPECT_EQ(2, s.expert_dp());
  const std::vector<std::vector<int64_t>> ep = {{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}};
  EXPECT_EQ(ep, Groups(c, s, GroupKind::kEp));
  const std::vector<std::vector<int64_t>> expert_dp = {{0, 8}, {1, 9}, {2, 10}, {3, 11},
                                                       {4, 12}, {5, 13}, {6, 14}, {7, 15}};
  EXPECT_EQ(expert_dp, Groups(c, s, GroupKind::kExpertDp));
  EXPECT_FALSE(ExpertTpIsTp(c, s));
  EXPECT_EQ(1, MembersOf(c, s, GroupKind::kEtp).size);
  // The attention's groups do not move: dp is every other GPU.
  EXPECT_EQ((std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14}), Groups(c, s, GroupKind::kDp)[0]);
  // The layouts the model times: the EP group inside one domain of 8.
  const ParallelGroups layouts = PlaceGroups(c, s);
  EXPECT_EQ(1, layouts[GroupKind::kEp].domains);
  EXPECT_EQ(2, layouts[GroupKind::kExpertDp].domains);
  EXPECT_EQ(2, PlaceGroups(c, Tp2Ep8(0))[GroupKind::kEp].domains);
}

TEST(GroupsTest, PlacementCheckListsTheExpertTpGroupOnlyWhenItIsNotTp) {
  const PerfContext c = SixteenGpus();
  auto kinds = [&](const spec::Strategy& s) {
    std::vector<GroupKind> out;
    for (const GroupCheck& g : CheckPlacement(c, s)) out.push_back(g.kind);
    return out;
  };
  // etp = tp: tp, ep, dp (expert-dp has one member); etp 1: ep, dp and
  // expert-dp (etp has one member).
  EXPECT_EQ((std::vector<GroupKind>{GroupKind::kTp, GroupKind::kEp, GroupKind::kDp}), kinds(Tp2Ep8(0)));
  EXPECT_EQ((std::vector<GroupKind>{GroupKind::kTp, GroupKind::kEp, GroupKind::kDp, GroupKind::kExpertDp}),
            kinds(Tp2Ep8(1)));
  spec::Strategy etp4 = Tp2Ep8(4);
  etp4.ep = 4;
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 16, etp4));
  EXPECT_EQ((std::vector<GroupKind>{GroupKind::kTp, GroupKind::kEp, GroupKind::kDp, GroupKind::kEtp}), kinds(etp4));
}

TEST(GroupsTest, Tp2Pp8Ep32On256GpusFoldsEachStagesExpertsOntoItsGpus) {
  // DeepSeek-V3 (256 experts) with --tp 2 --pp 8 --ep 32 on 256 GPUs: dp
  // 256 / (2 x 8) = 16, which ep 32 does not divide. A stage is 32
  // consecutive GPUs (tp-cp-dp-pp, tp fastest). With etp 1 the experts' grid
  // (etp-ep-edp-pp) is ep 32 x edp 1 x pp 8, so stage p's EP group is GPUs
  // 32p .. 32p + 31: the attention's 2 tp x 16 dp ranks of that stage, and
  // each expert is held once (expert-dp 1).
  const PerfContext c = MakePerfContext(spec::LoadModel("deepseek-v3", "--model"),
                                        spec::LoadSystem("dgx-h100", "--system"), 256,
                                        comm::NetworkKind::kRailOptimized);
  spec::Strategy s;
  s.tp = 2;
  s.pp = 8;
  s.dp = 16;
  s.ep = 32;
  s.etp = 1;
  s.sequence_parallel = true;
  s.global_batch = 1024;
  ASSERT_TRUE(spec::IsValidStrategy(c.model, 256, s));
  EXPECT_EQ(1, s.expert_dp());
  const std::vector<std::vector<int64_t>> ep = Groups(c, s, GroupKind::kEp);
  ASSERT_EQ(8u, ep.size());
  for (int64_t p = 0; p < 8; ++p) {
    std::vector<int64_t> stage;
    for (int64_t g = 32 * p; g < 32 * (p + 1); ++g) stage.push_back(g);
    EXPECT_EQ(stage, ep[size_t(p)]) << "stage " << p;
  }
  const GroupMembers expert_dp = MembersOf(c, s, GroupKind::kExpertDp);
  EXPECT_EQ(1, expert_dp.size);
  EXPECT_EQ(256, expert_dp.count);
  // The attention's groups are Megatron's usual ones: tp {0, 1}, dp every
  // other GPU of the stage, the pipeline 32 apart.
  EXPECT_EQ((std::vector<int64_t>{0, 1}), Groups(c, s, GroupKind::kTp)[0]);
  EXPECT_EQ((std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30}),
            Groups(c, s, GroupKind::kDp)[0]);
  EXPECT_EQ((std::vector<int64_t>{0, 32, 64, 96, 128, 160, 192, 224}), Groups(c, s, GroupKind::kPp)[0]);
  // Timed on DGX H100's 8-GPU domains an EP group spans 32 / 8 = 4 of them;
  // in a 64-GPU NVLink domain (16 trays of an NVL72 rack) it spans one.
  EXPECT_EQ(4, PlaceGroups(c, s)[GroupKind::kEp].domains);
  const PerfContext rack = MakePerfContext(c.model, spec::LoadSystem("gb200-nvl72", "--system"), 256,
                                           comm::NetworkKind::kRailOptimized, 64);
  EXPECT_EQ(1, PlaceGroups(rack, s)[GroupKind::kEp].domains);
}

}  // namespace
}  // namespace railsim::perf
