// Plans' building blocks against what they stand for: a group family's
// groups against the ranks they cover, and the tree-edge count the analytic
// load uses against NCCL's trees as ForEachFlow lists them.
#include "railsim/comm/plan.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace railsim::comm {
namespace {

// Tiles(N) says whether the family's N / size groups hold every rank below N
// exactly once. Checked against the groups themselves for every family on
// 1-96 ranks. The tied embedding's pair (first and last stage: size 2,
// stride 56 for tp 8, pp 8) does not tile 64 GPUs: its ninth group reaches
// rank 64.
TEST(GroupFamilyTest, TilesExactlyWhenTheGroupsCoverEveryRankOnce) {
  int tiling = 0, not_tiling = 0;
  for (int64_t gpus : {1, 8, 24, 64, 96}) {
    for (int64_t size = 1; size <= gpus; ++size) {
      for (int64_t stride = 1; size * stride <= gpus; ++stride) {
        const GroupFamily f{size, stride};
        std::vector<int> seen(size_t(gpus), 0);
        bool inside = true;
        for (int64_t g = 0; g < f.Groups(gpus); ++g) {
          for (int64_t j = 0; j < size; ++j) {
            const int64_t rank = f.Member(g, j);
            if (rank < 0 || rank >= gpus) {
              inside = false;
            } else {
              ++seen[size_t(rank)];
            }
          }
        }
        const bool covers = inside && std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; });
        EXPECT_EQ(covers, f.Tiles(gpus)) << size << " x " << stride << " of " << gpus;
        ++(covers ? tiling : not_tiling);
      }
    }
  }
  EXPECT_GT(tiling, 0);
  EXPECT_GT(not_tiling, 0);
  EXPECT_FALSE((GroupFamily{2, 56}.Tiles(64)));
  EXPECT_EQ(64, (GroupFamily{2, 56}.Member(8, 1)));
}

// NcclTreeEdges(n), the most tree edges a rank has in NCCL's double binary
// tree over n ranks (both trees), against the trees ForEachFlow lists: a
// kNodeTree phase over n domains of one member sends one flow each way per
// edge, so a rank's sent flows are its edges.
TEST(PlanTest, NcclTreeEdgesMatchTheTrees) {
  for (int64_t n = 1; n <= 4096; n = n < 64 ? n + 1 : n * 2 + 1) {
    Phase tree;
    tree.pattern = Pattern::kNodeTree;
    tree.family = {n, 1};
    tree.bytes_per_flow = 1;
    std::vector<int64_t> edges(size_t(n), 0);
    ForEachFlow(tree, n, 1, [&](int64_t src, int64_t dst, double) {
      ASSERT_NE(src, dst);
      ++edges[size_t(src)];
    });
    const int64_t most = n == 0 ? 0 : *std::max_element(edges.begin(), edges.end());
    EXPECT_EQ(NcclTreeEdges(n), most) << n << " ranks";
  }
}

}  // namespace
}  // namespace railsim::comm
