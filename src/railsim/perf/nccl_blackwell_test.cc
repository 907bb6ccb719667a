// NCCL's model on Blackwell (comm/nccl_model.h with the Blackwell constants of
// the gb200-nvl72, gb300-nvl72, dgx-b200 and dgx-b300 presets) against the
// GB200 nccl-tests figures of ../shared/reference/blackwell.md: all-reduce
// inside one NVL72 rack (NVLS; tests/data/nccl-tests-gb200-nvl72.csv) and
// across racks over InfiniBand (tests/data/nccl-tests-gb200-partitions.csv).
// Each test prints predicted against measured for every row. The presets'
// fitted values come from these rows and only these (their sources say which
// row fits what); the bounds are what the fit reaches.
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

comm::Op AllReduce() { return comm::Op::kAllReduce; }

// The busbw nccl-tests prints for an all-reduce of `bytes` on n ranks in t.
double BusBw(double bytes, int64_t n, double t) { return bytes / t * 2.0 * double(n - 1) / double(n); }

TEST(NcclBlackwellTest, PresetsCarryBlackwellConstants) {
  for (const char* name : {"gb200-nvl72", "gb300-nvl72", "dgx-b200", "dgx-b300"}) {
    const spec::SystemSpec s = spec::LoadSystem(name, "--system");
    ASSERT_TRUE(s.nccl.enabled) << name;
    // NCCL 2.30.7's Blackwell rows (tuning.cc) and SM100 speeds (search.cc).
    EXPECT_DOUBLE_EQ(24.0e9, s.nccl.tree_channel_Bps[2]) << name;
    EXPECT_DOUBLE_EQ(96.0e9, s.nccl.nvls_tree_channel_Bps[1]) << name;
    EXPECT_DOUBLE_EQ(282.0e9, s.nccl.ll_max_Bps[0]) << name;
    EXPECT_DOUBLE_EQ(96e9, s.nccl.inter_speeds_Bps[0]) << name;
    EXPECT_DOUBLE_EQ(45.1e9, s.nccl.inter_speeds_Bps[4]) << name;
    EXPECT_DOUBLE_EQ(721.8e9, s.nccl.search_nvlink_Bps) << name;
    EXPECT_EQ(32, s.nccl.max_search_channels) << name;
  }
}

// NCCL corrects NVLSTree all-reduce by size on SM100+ with an x86 host
// (reference 2.1: the Tree's treeCorrectionFactor, all 24 entries): DGX
// B200's Xeon hosts yes, GB200's Grace no. Two DGX B200 nodes, NVLSTree
// Simple forced: the bandwidth part of the time (all but NCCL's latency)
// grows by 1 / factor. 64 MiB is entry floor(log2(2^26 / 64)) = 20 (0.8);
// 512 MiB entry 23 (0.9), which the Tree leaves at 1; 2 GiB is past the
// table (1).
TEST(NcclBlackwellTest, X86HostsCorrectNvlsTreeBySize) {
  const spec::SystemSpec b200 = spec::LoadSystem("dgx-b200", "--system");
  ASSERT_TRUE(b200.nccl.nvls_tree_correction);
  EXPECT_FALSE(spec::LoadSystem("gb200-nvl72", "--system").nccl.nvls_tree_correction);
  const comm::ClusterFabrics on = MakeClusterNetwork(b200, 16, comm::NetworkKind::kRailOptimized, 0, {}).fabrics;
  comm::ClusterFabrics off = on;
  off.nccl.nvls_tree_correction = false;
  const comm::GroupLayout g = comm::LayoutOf(16, 1, 8);
  const double latency = comm::NcclLatency(spec::NcclAlgo::kNvlsTree, comm::Protocol::kSimple, 2, 0, g, on,
                                           comm::SearchChannels(g, on));
  comm::PlanOptions simple;
  simple.protocol = comm::Protocol::kSimple;
  struct Case {
    double bytes, factor;
  };
  for (const Case& k : {Case{64 * 1048576.0, 0.8}, Case{512 * 1048576.0, 0.9}, Case{2048 * 1048576.0, 1.0}}) {
    double t_on = 0, t_off = 0;
    ASSERT_TRUE(comm::MakePlan(AllReduce(), comm::Algorithm::kNvlsTree, k.bytes, g, on, simple, &t_on));
    ASSERT_TRUE(comm::MakePlan(AllReduce(), comm::Algorithm::kNvlsTree, k.bytes, g, off, simple, &t_off));
    std::printf("  2 x dgx-b200, %4.0f MiB NVLS-Tree: %.1f us corrected, %.1f us not\n", k.bytes / 1048576,
                1e6 * t_on, 1e6 * t_off);
    EXPECT_NEAR((t_off - latency) / k.factor, t_on - latency, 1e-12) << k.bytes;
  }
  // The key leaves the Tree alone (512 MiB is past the Tree's 23 entries
  // either way).
  double tree_on = 0, tree_off = 0;
  comm::MakePlan(AllReduce(), comm::Algorithm::kTree, 512 * 1048576.0, g, on, simple, &tree_on);
  comm::MakePlan(AllReduce(), comm::Algorithm::kTree, 512 * 1048576.0, g, off, simple, &tree_off);
  EXPECT_DOUBLE_EQ(tree_off, tree_on);
}

