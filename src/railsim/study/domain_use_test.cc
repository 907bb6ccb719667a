// A job on part of each HB domain (--gpus-per-domain) in the studies that
// work on the built graph: the traffic analysis, the collective and its
// simulation, the failure study, search's segments and compare's scenario.
// The job's GPU g of domain d must be the graph's GPU d K + g, with its own
// NIC and rail.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/spec/model.h"
#include "railsim/spec/presets.h"
#include "railsim/spec/scenario.h"
#include "testutil/strategy.h"
#include "railsim/study/collective_study.h"
#include "railsim/study/compare.h"
#include "railsim/study/design_setup.h"
#include "railsim/request/failure_flags.h"
#include "railsim/study/idle_search.h"
#include "railsim/request/job_flags.h"
#include "railsim/study/network_study.h"
#include "railsim/study/traffic.h"

namespace railsim::study {
namespace {

using perf::Parallelism;

// The hand-counted model of TrafficTest.SixteenGpusPairByPair: h 256, 4
// heads, ffn 1024, 4 layers, vocabulary 1000 (1024 padded for TP 4),
// sequence 128.
spec::ModelSpec TinyGpt() {
  return spec::ParseModelJson(R"({"name": "tiny-gpt", "num_layers": 4, "hidden_size": 256,
      "num_attention_heads": 4, "num_query_groups": 4, "ffn_hidden_size": 1024, "vocab_size": 1000,
      "seq_length": 128, "position_embedding_type": "rope", "normalization": "RMSNorm",
      "add_bias_linear": false, "hidden_dropout": 0, "attention_dropout": 0})");
}

// 16 GPUs over 4 DGX A100 domains of 8, 4 used in each (K = 8, N = 4): the
// job's GPU g is the graph's GPU (g / 4) 8 + g % 4.
int64_t Built(int64_t g) { return g / 4 * 8 + g % 4; }

perf::PerfContext HalfDomains(const spec::ModelSpec& m, int64_t gpus) {
  perf::NetworkOptions o;
  o.gpus_per_domain = 4;
  return perf::MakePerfContext(m, spec::LoadSystem("dgx-a100", "--system"), gpus, comm::NetworkKind::kRailOptimized,
                               0, o);
}

// TP 4 inside each domain's 4 used GPUs, DP 4 across the 4 domains on rails
// 0-3, one micro-batch (global batch 4). Per GPU:
// TP: 4 layers x 4 all-reduces + the embedding's and the output's = 18
//   all-reduces of 2 B x 128 x 256 = 65,536 B; a ring of 4 sends 2 (4 - 1) / 4
//   of it along each edge: 18 x 1.5 x 65,536 to the next GPU of the domain.
// DP: the fp32 gradient of 4 layers x 197,120 parameters + the word embedding
//   1024 x 256 / 4 = 65,536 (tied: one copy with pp 1) + the final norm 256 =
//   854,272 parameters, all-reduced by a ring of 4: 1.5 x 4 B x 854,272 to the
//   GPU of the same rail in the next domain.
TEST(DomainUseTest, TrafficOfSixteenGpusOnHalfOfFourDomains) {
  const perf::PerfContext c = HalfDomains(TinyGpt(), 16);
  TrafficOptions o;
  const TrafficResult r = AnalyzeTraffic(c, testutil::MakeStrategy(4, 1, 4, 1, 4), o);
  EXPECT_EQ(32, r.gpus);  // the graph: 4 domains of 8
  EXPECT_EQ(8, r.hb_domain_size);
  EXPECT_EQ(4, r.gpus_per_domain);
  EXPECT_EQ(16 * 15, r.gpu_pairs());

  const double tp = 18 * 1.5 * 65536, dp = 1.5 * 4 * 854272;
  std::map<std::pair<int64_t, int64_t>, std::array<double, perf::kParallelisms>> expected;
  for (int64_t g = 0; g < 16; ++g) {
    const int64_t domain = g / 4, local = g % 4;
    expected[{Built(g), Built(domain * 4 + (local + 1) % 4)}][int(Parallelism::kTp)] = tp;
    expected[{Built(g), Built((g + 4) % 16)}][int(Parallelism::kDp)] = dp;
  }
  ASSERT_EQ(expected.size(), r.pairs.size());
  std::set<int64_t> rails;
  for (const PairTraffic& p : r.pairs) {
    auto it = expected.find({p.src, p.dst});
    ASSERT_NE(it, expected.end()) << p.src << " -> " << p.dst;
    for (int i = 0; i < perf::kParallelisms; ++i) {
      EXPECT_DOUBLE_EQ(it->second[size_t(i)], p.bytes[size_t(i)]) << p.src << " -> " << p.dst;
    }
    EXPECT_EQ(p.src / 8 == p.dst / 8 ? TrafficClass::kHbDomain : TrafficClass::kSameRail, p.traffic_class);
    rails.insert(p.src % 8);
    rails.insert(p.dst % 8);
  }
  EXPECT_EQ((std::set<int64_t>{0, 1, 2, 3}), rails);
  EXPECT_DOUBLE_EQ(16 * dp, r.bytes_by_class[int(TrafficClass::kSameRail)]);
  // Each DP byte crosses a NIC-to-leaf link up and one down (one leaf per
  // rail at 4 domains).
  EXPECT_DOUBLE_EQ(2 * 16 * dp, r.bytes_by_tier[int(TrafficTier::kNicToLeaf)]);
  for (const perf::GroupCheck& g : r.placement_check) {
    if (g.kind != perf::GroupKind::kDp) continue;
    EXPECT_EQ(4, g.groups);
    EXPECT_EQ(4, g.groups_spanning_domains);
    EXPECT_EQ(perf::GroupSpread::kSameRail, g.spread);
  }
}

// The DP all-reduce of that job (TP 4, DP 4 on 16 GPUs, 4 of each DGX H100
// domain of 8) at line rate, NIC 50 GB/s: a ring of 4, one member per domain,
// 6 steps of 64 MiB / 4 on each NIC: 6 x 16,777,216 B / 50 GB/s = 2.0133 ms.
// Simulated on the whole domains, the flows leave from GPUs 0-3 of each
// domain: only rails 0-3 carry bytes.
TEST(DomainUseTest, CollectiveOnHalfOfFourDomainsRunsOnRailsZeroToThree) {
  CollectiveRequest r;
  r.system = spec::LoadSystem("dgx-h100", "--system");
  r.gpus = 16;
  r.network_options.gpus_per_domain = 4;
  r.hb_bw_Bps = 450e9;
  r.nic_bw_Bps = 50e9;
  r.op = comm::Op::kAllReduce;
  r.algorithm = comm::Algorithm::kRing;
  r.bytes = 64.0 * 1024 * 1024;
  spec::Strategy s = testutil::MakeStrategy(4, 1, 4, 1, 4);
  r.group = PlacedGroupFamily(s, spec::Placement{}, GroupKind::kDp, JobDomainSize(r));
  EXPECT_EQ(4, r.group.size);
  EXPECT_EQ(4, r.group.stride);
  r.simulate = true;
  const CollectiveOutcome o = RunCollective(r);
  EXPECT_NEAR(6 * 16777216 / 50e9, o.analytic_s, 1e-12);
  EXPECT_NEAR(1, o.sim.time_s / o.analytic_s, 0.02);
  EXPECT_EQ(32, o.topology.gpus());
  // The rail of each loaded link's lower end (a GPU or a NIC: GPU g of
  // the graph is on rail g % 8).
  std::set<int32_t> rails;
  for (const sim::LinkLoad& l : o.sim.links) {
    const net::Link& link = o.topology.links()[size_t(l.link)];
    const net::Node& lower = o.topology.nodes()[size_t(link.a)];
    if (lower.kind != net::NodeKind::kGpu && lower.kind != net::NodeKind::kNic) continue;
    EXPECT_LE(lower.rail, 3) << "link " << l.link << " carries " << l.bytes << " B";
    rails.insert(lower.rail);
  }
  EXPECT_EQ((std::set<int32_t>{0, 1, 2, 3}), rails);
}

// The simulator sees the placement the model times: the DP all-reduce of
// tp 8 x pp 8 x dp 4 on 64 GPUs of each of 4 GB200 NVL72 racks, placed
// tensor-pipeline-data (one model replica per rack), is a ring over job GPUs
// 0, 64, 128, 192: GPUs 0, 72, 144, 216 of the racks as built. At line rate
// (NIC 50 GB/s) it takes the 2.0133 ms of a ring of 4 across domains, and
// the simulation of every flow on the 288-GPU graph agrees.
TEST(DomainUseTest, SimulatedDpAllReduceOnGb200MatchesTheModel) {
  CollectiveRequest r;
  r.system = spec::LoadSystem("gb200-nvl72", "--system");
  r.gpus = 256;
  r.network_options.gpus_per_domain = 64;
  r.hb_bw_Bps = 900e9;
  r.nic_bw_Bps = 50e9;
  r.op = comm::Op::kAllReduce;
  r.algorithm = comm::Algorithm::kRing;
  r.bytes = 64.0 * 1024 * 1024;
  const spec::Strategy s = testutil::MakeStrategy(8, 8, 4, 1, 64);
  r.group = PlacedGroupFamily(s, spec::LoadPlacement("tp-pp-dp", "--placement"), GroupKind::kDp, JobDomainSize(r));
  EXPECT_EQ(4, r.group.size);
  EXPECT_EQ(64, r.group.stride);
  r.simulate = true;
  const CollectiveOutcome o = RunCollective(r);
  EXPECT_EQ(288, o.topology.gpus());
  EXPECT_NEAR(6 * 16777216 / 50e9, o.analytic_s, 1e-12);
  EXPECT_NEAR(1, o.sim.time_s / o.analytic_s, 0.02);
}

request::FailureFlags Gb200Failure(const std::string& device) {
  request::FailureFlags f;
  f.network = "rail-optimized";
  f.system = "gb200-nvl72";
  f.gpus = "128";
  f.gpus_per_domain = "64";
  f.fail = device;
  f.fail_given = true;
  f.no_simulate = true;
  return f;
}

// 128 GPUs on 64 of each of 2 NVL72 racks: GPU 64 of the graph is rack 0's
// first idle GPU; losing it stops nothing. GPU 0 is the job's.
TEST(DomainUseTest, AnIdleGpuFailingDoesNotStopTheJob) {
  const request::FailureStudy idle = request::RunFailureFlags(Gb200Failure("gpu64"));
  ASSERT_EQ(1u, idle.explicit_failures.size());
  EXPECT_EQ(std::vector<int64_t>{64}, idle.explicit_failures[0].removed);
  EXPECT_FALSE(idle.explicit_failures[0].interrupts);
  const request::FailureStudy job = request::RunFailureFlags(Gb200Failure("gpu0"));
  EXPECT_TRUE(job.explicit_failures[0].interrupts);
  // The graph holds both racks whole: gpu143 is its last GPU.
  EXPECT_NO_THROW(request::RunFailureFlags(Gb200Failure("gpu143")));
}

// search --gpus-per-domain auto on 256 GPUs of NVL72 racks: 72 does not
// divide 256; the Slurm segments of 16, 4 and 1 trays (64, 16, 4 GPUs) do.
TEST(DomainUseTest, AutoTriesTheSlurmSegmentsThatDivideTheJob) {
  request::JobFlags f;
  f.model.model = "llama3.1-8b";
  f.system = "gb200-nvl72";
  f.gpus = "256";
  f.global_batch = "256";
  f.gpus_per_domain = "auto";
  const std::vector<request::Job> jobs = request::ParseSearchJobs(f);
  ASSERT_EQ(3u, jobs.size());
  EXPECT_EQ(64, jobs[0].context.domain_use.used);
  EXPECT_EQ(16, jobs[1].context.domain_use.used);
  EXPECT_EQ(4, jobs[2].context.domain_use.used);
  for (const request::Job& j : jobs) EXPECT_EQ(72, j.context.domain_use.size);
  f.gpus = "288";  // whole racks fit, 64 does not divide 288
  const std::vector<request::Job> whole = request::ParseSearchJobs(f);
  ASSERT_EQ(3u, whole.size());
  EXPECT_EQ(72, whole[0].context.domain_use.used);
  EXPECT_EQ(16, whole[1].context.domain_use.used);
  EXPECT_EQ(4, whole[2].context.domain_use.used);
  f.gpus_per_domain = "64,64";
  try {
    request::ParseSearchJobs(f);
    ADD_FAILURE() << "a segment listed twice";
  } catch (const Error& e) {
    EXPECT_STREQ("--gpus-per-domain: 64 is listed twice", e.what());
  }
}

// Merged searches: every result says its segment, and the tried list is kept.
TEST(DomainUseTest, SegmentSearchesAreRankedTogether) {
  request::JobFlags f;
  f.model.model = "llama3.1-8b";
  f.system = "gb200-nvl72";
  f.gpus = "128";
  f.global_batch = "128";
  f.gpus_per_domain = "64,16";
  std::vector<perf::PerfContext> contexts;
  for (const request::Job& j : request::ParseSearchJobs(f)) contexts.push_back(j.context);
  search::SearchOptions o;
  o.global_batch = 128;
  o.top_k = 1000;
  const search::SearchResult r = SearchSegments(contexts, o, 0);
  EXPECT_EQ((std::vector<int64_t>{64, 16}), r.gpus_per_domain_tried);
  std::set<int64_t> seen;
  for (const search::RankedStrategy& x : r.results) seen.insert(x.gpus_per_domain);
  EXPECT_EQ((std::set<int64_t>{16, 64}), seen);
  for (size_t i = 1; i < r.results.size(); ++i) {
    EXPECT_LE(r.results[i - 1].estimate.iteration_time_s, r.results[i].estimate.iteration_time_s);
  }
}

// A scenario's gpus_per_domain: its 128 GPUs are the job's, on 64 GPUs of
// each of 2 NVL72 racks; the 144-GPU cluster is built and priced whole (as
// --gpus-per-domain takes --gpus elsewhere).
TEST(DomainUseTest, CompareScenarioJobUsesPartOfEachRack) {
  const spec::Scenario sc = spec::ParseScenarioJson(R"({"name": "segments", "gpus": 128,
      "hb_domain_sizes": [72], "radixes": [64], "port_speed": "400Gbps", "model": "llama3.1-8b",
      "system": "gb200-nvl72", "global_batch_sizes": [128], "gpus_per_domain": 64})");
  EXPECT_EQ(64, sc.gpus_per_domain);
  EXPECT_EQ(128, sc.JobGpus(72));
  EXPECT_EQ(144, sc.BuiltGpus(72));
  EXPECT_EQ(8, sc.GpusPerDomain(8));  // domains no larger than the segment are used whole
  EXPECT_EQ(128, sc.BuiltGpus(8));
  EXPECT_EQ(sc.gpus_per_domain, spec::ParseScenarioJson(spec::ScenarioToJson(sc)).gpus_per_domain);
  const spec::ModelSpec model = spec::LoadModel("llama3.1-8b", "--model");
  ScenarioSystems systems;
  systems.fallback = spec::LoadSystem("gb200-nvl72", "--system");
  const spec::PortClass port = PortClassFor(spec::LoadCatalog("default", "--catalog"), sc.port_speed_Bps, "port_speed");
  const CompareResult r = RunCompare(sc, port, &model, systems, 1);
  ASSERT_EQ(1u, r.network.size());
  EXPECT_EQ(144, r.network[0].params.gpus);
  ASSERT_EQ(1u, r.training.size());
  const TrainingCase& t = r.training[0];
  ASSERT_TRUE(t.rail_optimized.fits && t.rail_only.fits);
  EXPECT_EQ(128, t.rail_optimized.best.strategy.gpus());
  EXPECT_EQ(128, t.rail_only.best.strategy.gpus());
  EXPECT_EQ(64, t.rail_optimized.best.gpus_per_domain);
}

