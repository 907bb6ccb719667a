// Accuracy of NCCL's model (comm/nccl_model.h) against measured nccl-tests:
// 8 AWS p5 nodes (tests/data/nccl-tests-p5-8nodes.csv). Prints predicted vs
// measured for every row, with the algorithm and protocol railsim chose.
//
// The bounds are what the model reaches (6.9% mean, 18.4% worst since
// `railsim calibrate` refitted the preset's NIC efficiencies and latencies;
// 7.1% and 19.4% with the earlier hand fit, 8.0% mean before NCCL's NVLSTree
// joined the choice, which now takes all-reduce from 256 MiB
// to 2 GiB and brings those rows from +18.4%, +15.5%, +6.4%, -1.8% to +9.3%, +9.1%, +0.1%, -3.5%), not issue
// 20's goal (5%, 12%), which no latency-plus-bandwidth model of this kind can
// reach on these rows: its time is the least of affine functions of the size
// (concave), while the measured all-gather times are not (256 MiB takes
// 1,227 us, 1 GiB 4,709 us, 2 GiB 7,197 us: the step from 256 MiB to 1 GiB is
// slower per byte than the steps on either side), and neither are the
// all-reduce times from 32 to 128 MiB. The run's OFI tuner plugin, which
// overrides NCCL's choice, is not modelled.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/comm/algorithms.h"
#include "testutil/reference_data.h"
#include "railsim/perf/context.h"
#include "railsim/spec/presets.h"

namespace railsim::perf {
namespace {

TEST(NcclCalibrationTest, AwsP5EightNodes) {
  const spec::SystemSpec p5 = spec::LoadSystem("aws-p5", "--system");
  const std::vector<std::vector<std::string>> rows = testutil::ReadReferenceCsv("nccl-tests-p5-8nodes.csv");
  ASSERT_EQ(23u, rows.size());
  double sum = 0, worst = 0;
  std::printf("%-10s %6s %8s %8s %-6s %-7s %7s\n", "op", "MiB", "meas us", "pred us", "algo", "proto", "error");
  for (const std::vector<std::string>& r : rows) {
    const int64_t gpus = std::stoll(r[2]);
    const double bytes = std::stod(r[3]) * 1048576.0;
    // nccl-tests' algBw = size / time (GB/s = 1e9 B/s); the out-of-place run.
    const double measured_s = bytes / (std::stod(r[4]) * 1e9);
    const ClusterNetwork n = MakeClusterNetwork(p5, gpus, comm::NetworkKind::kRailOptimized, 0, {});
    const comm::GroupLayout g = comm::LayoutOf(gpus, 1, n.fabrics.hb_domain_size);
    const comm::Op op = r[0] == "all-reduce" ? comm::Op::kAllReduce
                        : r[0] == "all-gather" ? comm::Op::kAllGather
                                               : comm::Op::kAllToAll;
    double predicted_s = 0;
    const comm::Plan plan = *comm::MakePlan(op, comm::Algorithm::kAuto, bytes, g, n.fabrics, {}, &predicted_s);
    const double error = predicted_s / measured_s - 1;
    std::printf("%-10s %6s %8.0f %8.0f %-6s %-7s %+6.1f%%\n", r[0].c_str(), r[3].c_str(), 1e6 * measured_s,
                1e6 * predicted_s, plan.algorithm, plan.protocol, 100 * error);
    sum += std::fabs(error);
    worst = std::max(worst, std::fabs(error));
    EXPECT_LE(std::fabs(error), 0.19) << r[0] << " " << r[3] << " MiB";
  }
  const double mean = sum / double(rows.size());
  std::printf("mean absolute error %.1f%%, worst %.1f%%\n", 100 * mean, 100 * worst);
  EXPECT_LE(mean, 0.07);
}

}  // namespace
}  // namespace railsim::perf
