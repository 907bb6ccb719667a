#include "railsim/spec/sweep_config.h"

#include <string>

#include <gtest/gtest.h>

#include "railsim/core/error.h"

namespace railsim::spec {
namespace {

// The issue's example: 3 cluster sizes x 4 pipeline degrees.
const char* kExample = R"({"study": "estimate",
  "fixed": {"model": "gpt3-175b", "system": "dgx-h100", "tp": 8, "global_batch_size": 512, "micro_batch_size": 1},
  "axes": {"gpus": [256, 512, 1024], "pp": [2, 4, 8, 16]}})";

std::string ErrorOf(const std::string& text) {
  try {
    ParseSweepConfigJson(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string Summary(const std::vector<SweepParam>& point) {
  std::string s;
  for (const SweepParam& p : point) {
    s += p.key + "=" + (p.value.kind == SweepValue::Kind::kInt ? std::to_string(p.value.int_value) : p.value.text) + " ";
  }
  return s;
}

TEST(SweepConfigTest, TheIssuesExampleIsTwelvePointsLastAxisFastest) {
  SweepConfig c = ParseSweepConfigJson(kExample);
  EXPECT_EQ(SweepStudy::kEstimate, c.study);
  ASSERT_EQ(12, c.points);
  // Parameters in the study's flag order: job first, then the strategy.
  EXPECT_EQ("model=gpt3-175b system=dgx-h100 gpus=256 global_batch_size=512 tp=8 pp=2 micro_batch_size=1 ",
            Summary(c.Point(0)));
  EXPECT_EQ("model=gpt3-175b system=dgx-h100 gpus=256 global_batch_size=512 tp=8 pp=16 micro_batch_size=1 ",
            Summary(c.Point(3)));
  EXPECT_EQ("model=gpt3-175b system=dgx-h100 gpus=512 global_batch_size=512 tp=8 pp=2 micro_batch_size=1 ",
            Summary(c.Point(4)));
  EXPECT_EQ(1024, FindParam(c.Point(11), "gpus")->int_value);
  EXPECT_EQ(16, FindParam(c.Point(11), "pp")->int_value);
  EXPECT_EQ(nullptr, FindParam(c.Point(11), "dp"));
}

TEST(SweepConfigTest, ZipPairsAxesAndRangesExpand) {
  SweepConfig c = ParseSweepConfigJson(R"({"study": "estimate",
    "fixed": {"model": "gpt3-175b", "system": "dgx-h100", "tp": 8, "micro_batch_size": 1},
    "axes": {"gpus": {"from": 256, "to": 2048, "times": 2}, "global_batch_size": [256, 512, 1024, 2048],
             "pp": {"from": 4, "to": 12, "step": 4}},
    "zip": [["gpus", "global_batch_size"]]})");
  // 4 zipped (gpus, batch) pairs x pp in {4, 8, 12}.
  ASSERT_EQ(12, c.points);
  EXPECT_EQ("model=gpt3-175b system=dgx-h100 gpus=2048 global_batch_size=2048 tp=8 pp=12 micro_batch_size=1 ",
            Summary(c.Point(11)));
  EXPECT_EQ("model=gpt3-175b system=dgx-h100 gpus=512 global_batch_size=512 tp=8 pp=4 micro_batch_size=1 ",
            Summary(c.Point(3)));
}

TEST(SweepConfigTest, NumbersAndBandwidthsKeepTheirMeaning) {
  SweepConfig c = ParseSweepConfigJson(R"({"study": "network",
    "fixed": {"design": "rail-only", "gpus": 4096, "hb_size": 8},
    "axes": {"radix": [32, 64], "port_speed": ["400Gbps", 100e9], "oversubscription": {"from": 1, "to": 2, "step": 0.5}}})");
  ASSERT_EQ(12, c.points);
  std::vector<SweepParam> p = c.Point(11);
  EXPECT_EQ("800Gbps", FindParam(p, "port_speed")->text);
  EXPECT_DOUBLE_EQ(100e9, FindParam(p, "port_speed")->number);
  EXPECT_DOUBLE_EQ(2.0, FindParam(p, "oversubscription")->number);
}

TEST(SweepConfigTest, ErrorsNameThePointerAndWhatWasExpected) {
  EXPECT_EQ("/study: expected one of network, estimate, search, alltoall, collective, failures, compare, cluster, got 'estimat' (did you mean 'estimate'?)",
            ErrorOf(R"({"study": "estimat"})"));
  EXPECT_EQ("/axes/pipeline: unknown parameter of study 'estimate'; expected one of model, system, gpus, "
            "global_batch_size, network, placement, hb_size, gpus_per_domain, attention, cuda_graph_impl, stack, iteration_overhead, radix, "
            "oversubscription, tp, pp, dp, cp, "
            "ep, expert_tensor_parallel_size, vp, account_for_embedding_in_pipeline_split, account_for_loss_in_pipeline_split, "
            "decoder_first_pipeline_num_layers, decoder_last_pipeline_num_layers, micro_batch_size, recompute, "
            "sequence_parallel, distributed_optimizer, no_dp_overlap, "
            "grad_reduce_in_bf16, tp_comm_overlap, no_overlap_p2p_communication, precision, fp8_params, "
            "fp4_params, num_layers_at_start_in_bf16, num_layers_at_end_in_bf16, moe_alltoall, moe_imbalance, "
            "moe_max_domains, moe_overlap",
            ErrorOf(R"({"study": "estimate", "axes": {"pipeline": [2]}})"));
  EXPECT_EQ("/axes/pp/2: expected an integer in [1, 1048576], got 0",
            ErrorOf(R"({"study": "estimate", "axes": {"pp": [2, 4, 0]}})"));
  EXPECT_EQ("/fixed: missing parameter 'tp': study 'estimate' needs it in /fixed or /axes",
            ErrorOf(R"({"study": "estimate", "fixed": {"model": "m", "system": "s", "gpus": 8,
                        "global_batch_size": 8, "pp": 1, "micro_batch_size": 1}})"));
  EXPECT_EQ("/axes/tp: 'tp' is also in /fixed; give it in one place",
            ErrorOf(R"({"study": "estimate", "fixed": {"tp": 8}, "axes": {"tp": [8]}})"));
  EXPECT_EQ("/zip/0/1: axis 'pp' has 2 values but 'gpus' has 3; zipped axes advance together",
            ErrorOf(R"({"study": "estimate", "axes": {"gpus": [8, 16, 32], "pp": [1, 2]}, "zip": [["gpus", "pp"]]})"));
  EXPECT_EQ("/zip/0/1: 'tp' is not an axis (or is zipped twice); zip names keys of \"axes\"",
            ErrorOf(R"({"study": "estimate", "axes": {"gpus": [8]}, "zip": [["gpus", "tp"]]})"));
  EXPECT_EQ("/axes/gpus: expected a non-empty list of values or a range object, got []",
            ErrorOf(R"({"study": "estimate", "axes": {"gpus": []}})"));
  EXPECT_EQ("/axes/network/0: expected one of rail-only, rail-optimized, ideal, got 'fat-tree'",
            ErrorOf(R"({"study": "estimate", "axes": {"network": ["fat-tree"]}})"));
  EXPECT_EQ("/axes/model: a range needs a numeric parameter; give 'model' as a list",
            ErrorOf(R"({"study": "estimate", "axes": {"model": {"from": 1, "to": 2, "step": 1}}})"));
  EXPECT_EQ("/axes/gpus: expected a range with either \"step\" or \"times\"",
            ErrorOf(R"({"study": "estimate", "axes": {"gpus": {"from": 1, "to": 2}}})"));
  EXPECT_EQ("/axis: unknown field (did you mean 'axes'?); expected one of axes, fixed, study, zip",
            ErrorOf(R"({"study": "network", "axis": 1})"));
}