// GB200 NVL72 racks against DGX B200 nodes in one scenario: each domain
// size's jobs run on its own system, on the same 128 GPUs, and each cluster
// is priced with its own server.
TEST(DomainUseTest, EachDomainSizeTimesItsJobsOnItsOwnSystem) {
  const spec::Scenario sc = spec::ParseScenarioJson(R"({"name": "racks-or-nodes", "gpus": 128,
      "hb_domain_sizes": [8, 72], "radixes": [64], "port_speed": "400Gbps", "model": "llama3.1-8b",
      "system": "dgx-b200", "hb_domain_systems": {"72": "gb200-nvl72"}, "global_batch_sizes": [128],
      "gpus_per_domain": 64})");
  EXPECT_EQ("gb200-nvl72", sc.SystemFor(72));
  EXPECT_EQ("dgx-b200", sc.SystemFor(8));
  EXPECT_EQ(sc.hb_domain_systems, spec::ParseScenarioJson(spec::ScenarioToJson(sc)).hb_domain_systems);
  const spec::ModelSpec model = spec::LoadModel("llama3.1-8b", "--model");
  ScenarioSystems systems;
  systems.fallback = spec::LoadSystem("dgx-b200", "--system");
  systems.by_size.emplace(72, spec::LoadSystem("gb200-nvl72", "--system"));
  const spec::PortClass port = PortClassFor(spec::LoadCatalog("default", "--catalog"), sc.port_speed_Bps, "port_speed");
  const CompareResult r = RunCompare(sc, port, &model, systems, 1);
  EXPECT_EQ("dgx-b200 and gb200-nvl72", r.system_name);
  EXPECT_EQ("gb200-nvl72", r.SystemNameFor(72));
  ASSERT_EQ(2u, r.network.size());
  EXPECT_EQ(128, r.network[0].params.gpus);  // 16 DGX B200
  EXPECT_EQ(144, r.network[1].params.gpus);  // 2 racks
  ASSERT_EQ(2u, r.training.size());
  for (const TrainingCase& t : r.training) {
    ASSERT_TRUE(t.rail_optimized.fits) << t.hb_domain_size;
    EXPECT_EQ(128, t.rail_optimized.best.strategy.gpus());
  }
  // The same job is timed on each system's own GPU: GB200's is faster.
  const double b200 = r.training[0].rail_optimized.time_s();
  const double gb200 = r.training[1].rail_optimized.time_s();
  EXPECT_LT(gb200, b200);
  // A domain size the scenario does not have is refused.
  EXPECT_THROW(
      {
        try {
          spec::ParseScenarioJson(R"({"name": "x", "gpus": 128, "hb_domain_sizes": [8], "radixes": [64],
              "port_speed": "400Gbps", "hb_domain_systems": {"72": "gb200-nvl72"}})");
        } catch (const Error& e) {
          EXPECT_STREQ("/hb_domain_systems/72: expected one of hb_domain_sizes (8), got '72'", e.what());
          throw;
        }
      },
      Error);
}

}  // namespace
}  // namespace railsim::study
