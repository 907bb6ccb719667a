// The strategy search: every result valid and feasible, ranked, the same for
// any thread count, and its best equal to a brute-force minimum.
#include "railsim/search/search.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/spec/presets.h"

namespace railsim::search {
namespace {

perf::PerfContext Context(const char* model, const char* system, int64_t gpus,
                          comm::NetworkKind net = comm::NetworkKind::kRailOptimized) {
  return perf::MakePerfContext(spec::LoadModel(model, "--model"), spec::LoadSystem(system, "--system"), gpus,
                               net);
}

TEST(SearchTest, ResultsAreValidFeasibleAndRanked) {
  perf::PerfContext c = Context("gpt3-175b", "dgx-a100", 512);
  SearchOptions o;
  o.global_batch = 512;
  o.top_k = 20;
  SearchResult r = Search(c, o);
  ASSERT_EQ(20u, r.results.size());
  EXPECT_EQ(r.candidates, r.evaluated + r.pruned);
  EXPECT_EQ(r.candidates, CountStrategies(c, o));
  for (size_t i = 0; i < r.results.size(); ++i) {
    const RankedStrategy& rs = r.results[i];
    EXPECT_NO_THROW(spec::ValidateStrategy(c.model, c.gpus, rs.strategy));
    EXPECT_TRUE(rs.estimate.memory.fits);
    EXPECT_NEAR(perf::EstimateIteration(c, rs.strategy).iteration_time_s, rs.estimate.iteration_time_s, 1e-12);
    if (i > 0) {
      EXPECT_TRUE(RanksBefore(r.results[i - 1], rs));
    }
  }
}

TEST(SearchTest, SameAnswerOnAnyThreadCount) {
  perf::PerfContext c = Context("llama3-70b", "dgx-h100", 256);
  SearchOptions o;
  o.global_batch = 256;
  o.top_k = 15;
  o.threads = 1;
  SearchResult one = Search(c, o);
  o.threads = 2;
  SearchResult two = Search(c, o);
  ASSERT_EQ(one.results.size(), two.results.size());
  EXPECT_EQ(one.evaluated, two.evaluated);
  for (size_t i = 0; i < one.results.size(); ++i) {
    EXPECT_EQ(one.results[i].estimate.iteration_time_s, two.results[i].estimate.iteration_time_s);
    EXPECT_EQ(one.results[i].strategy.pp, two.results[i].strategy.pp);
    EXPECT_EQ(one.results[i].strategy.micro_batch, two.results[i].strategy.micro_batch);
  }
}

TEST(SearchTest, BestEqualsBruteForceMinimum) {
  // Brute force over a grid that contains every strategy (valid or not).
  perf::PerfContext c = Context("megatron-7.5b", "dgx-a100", 64);
  SearchOptions o;
  o.global_batch = 64;
  o.top_k = 1;
  SearchResult r = Search(c, o);
  ASSERT_EQ(1u, r.results.size());
  double best = 1e300;
  int64_t feasible = 0;
  for (int tp : {1, 2, 4, 8}) {
    for (int pp = 1; pp <= 36; ++pp) {
      for (int cp : {1, 2, 4, 8, 16}) {
        for (int64_t b : {1, 2, 4, 8, 16, 32, 64}) {
          for (int vp = 1; vp <= 36; ++vp) {
            // The search's interleaving: vp divides the smallest stage's
            // layers (search.cc, VirtualStages); with pp dividing the
            // layers that is every valid vp.
            if (pp > 1 && (c.model.num_layers / pp) % vp != 0) continue;
            for (auto rc : {spec::Recompute::kNone, spec::Recompute::kSelective, spec::Recompute::kFull}) {
              for (int sp = 0; sp < 3; ++sp) {  // 2: with TP-communication overlap, which dominates 1
                for (int dist = 0; dist < 4; ++dist) {  // 2, 3: interleave group size 2 pp
                  spec::Strategy s;
                  s.tp = tp, s.pp = pp, s.cp = cp, s.vp = vp, s.micro_batch = b, s.global_batch = 64;
                  // The search tries N = pp and 2 pp; the validator rejects 2 pp
                  // without interleaving or with fewer micro-batches.
                  s.microbatch_group_size_per_vp_stage = dist >= 2 ? 2 * int64_t{pp} : 0;
                  s.dp = 64 / (int64_t{tp} * pp * cp) > 0 ? 64 / (int64_t{tp} * pp * cp) : 1;
                  s.recompute = rc, s.sequence_parallel = sp > 0;
                  s.dp_sharding = dist % 2 ? spec::DpSharding::kOptimizer : spec::DpSharding::kNone;
                  s.tp_comm_overlap = sp == 2;
                  if (sp && tp == 1) continue;
                  if (sp == 1) {
                    // Without overlap a sequence-parallel strategy is never faster.
                    spec::Strategy with = s;
                    with.tp_comm_overlap = true;
                    if (spec::IsValidStrategy(c.model, 64, s)) {
                      EXPECT_LE(perf::EstimateIteration(c, with).iteration_time_s,
                                perf::EstimateIteration(c, s).iteration_time_s);
                    }
                    continue;
                  }
                  if (dist % 2 && s.dp * cp == 1) continue;
                  if (!spec::IsValidStrategy(c.model, 64, s)) continue;
                  perf::Estimate e = perf::EstimateIteration(c, s);
                  if (!e.memory.fits) continue;
                  ++feasible;
                  best = std::min(best, e.iteration_time_s);
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(feasible, r.evaluated);
  EXPECT_DOUBLE_EQ(best, r.results[0].estimate.iteration_time_s);
}

TEST(SearchTest, MixtureOfExpertsSearchesExpertParallelism) {
  perf::PerfContext c = Context("mixtral-8x22b", "dgx-h100", 256, comm::NetworkKind::kRailOnly);
  SearchOptions o;
  o.global_batch = 256;
  o.top_k = 5;
  SearchResult r = Search(c, o);
  ASSERT_FALSE(r.results.empty());
  EXPECT_EQ(r.candidates, CountStrategies(c, o));
  bool any_ep = false;
  for (const RankedStrategy& rs : r.results) any_ep |= rs.strategy.ep > 1;
  EXPECT_TRUE(any_ep);
}

// Interleaving is not free: each (micro-batch x virtual stage) chunk pays the
// GPU's pipeline_chunk_overhead, so the vp the search picks for a layout
// moves with it. Hand calculation: with vp virtual stages the bubble is
// B1 / vp (B1 the bubble without interleaving) and the chunks cost
// c (m vp + pp - 1), so the time, up to terms that do not depend on vp, is
// B1 / vp + c m vp, least at vp* = sqrt(B1 / (c m)) among the vp the layout
// allows. Point-to-point time also changes a little with vp; the cases are
// chosen far enough from the crossings that it does not decide.
TEST(SearchTest, OptimumVirtualStagesMoveWithChunkCost) {
  spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  int previous_vp = 0, first_vp = 0;
  for (double chunk : {0.0, 0.003, 0.1}) {
    h100.gpu.pipeline_chunk_overhead_s = chunk;
    perf::PerfContext c = perf::MakePerfContext(spec::LoadModel("gpt3-175b", "--model"), h100, 512,
                                                comm::NetworkKind::kRailOptimized);
    SearchOptions o;
    o.global_batch = 512;
    o.top_k = 100000;
    SearchResult r = Search(c, o);
    ASSERT_FALSE(r.results.empty());
    // The best layout with a pipeline, and every vp the search timed for it.
    const RankedStrategy* best = nullptr;
    for (const RankedStrategy& rs : r.results) {
      if (rs.strategy.pp > 1) {
        best = &rs;
        break;
      }
    }
    ASSERT_NE(best, nullptr);
    spec::Strategy layout = best->strategy;
    double b1 = -1, m = double(layout.num_microbatches());
    std::vector<int> vps;
    for (const RankedStrategy& rs : r.results) {
      spec::Strategy s = rs.strategy;
      s.vp = layout.vp;
      if (s.tp != layout.tp || s.pp != layout.pp || s.dp != layout.dp || s.cp != layout.cp ||
          s.micro_batch != layout.micro_batch || s.recompute != layout.recompute ||
          s.dp_sharding != layout.dp_sharding || s.sequence_parallel != layout.sequence_parallel) {
        continue;
      }
      vps.push_back(rs.strategy.vp);
      if (rs.strategy.vp == 1) b1 = rs.estimate.breakdown.bubble_s;
    }
    ASSERT_GT(b1, 0) << "the layout without interleaving was timed";
    int hand = 1;
    double hand_cost = 1e300;
    for (int vp : vps) {
      double cost = b1 / vp + chunk * m * vp;
      if (cost < hand_cost) {
        hand_cost = cost;
        hand = vp;
      }
    }
    std::printf("  chunk cost %.4f s: tp %d pp %d m %.0f, bubble without interleaving %.3f s; search's vp %d, "
                "hand %d (vp* = sqrt(B1 / (c m)) = %.1f)\n",
                chunk, layout.tp, layout.pp, m, b1, layout.vp, hand, chunk > 0 ? std::sqrt(b1 / (chunk * m)) : 0.0);
    EXPECT_EQ(layout.vp, hand) << "chunk cost " << chunk;
    if (previous_vp > 0) {
      EXPECT_LE(layout.vp, previous_vp);
    }
    previous_vp = layout.vp;
    if (first_vp == 0) first_vp = layout.vp;
  }
  EXPECT_LT(previous_vp, first_vp) << "the optimum vp moved down as the chunk cost grew";
}

TEST(SearchTest, MoeLayoutsFoldExpertParallelismOverTensorContextAndData) {
  // Qwen3-30B-A3B (128 experts) on 16 H100s: every layout the search keeps
  // obeys Megatron-Core's folding rule (ep x etp dividing tp x cp x dp), with
  // etp = tp or 1; some need the folding (ep not dividing dp) and some run the
  // experts whole beside tensor-parallel attention (tp > 1, etp 1).
  perf::PerfContext c = Context("qwen3-30b-a3b", "dgx-h100", 16);
  SearchOptions o;
  o.global_batch = 64;
  o.top_k = 1000000;
  o.threads = 2;
  SearchResult r = Search(c, o);
  ASSERT_FALSE(r.results.empty());
  EXPECT_EQ(r.candidates, CountStrategies(c, o));
  bool folded = false, whole_experts = false;
  for (const RankedStrategy& rs : r.results) {
    const spec::Strategy& s = rs.strategy;
    EXPECT_TRUE(spec::IsValidStrategy(c.model, 16, s));
    EXPECT_TRUE(s.expert_tp() == s.tp || s.expert_tp() == 1);
    folded = folded || s.dp % s.ep != 0;
    whole_experts = whole_experts || (s.tp > 1 && s.expert_tp() == 1);
  }
  EXPECT_TRUE(folded);
  EXPECT_TRUE(whole_experts);
  // Megatron-Core's default alone (--expert-tensor-parallel-size tp): fewer
  // strategies, every one with etp = tp.
  SearchOptions same = o;
  same.expert_tp = 0;
  const SearchResult t = Search(c, same);
  EXPECT_LT(t.candidates, r.candidates);
  for (const RankedStrategy& rs : t.results) EXPECT_EQ(rs.strategy.tp, rs.strategy.expert_tp());
  // One degree: 2 wherever it divides the expert layout.
  same.expert_tp = 2;
  for (const RankedStrategy& rs : Search(c, same).results) EXPECT_EQ(2, rs.strategy.expert_tp());
}

}  // namespace
}  // namespace railsim::search