TEST(SweepConfigTest, RefusesGridsPastTheLimit) {
  EXPECT_EQ("/axes: the grid has more than 100000000 points; split it into several sweeps",
            ErrorOf(R"({"study": "network", "fixed": {"design": "rail-only", "radix": 64}, "axes": {
                        "gpus": {"from": 1, "to": 20000, "step": 1}, "hb_size": {"from": 1, "to": 20000, "step": 1}}})"));
  EXPECT_EQ("/axes/gpus: expected at most 100000 values in a range",
            ErrorOf(R"({"study": "network", "axes": {"gpus": {"from": 1, "to": 1000000, "step": 1}}})"));
}

TEST(SweepConfigTest, ExpertTensorParallelSizeTakesADegreeOrItsWords) {
  // A degree, or "tp" (Megatron-Core's default); search also "any" (tp and 1).
  EXPECT_EQ("/axes/expert_tensor_parallel_size/0: expected one of tp, got 'any'",
            ErrorOf(R"({"study": "estimate", "fixed": {"model": "m", "system": "s", "gpus": 8, "global_batch_size": 8,
                        "tp": 1, "pp": 1, "micro_batch_size": 1}, "axes": {"expert_tensor_parallel_size": ["any"]}})"));
  EXPECT_EQ("/fixed/expert_tensor_parallel_size: expected an integer in [1, 1048576], got 0",
            ErrorOf(R"({"study": "collective", "fixed": {"system": "s", "gpus": 8, "op": "all-reduce",
                        "bytes": "1MiB", "group": "ep", "expert_tensor_parallel_size": 0}})"));
  const SweepConfig c = ParseSweepConfigJson(R"({"study": "search", "fixed": {"model": "m", "system": "s",
      "gpus": 8, "global_batch_size": 8}, "axes": {"expert_tensor_parallel_size": ["any", "tp", 2]}})");
  EXPECT_EQ(3, c.points);
}

}  // namespace
}  // namespace railsim::spec
