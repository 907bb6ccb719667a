// The --stack profiles: names, what each sets, the strategy defaults they
// apply, and the error for an unknown name.
#include "railsim/spec/stack.h"

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::spec {
namespace {

TEST(StackTest, NamesRoundTrip) {
  for (Stack s : {Stack::kMegatron2021, Stack::kMegatronCore, Stack::kNemo, Stack::kTorchtitan, Stack::kFsdp}) {
    EXPECT_EQ(s, ParseStack(StackName(s), "--stack"));
    EXPECT_EQ(s, StackProfileOf(s).stack);
  }
  EXPECT_STREQ("megatron-2021", StackName(Stack::kMegatron2021));
  EXPECT_STREQ("megatron-core", StackName(Stack::kMegatronCore));
  EXPECT_STREQ("nemo", StackName(Stack::kNemo));
  EXPECT_STREQ("torchtitan", StackName(Stack::kTorchtitan));
  EXPECT_STREQ("fsdp", StackName(Stack::kFsdp));
}

TEST(StackTest, UnknownNameSaysWhatIsExpected) {
  try {
    ParseStack("nemo2", "--stack");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string("--stack: expected one of megatron-2021, megatron-core, nemo, torchtitan, fsdp, got "
                          "'nemo2' (did you mean 'nemo'?)"),
              e.what());
  }
}

TEST(StackTest, Megatron2021HasNoFlashAttentionAndNoOverlap) {
  // SC'21 Megatron-LM: materialised softmax, the all-reduce after the
  // backward pass in 16 bit, pipeline sends in the critical path.
  Strategy s;
  s.tp = 8;
  s.sequence_parallel = true;
  ApplyStackDefaults(StackProfileOf(Stack::kMegatron2021), &s);
  EXPECT_EQ(Attention::kClassic, s.attention);
  EXPECT_FALSE(s.overlap_dp_comm);
  EXPECT_FALSE(s.overlap_p2p_comm);
  EXPECT_TRUE(s.grad_reduce_16bit);
  EXPECT_FALSE(s.tp_comm_overlap);
  EXPECT_EQ(DpSharding::kNone, s.dp_sharding);
}

TEST(StackTest, MegatronCoreIsTheStrategyDefaults) {
  // The default profile changes nothing a default Strategy holds.
  Strategy plain, s;
  ApplyStackDefaults(StackProfileOf(Stack::kMegatronCore), &s);
  EXPECT_EQ(plain.attention, s.attention);
  EXPECT_EQ(plain.overlap_dp_comm, s.overlap_dp_comm);
  EXPECT_EQ(plain.overlap_p2p_comm, s.overlap_p2p_comm);
  EXPECT_EQ(plain.grad_reduce_16bit, s.grad_reduce_16bit);
  EXPECT_EQ(plain.tp_comm_overlap, s.tp_comm_overlap);
  EXPECT_EQ(plain.dp_sharding, s.dp_sharding);
  EXPECT_EQ(plain.main_grads_dtype, s.main_grads_dtype);
  EXPECT_EQ(plain.main_params_dtype, s.main_params_dtype);
}

TEST(StackTest, NemoOverlapsTpOnlyWhereItApplies) {
  Strategy s;
  s.tp = 8;
  ApplyStackDefaults(StackProfileOf(Stack::kNemo), &s);
  EXPECT_FALSE(s.tp_comm_overlap);  // no sequence parallelism: nothing to overlap
  EXPECT_EQ(DpSharding::kOptimizer, s.dp_sharding);
  s.sequence_parallel = true;
  ApplyStackDefaults(StackProfileOf(Stack::kNemo), &s);
  EXPECT_TRUE(s.tp_comm_overlap);
}

TEST(StackTest, FsdpStacksShardEverything) {
  for (Stack stack : {Stack::kTorchtitan, Stack::kFsdp}) {
    Strategy s;
    ApplyStackDefaults(StackProfileOf(stack), &s);
    EXPECT_EQ(DpSharding::kFull, s.dp_sharding) << StackName(stack);
    EXPECT_EQ(Attention::kFlash, s.attention) << StackName(stack);
    EXPECT_TRUE(s.overlap_dp_comm) << StackName(stack);
  }
}

}  // namespace
}  // namespace railsim::spec
