// Megatron-Core's interleave group size N
// (--microbatch-group-size-per-virtual-pipeline-stage) against hand
// calculations: the chunks each stage holds, the memory charged on the worst
// stage, the pipeline sends N hides, and Megatron-Core's range checks.
#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/perf/estimate.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

using testutil::MakeStrategy;

TEST(InterleaveTest, InFlightChunksFollowTheGroupSize) {
  // pp 4, vp 2, m 8. Megatron-Core's table runs (mb 0-3, chunk 0), (mb 0-3,
  // chunk 1), (mb 4-7, chunk 0), (mb 4-7, chunk 1) for N = 4; rank r warms
  // up with 2 (pp - r - 1) + (vp - 1) N forward chunks and runs one more
  // before its first backward frees one. N = 4: rank 0 6 + 4 + 1 = 11
  // chunks (mb 0-3 chunk 0, mb 0-3 chunk 1, mb 4-6 chunk 0) = 5.5 stages'
  // worth; rank 1 4 + 4 + 1 = 9 (4.5); the last 0 + 4 + 1 = 5 (2.5).
  spec::Strategy s = MakeStrategy(1, 4, 1, 1, 8);
  s.vp = 2;
  EXPECT_EQ(4, s.group_size());  // 0 = Megatron-Core's default, pp
  EXPECT_EQ(5.5, MicrobatchesInFlight(s, Stage::kFirst));
  EXPECT_EQ(4.5, MicrobatchesInFlight(s, Stage::kMiddle));
  EXPECT_EQ(2.5, MicrobatchesInFlight(s, Stage::kLast));
  // N = 8 (one group of all 8): rank 0 6 + 8 + 1 = 15 chunks (7.5), rank 1
  // 13 (6.5), the last 9 (4.5): every stage holds (vp - 1)(N - pp) = 4
  // chunks more, 2 stages' worth.
  s.microbatch_group_size_per_vp_stage = 8;
  EXPECT_EQ(7.5, MicrobatchesInFlight(s, Stage::kFirst));
  EXPECT_EQ(6.5, MicrobatchesInFlight(s, Stage::kMiddle));
  EXPECT_EQ(4.5, MicrobatchesInFlight(s, Stage::kLast));
  // vp 4, N 8: rank 0 6 + 24 + 1 = 31 chunks (under m vp = 32), 31/4 =
  // 7.75 stages' worth; the last 0 + 24 + 1 = 25, 6.25.
  s.vp = 4;
  EXPECT_EQ(7.75, MicrobatchesInFlight(s, Stage::kFirst));
  EXPECT_EQ(6.25, MicrobatchesInFlight(s, Stage::kLast));
  // m 4, N 4, vp 4: rank 0 would warm up 6 + 12 + 1 = 19 > m vp = 16: the
  // whole batch is warm-up, 16 chunks = 4 stages' worth.
  s.microbatch_group_size_per_vp_stage = 4;
  s.global_batch = 4;
  EXPECT_EQ(4, MicrobatchesInFlight(s, Stage::kFirst));
}

// GPT-3 175B, tp 8, pp 4, vp 2, 8 micro-batches of 1 on 32 H100s.
struct Gpt3Interleaved {
  Gpt3Interleaved() {
    s.vp = 2;
    s.sequence_parallel = true;
    spec::ValidateStrategy(m, 32, s);
  }
  spec::ModelSpec m = spec::LoadModel("gpt3-175b", "--model");
  PerfContext c = MakePerfContext(m, spec::LoadSystem("dgx-h100", "--system"), 32, comm::NetworkKind::kRailOptimized);
  spec::Strategy s = MakeStrategy(8, 4, 1, 1, 8);
};

TEST(InterleaveTest, MemoryChargedOnTheWorstStage) {
  // Without recomputation the first stage's activations are (layers x per
  // layer + embedding) x micro-batches in flight, and it is the worst
  // stage: N 8 holds 7.5 micro-batches' worth against N 4's 5.5.
  Gpt3Interleaved g;
  const MemoryBreakdown n4 = EstimateMemory(g.c, g.s);
  g.s.microbatch_group_size_per_vp_stage = 8;
  const MemoryBreakdown n8 = EstimateMemory(g.c, g.s);
  EXPECT_NEAR(7.5 / 5.5, n8.activations_bytes / n4.activations_bytes, 1e-12);
  EXPECT_EQ(n4.weights_bytes, n8.weights_bytes);
}

TEST(InterleaveTest, LargerGroupsHideTheWrapAroundSends) {
  // With the sends in the critical path every one of the 2 (vp m + pp - 1)
  // = 38 sends is exposed: pp_comm = 38 p. Overlapped, the fill and drain
  // expose 2 (pp - 1) = 6, and each of the 2 (vp - 1) = 2 wrap-arounds from
  // the last rank to the first waits for pp = 4 sends while rank 0 has N -
  // pp chunks of its own to run: N = pp hides nothing, 6 + 2 x 4 = 14 p;
  // N = 2 pp hides all of them behind 4 chunks of GPT-3's layers (ms
  // against a send of tens of microseconds): 6 p.
  Gpt3Interleaved g;
  g.s.overlap_p2p_comm = false;
  const double serial = EstimateIteration(g.c, g.s).breakdown.pp_comm_s;
  g.s.overlap_p2p_comm = true;
  const double n4 = EstimateIteration(g.c, g.s).breakdown.pp_comm_s;
  g.s.microbatch_group_size_per_vp_stage = 8;
  const double n8 = EstimateIteration(g.c, g.s).breakdown.pp_comm_s;
  ASSERT_GT(n8, 0);
  EXPECT_NEAR(14.0 / 6, n4 / n8, 1e-9);
  EXPECT_NEAR(38.0 / 6, serial / n8, 1e-9);
}

TEST(InterleaveTest, GroupSizeRangeAsMegatronCoreChecks) {
  auto error = [](spec::Strategy s) {
    try {
      spec::ValidateStrategy(spec::LoadModel("gpt3-175b", "--model"), s.gpus(), s);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  spec::Strategy s = MakeStrategy(8, 4, 1, 1, 16);  // m 16
  s.microbatch_group_size_per_vp_stage = 4;
  EXPECT_EQ("--microbatch-group-size-per-virtual-pipeline-stage: applies to interleaving only (--vp > 1), got 4",
            error(s));
  s.vp = 2;
  EXPECT_EQ("", error(s));
  s.microbatch_group_size_per_vp_stage = 3;
  EXPECT_EQ("--microbatch-group-size-per-virtual-pipeline-stage: expected an integer in [pp, micro-batches] = "
            "[4, 16], got 3",
            error(s));
  s.microbatch_group_size_per_vp_stage = 17;
  EXPECT_EQ("--microbatch-group-size-per-virtual-pipeline-stage: expected an integer in [pp, micro-batches] = "
            "[4, 16], got 17",
            error(s));
  s.microbatch_group_size_per_vp_stage = 6;  // last group 16 mod 6 = 4 = pp: allowed
  EXPECT_EQ("", error(s));
  s.microbatch_group_size_per_vp_stage = 7;  // last group 2 < pp
  EXPECT_EQ("--microbatch-group-size-per-virtual-pipeline-stage: expected the micro-batches 16 mod N to be 0 or "
            "at least pp 4, got N 7 (remainder 2)",
            error(s));
}

}  // namespace
}  // namespace railsim::perf
