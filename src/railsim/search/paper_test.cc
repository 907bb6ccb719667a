// The Rail-only paper's training-side claims, reproduced with the search and
// printed (Wang et al., arXiv 2307.12169): GPT-1T on 32,768 H100 GPUs.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "railsim/search/search.h"
#include "railsim/spec/presets.h"

namespace railsim::search {
namespace {

double BestTime(comm::NetworkKind net, int64_t batch, int64_t hb = 0) {
  perf::PerfContext c = perf::MakePerfContext(spec::LoadModel("megatron-1t", "--model"),
                                              spec::LoadSystem("dgx-h100", "--system"), 32768, net, hb);
  SearchOptions o;
  o.global_batch = batch;
  o.top_k = 1;
  o.threads = 2;
  SearchResult r = Search(c, o);
  EXPECT_EQ(1u, r.results.size());
  return r.results.empty() ? 0 : r.results[0].estimate.iteration_time_s;
}

TEST(PaperTest, RailOnlyMatchesRailOptimizedForDenseGpt1T) {
  for (auto [batch, hb] : {std::pair<int64_t, int64_t>{4096, 0}, {256, 0}, {4096, 256}, {256, 256}}) {
    double only = BestTime(comm::NetworkKind::kRailOnly, batch, hb);
    double optimized = BestTime(comm::NetworkKind::kRailOptimized, batch, hb);
    std::printf("  GPT-1T, 32,768 H100, HB domain %3d, batch %4d: rail-only %.3f s, rail-optimized %.3f s (%+.2f%%)\n",
                int(hb == 0 ? 8 : hb), int(batch), only, optimized, 100 * (only / optimized - 1));
    EXPECT_NEAR(1, only / optimized, 0.005) << "batch " << batch << ", HB domain " << hb;
  }
}

TEST(PaperTest, IterationTimeFallsSteeplyWithHbDomainThenFlattens) {
  std::vector<double> times;
  for (int k = 1; k <= 256; k *= 2) {
    times.push_back(BestTime(comm::NetworkKind::kRailOnly, 4096, k));
    std::printf("  HB domain %3d: best iteration %.3f s\n", k, times.back());
  }
  for (size_t i = 1; i < times.size(); ++i) EXPECT_LE(times[i], times[i - 1] * 1.0001);
  // Steep: K = 1 is more than twice as slow as K = 32. Flat: beyond 32 the
  // last three doublings gain under 2%.
  EXPECT_GT(times[0], 2 * times[5]);
  EXPECT_LT(times[5] / times[8], 1.02);
}

TEST(PaperTest, RailOnlyRelativeToIdealNetwork) {
  // The paper reports about 95% of the ideal (K = N) at batch 256 and 99% at
  // 4096, for HB domains of 256 GPUs (its Table II setting). Its data-parallel
  // collectives are hierarchical (reduce in the domain, then across it, one
  // after the other); railsim takes NCCL's ring through every NIC where that
  // is faster, which overlaps the two, so it lands above the paper's 95%
  // (98.7%); the tolerance covers that and the paper's figure being read by
  // eye. With 8-GPU domains the small batch is far from the ideal (printed,
  // not asserted).
  double r256 = BestTime(comm::NetworkKind::kIdeal, 256) / BestTime(comm::NetworkKind::kRailOnly, 256, 256);
  double r4096 = BestTime(comm::NetworkKind::kIdeal, 4096) / BestTime(comm::NetworkKind::kRailOnly, 4096, 256);
  double k8_256 = BestTime(comm::NetworkKind::kIdeal, 256) / BestTime(comm::NetworkKind::kRailOnly, 256, 8);
  double k8_4096 = BestTime(comm::NetworkKind::kIdeal, 4096) / BestTime(comm::NetworkKind::kRailOnly, 4096, 8);
  std::printf("  rail-only (K 256) vs ideal: batch 256 %.1f%% (paper ~95%%), batch 4096 %.1f%% (paper ~99%%)\n",
              100 * r256, 100 * r4096);
  std::printf("  rail-only (K 8) vs ideal:   batch 256 %.1f%%, batch 4096 %.1f%%\n", 100 * k8_256, 100 * k8_4096);
  EXPECT_NEAR(0.95, r256, 0.05);
  EXPECT_NEAR(0.99, r4096, 0.03);
  EXPECT_LE(k8_256, r256);
  EXPECT_LE(k8_4096, r4096);
}

}  // namespace
}  // namespace railsim::search