// NCCL's search on Blackwell (reference 2.4; comm::SearchChannels): the most
// channels x speed from the first inter speed that fits the NIC down to 0.49
// of it, each channel through every GPU's 721.8 GB/s of NVLink. GB200 racks
// (400 Gb/s = 50 GB/s NICs): 48 gives 15 channels (720), 45.1 gives 16
// (721.6, the best), 40 gives 18 (720). GB300 (800 Gb/s): from 96 (7
// channels, 672) to 48, 80 x 9 = 720 ties 48 x 15 and the faster wins. DGX
// B200 keeps one 48 GB/s channel per NIC, 8 in all, as DGX H100 does.
TEST(NcclBlackwellTest, SearchFindsNcclsChannels) {
  struct Case {
    const char* system;
    int64_t gpus;
    int64_t channels;
    double speed;
  };
  for (const Case& k : {Case{"gb200-nvl72", 144, 16, 45.1e9}, Case{"gb300-nvl72", 144, 9, 80e9},
                        Case{"dgx-b200", 16, 8, 48e9}}) {
    const spec::SystemSpec s = spec::LoadSystem(k.system, "--system");
    const ClusterNetwork n = MakeClusterNetwork(s, k.gpus, comm::NetworkKind::kRailOptimized, 0, {});
    const comm::NcclChannels ch = comm::SearchChannels(comm::LayoutOf(k.gpus, 1, s.hb_domain_size), n.fabrics);
    EXPECT_EQ(k.channels, ch.channels) << k.system;
    EXPECT_DOUBLE_EQ(k.speed, ch.channel_Bps) << k.system;
  }
}

