// A job on part of each HB domain (--gpus-per-domain): the context it is
// timed in, where its groups sit, and the refusals.
#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/perf/context.h"
#include "railsim/perf/estimate.h"
#include "railsim/perf/groups.h"
#include "railsim/spec/presets.h"
#include "testutil/strategy.h"

namespace railsim::perf {
namespace {

PerfContext Gb200Job(int64_t gpus, int64_t per_domain, const std::string& placement = "tp-cp-ep-dp-pp") {
  NetworkOptions o;
  o.gpus_per_domain = per_domain;
  PerfContext c = MakePerfContext(spec::LoadModel("llama3-70b", "--model"), spec::LoadSystem("gb200-nvl72", "--system"),
                                  gpus, comm::NetworkKind::kRailOptimized, 0, o);
  c.placement = spec::LoadPlacement(placement, "--placement");
  return c;
}

std::string ErrorOf(int64_t gpus, int64_t per_domain) {
  try {
    Gb200Job(gpus, per_domain);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// 256 GPUs on NVL72 racks with a Slurm segment of 64 GPUs each, as NVIDIA's
// MLPerf configs run Llama 3.1 405B: 4 racks of 72, 8 GPUs of each idle.
// With MLPerf's tensor-pipeline-data mapping (Megatron-LM's
// --use-tp-pp-dp-mapping) a tp 8 x pp 8 group fills one rack's 64 GPUs: every
// TP and PP group inside one domain, the 4 DP ranks of a model replica one
// per rack on the same rail.
TEST(DomainUseTest, Gb200JobOf256GpusOn64OfEachRack) {
  const PerfContext c = Gb200Job(256, 64, "tp-pp-dp");
  EXPECT_EQ(256, c.gpus);
  EXPECT_EQ(72, c.domain_use.size);
  EXPECT_EQ(64, c.domain_use.used);
  EXPECT_EQ(64, c.fabrics.hb_domain_size);  // the ranks' domains
  EXPECT_EQ(72, c.built_hb_domain_size());
  EXPECT_EQ(288, c.domain_use.BuiltGpus(c.gpus));
  // Job GPU 64 (the first of rack 1) is GPU 72 of the built cluster; GPU 64
  // of the built cluster (rack 0's 65th) is idle.
  EXPECT_EQ(72, c.domain_use.GpuId(64));
  EXPECT_EQ(-1, c.domain_use.JobGpu(64));
  EXPECT_EQ(64, c.domain_use.JobGpu(72));

  const spec::Strategy s = testutil::MakeStrategy(8, 8, 4, 1, 64);
  const ParallelGroups g = PlaceGroups(c, s);
  EXPECT_EQ(1, g[GroupKind::kTp].domains);
  EXPECT_EQ(8, g[GroupKind::kTp].local);
  EXPECT_EQ(1, g[GroupKind::kPp].domains);
  EXPECT_EQ(8, g[GroupKind::kPp].local);
  EXPECT_EQ(4, g[GroupKind::kDp].domains);
  EXPECT_EQ(1, g[GroupKind::kDp].local);
  EXPECT_TRUE(g[GroupKind::kDp].rail_aligned);
  for (const GroupCheck& check : CheckPlacement(c, s)) {
    const GroupSpread expected = check.kind == GroupKind::kDp ? GroupSpread::kSameRail : GroupSpread::kHbDomain;
    EXPECT_EQ(expected, check.spread) << GroupKindName(check.kind);
  }
  const Estimate e = EstimateIteration(c, s);
  EXPECT_GT(e.iteration_time_s, 0);
}

// Megatron's default order puts dp before pp: with dp 4 a pipeline's stages
// sit 32 ranks apart, two per rack of 64 (stages 0-1 in rack 0, 2-3 in
// rack 1, ...): 4 domains, 2 members each.
TEST(DomainUseTest, DefaultOrderSpreadsThePipelineOverTheRacks) {
  const PerfContext c = Gb200Job(256, 64);
  const ParallelGroups g = PlaceGroups(c, testutil::MakeStrategy(8, 8, 4, 1, 64));
  EXPECT_EQ(1, g[GroupKind::kTp].domains);
  EXPECT_EQ(4, g[GroupKind::kPp].domains);
  EXPECT_EQ(2, g[GroupKind::kPp].local);
}

// The NIC network is built for the whole domains. At radix 64 a leaf has 32
// down-links: 2,048 GPUs in whole domains of 8 are 8 rails of 256 GPUs, 64
// leaves under one spine layer (2 tiers); the same job on 4 of each domain's
// 8 GPUs occupies 512 domains, 4,096 GPUs whose 128 leaves need a third tier.
TEST(DomainUseTest, NetworkIsSizedForTheWholeDomains) {
  const spec::SystemSpec h100 = spec::LoadSystem("dgx-h100", "--system");
  NetworkOptions half;
  half.gpus_per_domain = 4;
  const ClusterNetwork job = MakeClusterNetwork(h100, 2048, comm::NetworkKind::kRailOptimized, 0, half);
  const ClusterNetwork built = MakeClusterNetwork(h100, 4096, comm::NetworkKind::kRailOptimized);
  EXPECT_EQ(2, MakeClusterNetwork(h100, 2048, comm::NetworkKind::kRailOptimized).shape.tiers);
  EXPECT_EQ(3, job.shape.tiers);
  EXPECT_EQ(built.shape.tiers, job.shape.tiers);
  EXPECT_EQ(built.shape.radix, job.shape.radix);
  EXPECT_EQ(built.shape.leaf_gpus, job.shape.leaf_gpus);
  EXPECT_EQ(built.fabrics.nic.latency_s, job.fabrics.nic.latency_s);
  EXPECT_EQ(4, job.fabrics.hb_domain_size);
  EXPECT_EQ(8, job.domain_use.size);
}

// All K GPUs of each domain, given or not, is the same context.
TEST(DomainUseTest, AllOfEachDomainIsTheDefault) {
  const PerfContext given = Gb200Job(288, 72), omitted = Gb200Job(288, 0);
  EXPECT_TRUE(given.domain_use.whole());
  EXPECT_EQ(omitted.fabrics.hb_domain_size, given.fabrics.hb_domain_size);
  EXPECT_EQ(omitted.shape.tiers, given.shape.tiers);
  const spec::Strategy s = testutil::MakeStrategy(8, 4, 9, 1, 72);
  EXPECT_EQ(EstimateIteration(omitted, s).iteration_time_s, EstimateIteration(given, s).iteration_time_s);
}

TEST(DomainUseTest, Refusals) {
  EXPECT_EQ("--gpus: expected the HB domain size 72 to divide --gpus 256; a job that uses part of each domain takes "
            "--gpus-per-domain (such as 64: 4 HB domains of 72, 64 GPUs used in each)",
            ErrorOf(256, 0));
  EXPECT_EQ("--gpus: expected the HB domain size 72 to divide --gpus 16; a job that uses part of each domain takes "
            "--gpus-per-domain (such as 16: 1 HB domain of 72, 16 GPUs used in each)",
            ErrorOf(16, 0));
  EXPECT_EQ("--gpus: expected a multiple of --gpus-per-domain 64, got 250", ErrorOf(250, 64));
  EXPECT_EQ("--gpus-per-domain: expected an integer in [1, 72] (the GPUs of one HB domain), got 73",
            ErrorOf(256, 73));
}

}  // namespace
}  // namespace railsim::perf