// One rack, 72 GPUs: NCCL runs NVLS. The preset's NVLS efficiency (0.962)
// and NVLS latency (606 us) are fitted on these five rows (least squares on
// log time): predicted 606 us + S x 2 x 71/72 / (0.962 x 900 GB/s).
TEST(NcclBlackwellTest, InRackNvls) {
  const spec::SystemSpec gb200 = spec::LoadSystem("gb200-nvl72", "--system");
  const std::vector<std::vector<std::string>> rows = testutil::ReadReferenceCsv("nccl-tests-gb200-nvl72.csv");
  ASSERT_EQ(5u, rows.size());
  const ClusterNetwork n = MakeClusterNetwork(gb200, 72, comm::NetworkKind::kRailOptimized, 0, {});
  double sum = 0;
  std::printf("%12s %10s %10s %9s %9s %7s  %s\n", "bytes", "meas us", "pred us", "meas bus", "pred bus", "error",
              "algorithm");
  for (const std::vector<std::string>& r : rows) {
    const double bytes = std::stod(r[2]);
    const double measured_s = std::stod(r[3]) * 1e-6;
    double predicted_s = 0;
    const comm::Plan plan =
        *comm::MakePlan(AllReduce(), comm::Algorithm::kAuto, bytes, comm::LayoutOf(72, 1, 72), n.fabrics, {},
                        &predicted_s);
    const double error = predicted_s / measured_s - 1;
    std::printf("%12.0f %10.1f %10.1f %9.1f %9.1f %+6.1f%%  %s %s\n", bytes, 1e6 * measured_s, 1e6 * predicted_s,
                BusBw(bytes, 72, measured_s) / 1e9, BusBw(bytes, 72, predicted_s) / 1e9, 100 * error, plan.algorithm,
                plan.protocol);
    EXPECT_STREQ("in-switch", plan.algorithm) << r[2];
    EXPECT_LE(std::fabs(error), 0.035) << r[2];
    sum += std::fabs(error);
  }
  std::printf("mean absolute error %.1f%%\n", 100 * sum / 5);
  EXPECT_LE(sum / 5, 0.025);
}

// Three NVL partitions of 4 or 8 GPUs on three racks, InfiniBand only, NVLS
// off (NCCL_NVLS_ENABLE=0, so no in-switch reduction). The partition is the
// NVLink domain. Ring: 4 (8) channels, one per GPU's NIC, each NIC carries
// 2 x 11/12 (2 x 23/24) of S / 4 (S / 8): busbw = NICs x 50 GB/s x the
// ring's efficiency (0.9839, fitted on the two ring rows). Tree: NCCL's
// trees over three nodes are chains, so a head carries at most 3 tree edges
// of S / (2 x channels) each way (not 4 as beyond 3 nodes): busbw = 2(n-1)/n
// x channels x 2/3 x 50 GB/s x the tree's efficiency (0.9546, fitted on the
// two tree rows). NCCL's own estimate caps the tree at channels x 24 GB/s
// (Blackwell's perChMaxTreeBw beyond two nodes), so auto picks the ring, as
// the issue reports; forced, the tree runs as fast as its NICs allow.
TEST(NcclBlackwellTest, PartitionsAcrossRacks) {
  spec::SystemSpec gb200 = spec::LoadSystem("gb200-nvl72", "--system");
  gb200.hb_in_network_allreduce_efficiency = 0;  // NCCL_NVLS_ENABLE=0
  const std::vector<std::vector<std::string>> rows = testutil::ReadReferenceCsv("nccl-tests-gb200-partitions.csv");
  ASSERT_EQ(4u, rows.size());
  double sum = 0;
  std::printf("%4s %5s %-5s %9s %9s %7s  %s\n", "GPUs", "part", "algo", "meas bus", "pred bus", "error", "chosen");
  for (const std::vector<std::string>& r : rows) {
    const int64_t per_partition = std::stoll(r[1]), gpus = std::stoll(r[2]);
    const double bytes = std::stod(r[3]);
    const bool tree = r[4] == "tree";
    const double measured_s = bytes / (std::stod(r[5]) * 1e9);
    const ClusterNetwork n = MakeClusterNetwork(gb200, gpus, comm::NetworkKind::kRailOptimized, per_partition, {});
    const comm::GroupLayout g = comm::LayoutOf(gpus, 1, per_partition);
    double predicted_s = 0;
    const comm::Plan plan = *comm::MakePlan(AllReduce(), tree ? comm::Algorithm::kTree : comm::Algorithm::kAuto,
                                            bytes, g, n.fabrics, {}, &predicted_s);
    const double error = predicted_s / measured_s - 1;
    std::printf("%4lld %5lld %-5s %9.1f %9.1f %+6.1f%%  %s %s\n", static_cast<long long>(gpus),
                static_cast<long long>(per_partition), r[4].c_str(), std::stod(r[6]),
                BusBw(bytes, gpus, predicted_s) / 1e9, 100 * error, plan.algorithm, plan.protocol);
    EXPECT_STREQ(tree ? "tree" : "ring", plan.algorithm) << r[2] << " " << r[4];
    EXPECT_LE(std::fabs(error), 0.015) << r[2] << " " << r[4];
    sum += std::fabs(error);
  }
  std::printf("mean absolute error %.1f%%\n", 100 * sum / 4);
  EXPECT_LE(sum / 4, 0.01);
}

// Whole racks across InfiniBand with NVLS on (tests/data/nccl-tests-gb200-racks.csv,
// nothing fitted on these rows). NCCL runs NVLS-Tree: NVLS in each rack and a double
// binary tree of the rack's 16 heads (its search channels), each head's NIC carrying
// S / 16 each way on two racks and 2 S / 16 beyond three (4 tree edges of S / 32).
// Two racks: the heads' NICs (16 GiB: 21.5 ms at line rate) hide behind the NVLS
// stage (40.5 ms), as measured (42.1 ms). Twenty racks: the tree takes 2 x 21.5 ms,
// as long as the NVLS stage, and the model, which pipelines the two, predicts about
// 48 ms where nccl-tests measures 84.6 ms: the measured time per byte (4.95 ms/GB
// from 8 to 16 GB) is the NVLS stage's (2.55) plus the tree's (2.62), not the larger
// of them. The test prints every row, holds two racks within 7% from 4 GB on, and
// checks the twenty-rack gap stays what docs/MODEL.md states (predicted 40-50% fast
// from 4 GB on) until the model explains it.
TEST(NcclBlackwellTest, AcrossRacksWithNvls) {
  const spec::SystemSpec gb200 = spec::LoadSystem("gb200-nvl72", "--system");
  const std::vector<std::vector<std::string>> rows = testutil::ReadReferenceCsv("nccl-tests-gb200-racks.csv");
  ASSERT_EQ(12u, rows.size());
  std::printf("%5s %12s %10s %10s %9s %9s %7s  %s\n", "racks", "bytes", "meas us", "pred us", "meas bus", "pred bus",
              "error", "algorithm");
  for (const std::vector<std::string>& r : rows) {
    const int64_t racks = std::stoll(r[0]), gpus = std::stoll(r[1]);
    const double bytes = std::stod(r[2]);
    const double measured_s = std::stod(r[3]) * 1e-6;
    const ClusterNetwork n = MakeClusterNetwork(gb200, gpus, comm::NetworkKind::kRailOptimized, 0, {});
    double predicted_s = 0;
    const comm::Plan plan = *comm::MakePlan(AllReduce(), comm::Algorithm::kAuto, bytes, comm::LayoutOf(gpus, 1, 72),
                                            n.fabrics, {}, &predicted_s);
    const double error = predicted_s / measured_s - 1;
    std::printf("%5lld %12.0f %10.1f %10.1f %9.1f %9.1f %+6.1f%%  %s %s\n", static_cast<long long>(racks), bytes,
                1e6 * measured_s, 1e6 * predicted_s, BusBw(bytes, gpus, measured_s) / 1e9,
                BusBw(bytes, gpus, predicted_s) / 1e9, 100 * error, plan.algorithm, plan.protocol);
    EXPECT_STREQ("nvls-tree", plan.algorithm) << r[0] << " racks, " << r[2];
    if (bytes < 4e9) continue;  // below, both miss a fixed cost NCCL pays across racks
    if (racks == 2) {
      EXPECT_LE(std::fabs(error), 0.07) << r[2];
    }
    if (racks == 20) {
      EXPECT_GE(error, -0.50) << r[2];
      EXPECT_LE(error, -0.40) << r[2];
    }
  }
}

}  // namespace
}  // namespace railsim::perf
