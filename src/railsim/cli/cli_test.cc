// End-to-end tests of the railsim binary: outputs, JSON contracts, exit
// codes, determinism, and a matrix of bad inputs to every subcommand (each
// must exit 2 with exactly one stderr line naming the field).
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"
#include "railsim/spec/launcher_args.h"
#include "railsim/spec/presets.h"
#include "railsim/mpi/session.h"

namespace railsim::testutil {
namespace {

using Args = std::vector<std::string>;

nlohmann::json JsonOf(const Args& args) {
  RunResult r = RunRailsim(args);
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_EQ("", r.err);
  return nlohmann::json::parse(r.out);
}

const Args kEstimate = {"estimate", "--model", "megatron-1t", "--system", "dgx-h100", "--gpus", "4096",
                        "--tp", "8", "--pp", "16", "--global-batch-size", "2048", "--micro-batch-size", "1",
                        "--sequence-parallel", "--distributed-optimizer", "--recompute", "selective"};
const Args kSearch = {"search", "--model", "llama3-70b", "--system", "dgx-h100", "--gpus", "512",
                      "--global-batch-size", "512", "--top", "3"};

// Long work shows a progress line on stderr when it is a terminal, and
// nothing with --quiet or in a pipe; the output is the same either way.
TEST(CliTest, ProgressLineOnlyAtATerminal) {
  // About 3 s in a Release build; the line appears after the first second.
  const Args run = {"failures", "--gpus", "4096", "--trials", "200000", "--format", "json"};
  RunResult terminal = RunRailsimAtTerminal(run);
  ASSERT_EQ(0, terminal.status) << terminal.err;
  EXPECT_NE(std::string::npos, terminal.err.find("\rfailures: ")) << terminal.err;
  EXPECT_NE(std::string::npos, terminal.err.find("% of trials done, ")) << terminal.err;
  Args quiet_run = run;
  quiet_run.push_back("--quiet");
  RunResult quiet = RunRailsimAtTerminal(quiet_run);
  ASSERT_EQ(0, quiet.status) << quiet.err;
  EXPECT_EQ("", quiet.err);
  EXPECT_EQ(terminal.out, quiet.out);
  // Every subcommand takes --quiet.
  RunResult help = RunRailsim({"--help"});
  for (const char* command : {"compare", "network", "cost", "report", "estimate", "search", "traffic", "alltoall",
                              "collective", "failures", "presets"}) {
    EXPECT_NE(std::string::npos, help.out.find(std::string("  ") + command)) << command;
    EXPECT_NE(std::string::npos, RunRailsim({command, "--help"}).out.find("--quiet")) << command;
  }
  EXPECT_EQ(0, RunRailsim({"presets", "--quiet"}).status);
}

// compare's progress counts strategies, not searches: one MoE search
// enumerates hundreds of times the strategies of a dense one, and counted as
// equals the line sat at 45% for most of the run and then jumped to 100%.
TEST(CliTest, CompareProgressMovesEvenly) {
  RunResult r = RunRailsimAtTerminal({"compare", "--format", "json"});
  ASSERT_EQ(0, r.status) << r.err;
  std::vector<int> shown;
  for (size_t at = r.err.find("compare: "); at != std::string::npos; at = r.err.find("compare: ", at + 1)) {
    shown.push_back(std::atoi(r.err.c_str() + at + 9));
  }
  // About 3 s of wall time at ten lines a second after the first second.
  ASSERT_GE(shown.size(), 3u) << r.err;
  EXPECT_EQ(100, shown.back()) << r.err;
  int largest_jump = 0;
  for (size_t i = 1; i < shown.size(); ++i) {
    EXPECT_LE(shown[i - 1], shown[i]) << r.err;
    largest_jump = std::max(largest_jump, shown[i] - shown[i - 1]);
  }
  std::printf("  %zu progress lines, largest step %d points\n", shown.size(), largest_jump);
  EXPECT_LE(largest_jump, 35) << r.err;
}

// One side-by-side table per HB domain size (rail-optimized, Rail-only,
// ideal), then the verdict.
// A simulation over --max-memory is refused before it starts, with the
// estimate (128 ring flows of 16 bytes; the 64 MiB are the program and the
// graph) and what can help; --baseline applies only where there is one.
TEST(CliTest, SimulationsAreRefusedOverMaxMemoryAndBaselineNeedsRailOnly) {
  RunResult r = RunRailsim({"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes",
                            "64MiB", "--group", "dp", "--tp", "8", "--simulate", "--max-memory", "1MiB"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ(std::string("railsim: error: --max-memory: the simulation would hold 128 flows at once and need about "
                        "64 MiB, more than the limit 1 MiB; fewer GPUs, a larger --max-memory on a machine that "
                        "has it, or more MPI ranks (mpirun -np P: each holds about 1/P of the flows") +
                (mpi::MpiCompiledIn() ? "" : "; this railsim needs a build with -DRAILSIM_MPI=ON") +
                ") can help\n",
            r.err);
#ifndef RAILSIM_SANITIZED  // the sanitizers' shadow memory does not fit under `ulimit -v`
  // Under an address-space limit the default --max-memory is what the limit
  // leaves, so a 17 GiB simulation is refused before any work (exit 2), not
  // killed by the allocator (exit 3, "out of memory").
  r = RunProgram("sh", {"-c", "ulimit -v 2000000 && exec \"$0\" \"$@\"", RAILSIM_BINARY, "alltoall", "--system",
                        "dgx-h100", "--gpus", "32768", "--bytes-per-pair", "256KiB", "--simulate"});
  EXPECT_EQ(2, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.err.find("railsim: error: --max-memory: the simulation would hold 1073709056 flows"))
      << r.err;
#endif
  r = RunRailsim({"alltoall", "--system", "dgx-h100", "--gpus", "64", "--bytes-per-pair", "1MB", "--simulate",
                  "--baseline", "simulate"});
  EXPECT_EQ(2, r.status);
  EXPECT_EQ("railsim: error: --baseline: applies to --network rail-only with --simulate (the baseline is "
            "rail-optimized)\n",
            r.err);
}

TEST(CliTest, CompareRunsWithNoArguments) {
  RunResult r = RunRailsim({"compare"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ("", r.err);  // about 2 s of searches, but stderr is not a terminal
  const size_t k8 = r.out.find("\nHB domain 8: 32,768"), k256 = r.out.find("\nHB domain 256: 32,768");
  const size_t verdict = r.out.find("\nVerdict\n");
  ASSERT_NE(std::string::npos, k8);
  ASSERT_NE(std::string::npos, k256);
  ASSERT_NE(std::string::npos, verdict);
  ASSERT_LT(k8, k256);
  ASSERT_LT(k256, verdict);
  for (const std::string& table : {r.out.substr(k8, k256 - k8), r.out.substr(k256, verdict - k256)}) {
    for (const char* row : {"rail-optimized", "Rail-only", "ideal (K = N)", "network at radix 64",
                            "network at radix 128", "switches (tiers)", "transceivers", "cost", "power",
                            "Rail-only saves: cost", "megatron-1t at global batch 256",
                            "megatron-1t at global batch 4,096", "iteration time", "MFU", "best strategy",
                            "deepseek-v3 at global batch 15,360", "all-to-all, forwarding in sequence",
                            "all-to-all, forwarding pipelined"}) {
      EXPECT_NE(std::string::npos, table.find(row)) << row << " missing in\n" << table;
    }
  }
  // The paper's Table II (HB domain 256): 38% saved at radix 64, 77% at
  // radix 128; $94,306,304 for Rail-only at radix 64 (tests/data).
  const std::string k256_table = r.out.substr(k256, verdict - k256);
  EXPECT_NE(std::string::npos, k256_table.find("$94,306,304"));  // Rail-only, radix 64
  EXPECT_NE(std::string::npos, k256_table.find("(38.3%)"));
  EXPECT_NE(std::string::npos, k256_table.find("(76.6%)"));
  EXPECT_NE(std::string::npos, r.out.find("Rail-only saves $58,523,648 (38.3%) of network cost", verdict));
}

// A scenario's job trace: compare replays it on each design under each of
// the scenario's policies, and the verdict's shared-cluster sentence and the
// JSON carry the numbers. Hand check: 64 GPUs in 8 domains of 8; a 16-GPU
// and an 8-GPU job, both submitted at 0 for 600 s, fit side by side in whole
// domains under either policy (first-fit's lowest free GPUs are domains 0-1
// and 2): no wait, and on the rail designs (radix 16: each rail's 8 GPUs
// under one leaf) no slowdown and occupancy (16 + 8) x 600 / (64 x 600) =
// 0.375 over the span (every job came at once: first submission to last
// finish). Fat-tree's leaves hold 8 GPUs each: the 16-GPU job's ring hashes
// over its spines, which may only slow it.
TEST(CliTest, CompareWithAJobTraceQuantifiesTheSharedCluster) {
  const std::string dir = MakeTempDir();
  {
    std::ofstream trace(dir + "/trace.csv");
    trace << "submit_s,duration_s,gpus\n0,600,16\n0,600,8\n";
  }
  const std::string scenario = fmt::format(
      R"({{"name": "shared", "description": "two jobs", "gpus": 64, "hb_domain_sizes": [8], "radixes": [16],
          "port_speed": "400Gbps", "job_trace": "{}/trace.csv", "job_trace_policies": ["first-fit", "domain-packing"]}})",
      dir);
  RunResult r = RunRailsim({"compare", "--scenario", scenario, "--format", "json"});
  ASSERT_EQ(0, r.status) << r.err;
  const nlohmann::json doc = nlohmann::json::parse(r.out);
  const nlohmann::json& runs = doc.at("shared_cluster").at("runs");
  ASSERT_EQ(6u, runs.size());  // 3 designs x 2 policies
  for (const nlohmann::json& run : runs) {
    EXPECT_EQ(0.0, run.at("queue_wait_s").at("mean").get<double>()) << run.dump();
    EXPECT_EQ(0.0, run.at("jobs_contended_share").get<double>()) << run.dump();
    if (run.at("design") == "fat-tree") {
      EXPECT_GE(run.at("jct_slowdown").at("mean").get<double>(), 1.0);
      continue;
    }
    EXPECT_NEAR(0.375, run.at("occupancy_mean").get<double>(), 1e-9) << run.dump();
    EXPECT_EQ(1.0, run.at("jct_slowdown").at("mean").get<double>()) << run.dump();
  }
  bool sentence = false;
  for (const nlohmann::json& line : doc.at("verdict")) {
    const std::string text = line.get<std::string>();
    if (text.find("running the job trace") == std::string::npos) continue;
    sentence = true;
    EXPECT_NE(std::string::npos, text.find("64 GPUs in HB domains of 8")) << text;
    EXPECT_NE(std::string::npos, text.find("(2 jobs")) << text;
    EXPECT_NE(std::string::npos, text.find("with first-fit placement a job on Rail-only takes 1.00x as long")) << text;
    EXPECT_NE(std::string::npos, text.find("with domain-packing placement")) << text;
  }
  EXPECT_TRUE(sentence) << doc.at("verdict").dump(1);
  // The report draws it: a figure and its CSV, a row per design and policy.
  RunResult report = RunRailsim({"report", "--scenario", scenario, "--out", dir + "/report", "--quiet"});
  ASSERT_EQ(0, report.status) << report.err;
  std::ifstream csv(dir + "/report/shared-cluster.csv");
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(7, rows);  // the header and 3 designs x 2 policies
  std::ifstream html_file(dir + "/report/index.html");
  const std::string html((std::istreambuf_iterator<char>(html_file)), std::istreambuf_iterator<char>());
  EXPECT_NE(std::string::npos, html.find("id=\"figure-shared-cluster\""));
  // The scenario's keys are checked before any work, naming the key.
  struct Bad {
    std::string keys, where;
  };
  for (const Bad& bad : {Bad{R"("job_trace": "/nonexistent/trace.csv")", "/job_trace"},
                         Bad{R"("job_trace": "synthetic", "job_trace_policies": ["first-fits"])",
                             "/job_trace_policies/0"},
                         Bad{R"("job_trace_policies": ["first-fit"])", "/job_trace_policies"},
                         Bad{R"("job_trace": "synthetic", "job_trace_policies": [])", "/job_trace_policies"},
                         Bad{R"("job_trace": "synthetic", "job_trace_policies": ["block", "block"])",
                             "/job_trace_policies/1"}}) {
    const std::string text = fmt::format(R"({{"name": "bad", "gpus": 64, "hb_domain_sizes": [8], "radixes": [16],
        "port_speed": "400Gbps", {}}})",
                                         bad.keys);
    RunResult e = RunRailsim({"compare", "--scenario", text});
    EXPECT_EQ(2, e.status) << bad.keys;
    EXPECT_NE(std::string::npos, e.err.find(bad.where)) << bad.keys << ": " << e.err;
    EXPECT_EQ("", e.out) << bad.keys;
  }
}

// compare's MoE side is what search prints for the same job on each network
// and dispatch algorithm.
TEST(CliTest, CompareMatchesNetworkAndSearch) {
  RunResult c = RunRailsim({"compare", "--format", "json"});
  ASSERT_EQ(0, c.status) << c.err;
  nlohmann::json moe = nlohmann::json::parse(c.out)["moe"];
  EXPECT_EQ("deepseek-v3", moe["model"]);
  const nlohmann::json& k8 = moe["cases"][0];
  ASSERT_EQ(8, k8["hb_domain_size"]);
  for (auto [network, key] : {std::pair{"rail-only", "rail_only"}, {"rail-optimized", "rail_optimized"}}) {
    for (const char* algorithm : {"forwarded", "direct"}) {
      RunResult s = RunRailsim({"search", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "32768",
                                "--hb-size", "8", "--global-batch-size", "15360", "--network", network,
                                "--moe-alltoall", algorithm, "--moe-max-domains", "4", "--moe-overlap", "--precision",
                                "fp8", "--top", "1", "--quiet", "--format", "json"});
      ASSERT_EQ(0, s.status) << s.err;
      const double searched = nlohmann::json::parse(s.out)["results"][0]["estimate"]["iteration_time_s"];
      EXPECT_DOUBLE_EQ(searched, k8[key][algorithm]["iteration_time_s"].get<double>()) << network << algorithm;
    }
  }
  EXPECT_FALSE(nlohmann::json::parse(c.out)["verdict"].empty());
  // The network side is what `network` prints, the training side what `search` prints.
  nlohmann::json doc = nlohmann::json::parse(c.out);
  for (const nlohmann::json& entry : doc["network"]) {
    if (entry["hb_domain_size"] != 256 || entry["radix"] != 128) continue;
    for (const nlohmann::json& design : entry["designs"]) {
      RunResult n = RunRailsim({"network", "--design", design["design"].get<std::string>(), "--gpus", "32768",
                                "--hb-size", "256", "--radix", "128", "--format", "json"});
      ASSERT_EQ(0, n.status) << n.err;
      EXPECT_EQ(nlohmann::json::parse(n.out)["cost_usd"], design["cost_usd"]) << design["design"];
      EXPECT_EQ(nlohmann::json::parse(n.out)["switches"], design["switches"]) << design["design"];
    }
  }
  const nlohmann::json& training = doc["training"][0];  // HB domain 8, batch 256
  RunResult s = RunRailsim({"search", "--model", "megatron-1t", "--system", "dgx-h100", "--gpus", "32768",
                            "--hb-size", "8", "--global-batch-size", "256", "--network", "rail-only", "--top", "1",
                            "--quiet", "--format", "json"});
  ASSERT_EQ(0, s.status) << s.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(s.out)["results"][0]["estimate"]["iteration_time_s"].get<double>(),
                   training["rail_only_iteration_time_s"].get<double>());
  // The MoE all-to-all is what `alltoall` prints for the same cluster and bytes.
  const nlohmann::json& a2a = k8["alltoall"];
  for (const char* schedule : {"sequential", "pipelined"}) {
    RunResult a = RunRailsim({"alltoall", "--system", "dgx-h100", "--gpus", std::to_string(a2a["gpus"].get<int64_t>()),
                              "--hb-size", "8", "--bytes-per-pair",
                              fmt::format("{}B", a2a["bytes_per_pair"].get<double>()), "--network", "rail-only",
                              "--schedule", schedule, "--format", "json"});
    ASSERT_EQ(0, a.status) << a.err;
    nlohmann::json aj = nlohmann::json::parse(a.out);
    EXPECT_DOUBLE_EQ(aj["time_s"].get<double>(),
                     a2a[std::string("rail_only_") + schedule + "_time_s"].get<double>()) << schedule;
    EXPECT_DOUBLE_EQ(aj["rail_optimized_time_s"].get<double>(), a2a["rail_optimized_time_s"].get<double>());
  }
  // Scenario flags change the inputs: a smaller cluster, one HB domain size, one radix.
  RunResult small = RunRailsim({"compare", "--gpus", "4096", "--hb-sizes", "8", "--radixes", "64", "--format", "json"});
  ASSERT_EQ(0, small.status) << small.err;
  nlohmann::json sj = nlohmann::json::parse(small.out);
  EXPECT_EQ(1u, sj["network"].size());
  EXPECT_EQ(4096, sj["network"][0]["gpus"]);
  RunResult printed = RunRailsim({"compare", "--print-scenario", "--gpus", "4096"});
  ASSERT_EQ(0, printed.status) << printed.err;
  EXPECT_EQ(4096, nlohmann::json::parse(printed.out)["gpus"]);
}

// compare --format csv: the side-by-side tables as rows. 4,096 GPUs, K 8,
// radix 64, by hand: rail-optimized needs 3 tiers (4,096 > 64^2/2): 5E/k =
// 320 switches, 6E = 24,576 transceivers, 20,480 ports x $694 + 24,576 x $199
// = $19,103,744; Rail-only has 8 rails of 512 GPUs in 2 tiers: 8 x 3 x 512/64
// = 192 switches, 4E = 16,384 transceivers, 12,288 x $694 + 16,384 x $199 =
// $11,788,288; saving $7,315,456 (38.3%).
// compare --format csv carries numbers, units in the column names: every
// cell of a numeric column is blank or a number, and the whole cluster is
// priced with the catalog's server of the scenario's system (DGX H100).
TEST(CliTest, CompareCsvIsEveryNumberAsANumber) {
  RunResult r = RunRailsim({"compare", "--gpus", "4096", "--hb-sizes", "8", "--radixes", "64", "--format", "csv"});
  ASSERT_EQ(0, r.status) << r.err;
  const std::string header =
      "section,hb_domain_size,radix,global_batch_size,network,dispatch,tiers,switches,transceivers,cost_usd,"
      "power_w,cost_saving,power_saving,cluster_cost_usd,network_cost_share,iteration_time_s,mfu,tp,pp,dp,cp,ep,"
      "vp,micro_batch_size,gpus_used,no_fit,alltoall_s,usd_per_pflops_day\n";
  ASSERT_EQ(0u, r.out.find(header)) << r.out;
  const std::vector<size_t> text_columns = {0, 4, 5, 25};
  std::vector<std::vector<std::string>> rows;
  size_t start = header.size();
  for (size_t end = r.out.find('\n', start); end != std::string::npos; end = r.out.find('\n', start)) {
    std::vector<std::string> cells;
    std::string line = r.out.substr(start, end - start) + ",";
    for (size_t at = 0, comma = line.find(','); comma != std::string::npos; at = comma + 1, comma = line.find(',', at)) {
      cells.push_back(line.substr(at, comma - at));
    }
    ASSERT_EQ(28u, cells.size()) << line;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (cells[i].empty() || std::find(text_columns.begin(), text_columns.end(), i) != text_columns.end()) continue;
      char* parsed_to = nullptr;
      std::strtod(cells[i].c_str(), &parsed_to);
      EXPECT_EQ('\0', *parsed_to) << "column " << i << " of " << line;
    }
    rows.push_back(cells);
    start = end + 1;
  }
  bool saw_rail_only = false, saw_job = false;
  double rail_only_cluster_usd = 0, rail_only_network_w = 0;
  for (const std::vector<std::string>& c : rows) {
    if (c[0] == "network" && c[4] == "rail-only") {
      rail_only_cluster_usd = std::stod(c[13]);
      rail_only_network_w = std::stod(c[10]);
      saw_rail_only = true;
      EXPECT_EQ("64", c[2]);
      EXPECT_EQ("192", c[7]);     // switches
      EXPECT_EQ("16384", c[8]);   // transceivers
      EXPECT_EQ(11788288, std::stod(c[9]));
      EXPECT_NEAR(0.383, std::stod(c[11]), 0.001);
      // 512 DGX H100 at $400,000 (the catalog's assumption) plus the network.
      EXPECT_EQ(512 * 400000.0 + 11788288, std::stod(c[13]));
      EXPECT_NEAR(11788288 / (512 * 400000.0 + 11788288), std::stod(c[14]), 1e-6);
    }
    if (c[0] == "training" && c[4] == "rail-only" && !c[15].empty()) {
      saw_job = true;
      EXPECT_GT(std::stod(c[15]), 0);
      EXPECT_EQ(std::stoll(c[24]), std::stoll(c[17]) * std::stoll(c[18]) * std::stoll(c[19]) * std::stoll(c[20]));
      // A day of the whole cluster (its price over 4 years, 512 x 10.2 kW
      // of DGX H100 plus the network x PUE 1.25 at $0.08/kWh: the catalog's
      // assumptions) over the model PFLOP/s the job delivers (MFU x GPUs x
      // 989 TFLOP/s).
      ASSERT_GT(rail_only_cluster_usd, 0);
      const double per_day = rail_only_cluster_usd / (4 * 365.25) +
                             (512 * 10200 + rail_only_network_w) / 1000 * 24 * 1.25 * 0.08;
      const double pflops = std::stod(c[16]) * std::stod(c[24]) * 989e12 / 1e15;
      EXPECT_NEAR(per_day / pflops, std::stod(c[27]), 1e-6 * per_day / pflops);
    }
  }
  EXPECT_TRUE(saw_rail_only) << r.out;
  EXPECT_TRUE(saw_job) << r.out;
}

TEST(CliTest, NetworkJsonHasTheContractKeys) {
  nlohmann::json j = JsonOf({"network", "--design", "rail-only", "--gpus", "32768", "--hb-size", "256",
                             "--radix", "64", "--format", "json"});
  for (const char* key : {"design", "gpus", "hb_domain_size", "radix", "tiers", "switches", "switches_by_tier",
                          "switch_ports", "links", "transceivers", "cost_usd", "power_w"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(1536, j["switches"]);
  EXPECT_EQ(131072, j["transceivers"]);
  EXPECT_EQ(1024, j["switches_by_tier"][0]);  // leaf first
}

// A job whose only collective across HB domains is the tied embedding's
// all-reduce (tp 8, pp 8, dp 1 on 64 GPUs) crashed the failure study's
// simulated check: it ran that pair's family over the whole cluster, past its
// last GPU. Now the check skips such a group, and the command answers.
TEST(CliTest, FailuresOfAJobWithoutDataParallelism) {
  RunResult r = RunRailsim({"failures", "--system", "dgx-a100", "--gpus", "64", "--network", "rail-only", "--fail",
                            "nic3", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--micro-batch-size", "1",
                            "--global-batch-size", "64", "--format", "json"});
  ASSERT_EQ(0, r.status) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.dump().empty());
}

// 4 NICs per 8 GPUs: 1,024 GPUs have 512 NICs on 4 rails of 128 (256 GPUs
// each); each rail a two-tier Clos of 128 NICs at radix 64 (4 leaves, 2
// spines) with 256 cables: 24 switches and 2,048 transceivers in all, as
// a network of 512 GPUs with a NIC each.
TEST(CliTest, NetworkOfGpusSharingNics) {
  nlohmann::json j = JsonOf({"network", "--design", "rail-only", "--gpus", "1024", "--hb-size", "8", "--radix", "64",
                             "--gpus-per-nic", "2", "--format", "json"});
  EXPECT_EQ(4, j["rails"]);
  EXPECT_EQ(256, j["gpus_per_rail"]);
  EXPECT_EQ(2, j["gpus_per_nic"]);
  EXPECT_EQ(512, j["nics"]);
  EXPECT_EQ(24, j["switches"]);
  EXPECT_EQ(2048, j["transceivers"]);
  RunResult text = RunRailsim({"network", "--design", "rail-only", "--gpus", "1024", "--hb-size", "8", "--radix",
                               "64", "--gpus-per-nic", "2"});
  ASSERT_EQ(0, text.status) << text.err;
  EXPECT_NE(std::string::npos, text.out.find("512 (2 GPUs share each)")) << text.out;
  RunResult bad = RunRailsim({"network", "--design", "rail-only", "--gpus", "1024", "--hb-size", "8", "--radix", "64",
                              "--gpus-per-nic", "3"});
  EXPECT_NE(0, bad.status);
  EXPECT_NE(std::string::npos, bad.err.find("--gpus-per-nic: expected a positive divisor of the HB domain size 8, got 3"))
      << bad.err;
}

// AWS p4de: 4 EFA NICs of 100 Gb/s for 8 A100s. On two nodes NCCL's
// estimate picks the tree, whose one edge carries each node's data once
// each way (two-node trees beat the NICs: reference nccl-model.md 6,
// NVIDIA/nccl#812), faster than the hierarchical all-reduce. That one,
// asked for, runs: after the NVLink reduce-scatter each GPU holds
// 128 MiB, and the 2-rank all-reduce of it across nodes sends 64 MiB in each
// of 2 steps. Two GPUs share each NIC, so a step pushes 128 MiB through a
// 12.5 GB/s NIC at EFA's 0.9189 efficiency, and each step pays the NIC's
// 6 us latency (the preset's). By hand: 2 x (2 x 64 MiB / (12.5e9 x 0.9189)
// + 6 us) = 23.38 ms; the simulator, which routes both GPUs' flows over the
// one cable, must agree.
TEST(CliTest, CollectiveOnAwsP4deSharesEachNic) {
  nlohmann::json nccl = JsonOf({"collective", "--system", "aws-p4de", "--gpus", "16", "--group", "all", "--op",
                                "all-reduce", "--bytes", "1GiB", "--format", "json"});
  EXPECT_EQ("tree", nccl["algorithm"]);
  // aws-ofi-nccl pins NCCL_PROTO=simple on p4d and p4de.
  EXPECT_EQ("simple", nccl["protocol"]);
  nlohmann::json j = JsonOf({"collective", "--system", "aws-p4de", "--gpus", "16", "--group", "all", "--op",
                             "all-reduce", "--bytes", "1GiB", "--algorithm", "hierarchical", "--simulate", "--format",
                             "json"});
  ASSERT_EQ("hierarchical", j["algorithm"]);
  EXPECT_LT(nccl["analytic_time_s"].get<double>(), j["analytic_time_s"].get<double>());
  const nlohmann::json& across = j["phases"][1];
  ASSERT_EQ("all-reduce across domains", across["name"]);
  const double by_hand = 2 * (2 * 64.0 * (1 << 20) / (12.5e9 * 0.9189) + 6e-6);
  EXPECT_NEAR(by_hand, across["analytic_time_s"].get<double>(), 1e-4 * by_hand);
  EXPECT_NEAR(by_hand, across["simulated_end_s"].get<double>() - across["simulated_start_s"].get<double>(),
              1e-4 * by_hand);
  // The simulated graph has one cable per NIC: nic0's carries both its
  // GPUs' 2 x 64 MiB each way (256 MiB), not one GPU's.
  const nlohmann::json& busiest = j["links_busiest"][0];
  EXPECT_EQ("nic0->leaf0", busiest["name"]);
  EXPECT_EQ(256.0 * (1 << 20), busiest["bytes"].get<double>());
  std::printf("  p4de across-node phase: by hand %.2f ms, analytic %.2f ms\n", 1e3 * by_hand,
              1e3 * across["analytic_time_s"].get<double>());
}

TEST(CliTest, CostJsonListsDesignsWithSavings) {
  nlohmann::json j = JsonOf({"cost", "--gpus", "32768", "--hb-size", "256", "--radix", "128", "--format", "json"});
  ASSERT_EQ(3u, j["designs"].size());
  EXPECT_EQ("rail-optimized", j["designs"][0]["design"]);
  EXPECT_EQ(0.0, j["designs"][0]["cost_saving"]);
  EXPECT_NEAR(0.766, j["designs"][1]["cost_saving"].get<double>(), 0.001);
  EXPECT_NEAR(0.748, j["designs"][1]["power_saving"].get<double>(), 0.001);
}

// The whole cluster by hand: rail-only, 1,024 GPUs in 128 DGX H100 servers,
// K = 8, radix 64 at 400G. Network: 48 switches x 64 = 3,072 ports at $694
// and 17 W, 2,048 links x 2 = 4,096 transceivers at $199 and 9 W:
// $2,131,968 + $815,104 = $2,947,072 and 52,224 + 36,864 = 89,088 W.
// Servers: 128 x $400,000 = $51,200,000 and 128 x 10,200 W = 1,305,600 W.
// Cluster: $54,147,072 (network 5.44%) and 1,394,688 W (network 6.39%).
TEST(CliTest, CostWithAServerGivesTheWholeClusterAndTheNetworksShare) {
  nlohmann::json j = JsonOf({"cost", "--gpus", "1024", "--hb-size", "8", "--radix", "64", "--server", "dgx-h100",
                             "--format", "json"});
  ASSERT_EQ(3u, j["designs"].size());
  const nlohmann::json& rail_only = j["designs"][1];
  ASSERT_EQ("rail-only", rail_only["design"]);
  EXPECT_EQ(2'947'072, rail_only["cost_usd"].get<double>());
  const nlohmann::json& c = rail_only["cluster"];
  EXPECT_EQ("dgx-h100", c["server"]);
  EXPECT_EQ(128, c["servers"]);
  EXPECT_EQ(51'200'000, c["servers_cost_usd"].get<double>());
  EXPECT_EQ(54'147'072, c["cost_usd"].get<double>());
  EXPECT_EQ(1'394'688, c["power_w"].get<double>());
  EXPECT_NEAR(2'947'072.0 / 54'147'072, c["network_cost_share"].get<double>(), 1e-12);
  EXPECT_NEAR(89'088.0 / 1'394'688, c["network_power_share"].get<double>(), 1e-12);
  // 800G and 1.6T ports are priced by the default catalog, and the table
  // shows the share.
  for (const char* speed : {"800Gbps", "1.6Tbps"}) {
    RunResult r = RunRailsim({"cost", "--gpus", "1152", "--hb-size", "72", "--radix", "64", "--port-speed", speed,
                              "--server", "gb200-nvl72"});
    ASSERT_EQ(0, r.status) << r.err;
    EXPECT_NE(std::string::npos, r.out.find("network cost share")) << r.out;
    EXPECT_NE(std::string::npos, r.out.find("16 x gb200-nvl72")) << r.out;
  }
}

TEST(CliTest, ExportsCablingAndGraph) {
  std::string dir = MakeTempDir();
  RunResult r = RunRailsim({"network", "--design", "rail-optimized", "--gpus", "512", "--hb-size", "8", "--radix",
                            "32", "--export", dir + "/c.csv"});
  ASSERT_EQ(0, r.status) << r.err;
  std::ifstream csv(dir + "/c.csv");
  std::string header, row;
  std::getline(csv, header);
  EXPECT_EQ("link,a_device,a_port,b_device,b_port,tier,rail,capacity_gbps", header);
  std::getline(csv, row);
  EXPECT_EQ("0,nic0,0,leaf0,0,nic-leaf,-1,400", row);
  r = RunRailsim({"network", "--design", "rail-only", "--gpus", "512", "--hb-size", "8", "--radix", "32",
                  "--export", dir + "/g.json"});
  ASSERT_EQ(0, r.status) << r.err;
  std::ifstream graph(dir + "/g.json");
  nlohmann::json g = nlohmann::json::parse(graph);
  EXPECT_EQ("rail-only", g["params"]["design"]);
  EXPECT_EQ("rail0/leaf0", g["nodes"][1024 + 64]["name"]);  // after 512 GPUs, 512 NICs, 64 HB domains
}

TEST(CliTest, EstimateJsonHasTheContractKeys) {
  Args args = kEstimate;
  args.insert(args.end(), {"--format", "json"});
  nlohmann::json j = JsonOf(args);
  for (const char* key : {"iteration_time_s", "model_flops_per_iteration", "mfu", "hfu", "tflops_per_gpu",
                          "memory_per_gpu_bytes", "memory_fits", "breakdown", "memory"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  double sum = 0;
  for (const char* key : {"compute_s", "recompute_s", "tp_comm_s", "pp_comm_s", "dp_comm_s", "bubble_s",
                          "optimizer_s", "overhead_s", "straggler_s"}) {
    ASSERT_TRUE(j["breakdown"].contains(key)) << key;
    sum += j["breakdown"][key].get<double>();
  }
  sum += j["breakdown"]["cp_comm_s"].get<double>() + j["breakdown"]["ep_comm_s"].get<double>();
  EXPECT_NEAR(j["iteration_time_s"].get<double>(), sum, 1e-9);
  EXPECT_EQ(32, j["strategy"]["dp"]);  // defaults to N / (tp x pp x cp) = 4096 / 128
}

TEST(CliTest, EstimateReportsMemoryThatDoesNotFit) {
  RunResult r = RunRailsim({"estimate", "--model", "megatron-1t", "--system", "dgx-h100", "--gpus", "64", "--tp",
                            "8", "--pp", "8", "--global-batch-size", "8", "--micro-batch-size", "1", "--format",
                            "json"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["memory_fits"].get<bool>());
}

TEST(CliTest, SearchJsonHasTheContractKeys) {
  Args args = kSearch;
  args.insert(args.end(), {"--format", "json", "--threads", "2", "--timing"});
  nlohmann::json j = JsonOf(args);
  for (const char* key : {"evaluated", "pruned", "elapsed_s", "threads", "results"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(3u, j["results"].size());
  EXPECT_TRUE(j["results"][0].contains("strategy"));
  EXPECT_TRUE(j["results"][0]["estimate"]["memory_fits"].get<bool>());
  EXPECT_EQ(std::min(2u, std::max(1u, std::thread::hardware_concurrency())), j["threads"].get<unsigned>());
  // Without --timing the document carries no measurement.
  args.pop_back();
  nlohmann::json plain = JsonOf(args);
  EXPECT_FALSE(plain.contains("elapsed_s"));
  EXPECT_FALSE(plain.contains("threads"));
}

// search --format megatron-args / nemo-overrides: each ranked strategy's
// flags read back into the strategy the JSON reports, in the same order.
TEST(CliTest, SearchLauncherFlagsReadBackIntoTheRankedStrategies) {
  Args json = kSearch;
  json.insert(json.end(), {"--format", "json"});
  nlohmann::json j = JsonOf(json);
  const spec::ModelSpec model = spec::LoadModel("llama3-70b", "--model");
  for (auto [format, launcher] : {std::pair{"megatron-args", spec::Launcher::kMegatron},
                                  std::pair{"nemo-overrides", spec::Launcher::kNemo}}) {
    Args args = kSearch;
    args.insert(args.end(), {"--format", format});
    RunResult r = RunRailsim(args);
    ASSERT_EQ(0, r.status) << r.err;
    std::vector<std::string> blocks;
    for (size_t start = 0; start < r.out.size();) {
      size_t end = r.out.find("\n\n", start);
      blocks.push_back(r.out.substr(start, end == std::string::npos ? end : end - start));
      start = end == std::string::npos ? r.out.size() : end + 2;
    }
    ASSERT_EQ(j["results"].size(), blocks.size()) << r.out;
    for (size_t i = 0; i < blocks.size(); ++i) {
      ASSERT_EQ(0u, blocks[i].find(fmt::format("# {}: ", i + 1))) << blocks[i];
      const nlohmann::json& want = j["results"][i]["strategy"];
      spec::Strategy s = spec::ParseLauncherArgs(launcher, blocks[i].substr(blocks[i].find('\n')), model,
                                                 j["results"][i]["gpus_used"].get<int64_t>());
      EXPECT_EQ(want["tp"], s.tp) << blocks[i];
      EXPECT_EQ(want["pp"], s.pp) << blocks[i];
      EXPECT_EQ(want["dp"], s.dp) << blocks[i];
      EXPECT_EQ(want["cp"], s.cp) << blocks[i];
      EXPECT_EQ(want["vp"], s.vp) << blocks[i];
      EXPECT_EQ(want["micro_batch_size"], s.micro_batch) << blocks[i];
      EXPECT_EQ(want["global_batch_size"], s.global_batch) << blocks[i];
      EXPECT_EQ(want["recompute"], spec::RecomputeName(s.recompute)) << blocks[i];
      EXPECT_EQ(want["sequence_parallel"], s.sequence_parallel) << blocks[i];
    }
  }
}

TEST(CliTest, CsvWhereRowsRepeat) {
  RunResult cost = RunRailsim({"cost", "--gpus", "32768", "--hb-size", "256", "--radix", "64", "--format", "csv"});
  ASSERT_EQ(0, cost.status) << cost.err;
  EXPECT_EQ(4, LineCount(cost.out));  // header + three designs
  EXPECT_EQ(0u, cost.out.find("design,gpus,hb_domain_size,radix,"));
  EXPECT_NE(std::string::npos, cost.out.find("\nrail-only,32768,256,64,400Gbps,1,2,1536,98304,98304,65536,131072,94306304,"));
  Args search = kSearch;
  search.insert(search.end(), {"--format", "csv"});
  RunResult s = RunRailsim(search);
  ASSERT_EQ(0, s.status) << s.err;
  EXPECT_EQ(4, LineCount(s.out));  // header + top 3
  EXPECT_EQ(0u, s.out.find("rank,tp,pp,dp,cp,ep,vp,"));
  RunResult presets = RunRailsim({"presets", "--format", "csv"});
  ASSERT_EQ(0, presets.status);
  // Descriptions contain commas and are quoted.
  EXPECT_NE(std::string::npos, presets.out.find("system,dgx-a100,\"NVIDIA DGX A100 80GB: 8 x A100"));
}

TEST(CliTest, PresetsShowPrintsLoadableJson) {
  RunResult r = RunRailsim({"presets", "show", "dgx-h100"});
  ASSERT_EQ(0, r.status);
  std::string dir = MakeTempDir();
  std::ofstream(dir + "/mine.json") << r.out;
  Args args = kEstimate;
  args[4] = dir + "/mine.json";
  EXPECT_EQ(0, RunRailsim(args).status);
}

bool AllFinite(const nlohmann::json& j) {
  if (j.is_null()) return false;
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured()) {
    for (const auto& element : j) {
      if (!AllFinite(element)) return false;
    }
  }
  return true;
}

// alltoall's contract keys, and the paper's overheads through the command:
// 8.2% (A100 at line rate, 72 GPUs) and 11.2% (H100-class, K = 256, 32,768 GPUs).
TEST(CliTest, AllToAllReproducesThePaperAndHasTheContractKeys) {
  nlohmann::json a100 = JsonOf({"alltoall", "--system", "dgx-a100", "--gpus", "72", "--hb-bw", "300GB/s", "--nic-bw",
                                "200Gbps", "--bytes-per-pair", "1MB", "--network", "rail-only", "--format", "json"});
  for (const char* key : {"time_s", "hb_bw_Bps", "nic_bw_Bps", "schedule", "simulated", "overhead_vs_rail_optimized"}) {
    EXPECT_TRUE(a100.contains(key)) << key;
  }
  EXPECT_EQ(300e9, a100["hb_bw_Bps"].get<double>());
  EXPECT_EQ(25e9, a100["nic_bw_Bps"].get<double>());
  EXPECT_EQ("sequential", a100["schedule"]);
  EXPECT_FALSE(a100["simulated"].get<bool>());
  EXPECT_NEAR(0.082, a100["overhead_vs_rail_optimized"].get<double>(), 0.0005);
  nlohmann::json h100 = JsonOf({"alltoall", "--system", "dgx-h100", "--gpus", "32768", "--hb-size", "256",
                                "--hb-bw", "450GB/s", "--nic-bw", "400Gbps", "--bytes-per-pair", "1MB", "--network",
                                "rail-only", "--format", "json"});
  EXPECT_NEAR(0.112, h100["overhead_vs_rail_optimized"].get<double>(), 0.0005);
  nlohmann::json sim = JsonOf({"alltoall", "--system", "dgx-a100", "--gpus", "72", "--hb-bw", "300GB/s", "--nic-bw",
                               "200Gbps", "--bytes-per-pair", "1MB", "--network", "rail-only", "--radix", "128",
                               "--simulate", "--format", "json"});
  for (const char* key : {"flows", "links_busiest", "bytes_by_tier", "analytic_time_s", "routing", "seed"}) {
    EXPECT_TRUE(sim.contains(key)) << key;
  }
  EXPECT_TRUE(sim["simulated"].get<bool>());
  EXPECT_EQ("d-mod-k", sim["routing"]);  // the DGX presets' InfiniBand default
  EXPECT_NEAR(0.082, sim["overhead_vs_rail_optimized"].get<double>(), 0.0005);
  EXPECT_EQ(1080, sim["flows"].get<int64_t>());  // 72 x 7 in domains, 72 x 8 along rails
  EXPECT_GT(sim["links_busiest"][0]["utilisation"].get<double>(), 0.5);
  EXPECT_NE(std::string::npos, sim["links_busiest"][0]["name"].get<std::string>().find("->"));
}

// `collective` times a group as `estimate` does: the data-parallel all-reduce
// of tp 8 on 256 GPUs is one ring per rail across 32 domains.
TEST(CliTest, CollectiveTimesTheGroupEstimatePlaces) {
  nlohmann::json j = JsonOf({"collective", "--system", "dgx-h100", "--gpus", "256", "--op", "all-reduce", "--bytes",
                             "1GB", "--group", "dp", "--tp", "8", "--simulate", "--export-links",
                             MakeTempDir() + "/links.csv", "--format", "json"});
  EXPECT_EQ(32, j["group"]["size"].get<int64_t>());
  EXPECT_EQ(8, j["group"]["stride"].get<int64_t>());
  EXPECT_EQ("ring", j["algorithm"]);
  EXPECT_EQ("simple", j["protocol"]);
  // 2 x 31/32 x 1 GB over 47 GB/s, plus NCCL's Ring Simple latency with one
  // rank per node (dgx-h100's preset, NCCL 2.30's constants): base 8.4 us +
  // 2 x 31 network steps of 14 us (the Tree's NET value when ppn = 1), x 1.4
  // (the ring plateau) = 1,226.96 us.
  EXPECT_NEAR(2.0 * 31 / 32 * 1e9 / (50e9 * 0.94) + 1.4 * (8.4 + 62 * 14) * 1e-6, j["analytic_time_s"].get<double>(),
              1e-9);
  EXPECT_NEAR(1, j["simulated_time_s"].get<double>() / j["analytic_time_s"].get<double>(), 0.02);
  EXPECT_EQ(0, j["bytes_by_tier"]["nvlink"].get<double>());
}

// An empty search names the batch it searched and tells a GPU count no
// degree combination fits from a strategy that does not fit in memory.
TEST(CliTest, EmptySearchSaysWhy) {
  RunResult r = RunRailsim({"search", "--model", "megatron-1t", "--system", "dgx-h100", "--gpus", "5128",
                            "--global-batch-size", "2520"});
  EXPECT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("global batch 2,520"));
  EXPECT_NE(std::string::npos, r.out.find("no combination of degrees uses exactly 5,128 GPUs with global batch 2,520"));
  RunResult m = RunRailsim({"search", "--model", "megatron-1t", "--system", "dgx-a100", "--gpus", "8",
                            "--global-batch-size", "8"});
  // 1,818: the 1,362 before the interleave group size, plus N = 2 pp for the
  // 456 interleaved ones with at least 2 pp micro-batches.
  EXPECT_NE(std::string::npos, m.out.find("no strategy fits in memory: all 1,818 strategies need more than the 80.0 GiB"));
  // With idle GPUs allowed, 5,120 of the 5,128 (8 x 641) have layouts for batch 2,520: 8 stay idle.
  RunResult idle = RunRailsim({"search", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "5128",
                               "--global-batch-size", "2520", "--allow-idle-gpus", "64", "--quiet", "--format", "json"});
  ASSERT_EQ(0, idle.status) << idle.err;
  nlohmann::json j = nlohmann::json::parse(idle.out);
  ASSERT_FALSE(j["results"].empty());
  EXPECT_EQ(5120, j["results"][0]["gpus_used"]);
  EXPECT_EQ(8, j["results"][0]["idle_gpus"]);
  EXPECT_EQ(64, j["idle_gpus_allowed"]);
}

TEST(CliTest, VersionAndQuiet) {
  RunResult v = RunRailsim({"--version"});
  EXPECT_EQ(0, v.status);
  EXPECT_EQ(0u, v.out.find("railsim "));
  EXPECT_EQ(1, LineCount(v.out));
  for (Args args : {Args{"search", "--model", "llama3-70b", "--system", "dgx-h100", "--gpus", "64",
                         "--global-batch-size", "64", "--quiet"},
                    Args{"alltoall", "--system", "dgx-a100", "--gpus", "72", "--bytes-per-pair", "1MB", "--simulate",
                         "--quiet"}}) {
    RunResult r = RunRailsim(args);
    EXPECT_EQ(0, r.status) << args[0] << ": " << r.err;
    EXPECT_EQ("", r.err) << args[0];
  }
}

const Args kTraffic = {"traffic", "--model", "megatron-18.4b", "--system", "dgx-h100", "--gpus", "64",
                       "--tp", "4", "--pp", "4", "--micro-batch-size", "1", "--global-batch-size", "256"};

TEST(CliTest, TrafficJsonHeatmapAndPairs) {
  std::string dir = MakeTempDir();
  Args args = kTraffic;
  args.insert(args.end(), {"--design", "rail-only", "--placement", "tp-pp-dp", "--heatmap", dir + "/t.png",
                           "--export", dir + "/pairs.csv", "--format", "json"});
  RunResult r = RunRailsim(args);
  ASSERT_EQ(0, r.status) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char* key : {"gpu_pairs", "gpu_pairs_communicating", "bytes_total", "bytes_by_class",
                          "bytes_by_parallelism", "bytes_by_tier", "placement_check", "bytes_between_rails"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  for (const char* key : {"hb_domain", "same_rail", "cross_rail"}) EXPECT_TRUE(j["bytes_by_class"].contains(key));
  for (const char* key : {"tp", "cp", "ep", "pp", "dp"}) EXPECT_TRUE(j["bytes_by_parallelism"].contains(key));
  EXPECT_EQ(j["gpu_pairs"], 64 * 63);
  EXPECT_EQ(j["placement"], "tp-cp-pp-ep-dp");
  EXPECT_GT(j["bytes_by_class"]["cross_rail"].get<double>(), 0);
  // The PNG exists and is one; the CSV has a row per communicating pair.
  std::ifstream png(dir + "/t.png", std::ios::binary);
  char magic[8] = {};
  png.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::ifstream csv(dir + "/pairs.csv");
  std::string header, line;
  std::getline(csv, header);
  EXPECT_EQ(header, "src,dst,bytes,class,tp,cp,ep,pp,dp,embedding");
  // Rows with src == dst are in-switch (NVLink SHARP) reductions: bytes to
  // the HB switch and back, not to another GPU.
  int64_t rows = 0, via_switch = 0;
  while (std::getline(csv, line)) {
    size_t comma = line.find(',');
    ++(line.substr(0, comma) == line.substr(comma + 1, line.find(',', comma + 1) - comma - 1) ? via_switch : rows);
  }
  EXPECT_EQ(rows, j["gpu_pairs_communicating"].get<int64_t>());
  EXPECT_EQ(via_switch, 64);  // TP 4 without sequence parallelism: NVLS all-reduce on every GPU
  // SVG too.
  Args svg = kTraffic;
  svg.insert(svg.end(), {"--heatmap", dir + "/t.svg"});
  ASSERT_EQ(0, RunRailsim(svg).status);
  std::ifstream svg_file(dir + "/t.svg");
  std::string first;
  std::getline(svg_file, first);
  EXPECT_NE(first.find("<?xml"), std::string::npos);
}

// A Hugging Face config.json estimates exactly as railsim's preset of the
// same model (only the name differs), with --seq-length on either.
TEST(CliTest, HfConfigEstimatesAsThePreset) {
  const Args job = {"--system", "dgx-h100", "--gpus", "64", "--tp", "8", "--pp", "2", "--micro-batch-size", "1",
                    "--global-batch-size", "64", "--sequence-parallel", "--seq-length", "4096", "--format", "json"};
  Args preset = {"estimate", "--model", "llama3.1-70b"}, hf = {"estimate", "--model",
                                                                 std::string(RAILSIM_SOURCE_DIR) +
                                                                     "/tests/data/hf/llama-3.1-70b.json"};
  preset.insert(preset.end(), job.begin(), job.end());
  hf.insert(hf.end(), job.begin(), job.end());
  RunResult a = RunRailsim(preset), b = RunRailsim(hf);
  ASSERT_EQ(0, a.status) << a.err;
  ASSERT_EQ(0, b.status) << b.err;
  nlohmann::json ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ("llama-3.1-70b", jb["model"]);
  jb["model"] = ja["model"];
  EXPECT_EQ(ja, jb);
  EXPECT_GT(double(ja["iteration_time_s"]), 0);
}

TEST(CliTest, StackProfileSetsDefaultsAndFlagsOverrideThem) {
  Args json = kEstimate;
  json.insert(json.end(), {"--format", "json"});
  nlohmann::json plain = JsonOf(json);
  EXPECT_EQ("megatron-core", plain["stack"]);
  EXPECT_EQ("flash", plain["strategy"]["attention"]);
  json.insert(json.end(), {"--stack", "megatron-2021"});
  nlohmann::json old = JsonOf(json);
  EXPECT_EQ("megatron-2021", old["stack"]);
  EXPECT_EQ("classic", old["strategy"]["attention"]);
  EXPECT_EQ(false, old["strategy"]["overlap_dp_comm"]);
  EXPECT_EQ(true, old["strategy"]["grad_reduce_in_bf16"]);
  json.insert(json.end(), {"--attention", "flash"});  // a flag given wins over the profile
  nlohmann::json mixed = JsonOf(json);
  EXPECT_EQ("flash", mixed["strategy"]["attention"]);
  EXPECT_EQ(false, mixed["strategy"]["overlap_dp_comm"]);
  Args table = kEstimate;
  table.insert(table.end(), {"--stack", "nemo"});
  RunResult r = RunRailsim(table);
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_NE(std::string::npos, r.out.find("\nstack: nemo (")) << r.out;
}

TEST(CliTest, ModelFileWithoutArchitectureFieldsWarnsOnce) {
  // megatron-1.7b's preset leaves out swiglu and untie_embeddings_and_output_weights
  // (GPT-2-shaped on purpose): as a preset it is silent, as a user's file it warns.
  const std::string dir = MakeTempDir();
  const std::string path = dir + "/my-model.json";
  {
    std::ofstream out(path);
    out << Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/models/megatron-1.7b.json");
  }
  Args args = {"estimate", "--model", "megatron-1.7b", "--system", "dgx-a100", "--gpus", "8", "--tp", "8", "--pp", "1",
               "--micro-batch-size", "1", "--global-batch-size", "8"};
  RunResult preset = RunRailsim(args);
  ASSERT_EQ(0, preset.status) << preset.err;
  EXPECT_EQ("", preset.err);
  args[2] = path;
  RunResult file = RunRailsim(args);
  ASSERT_EQ(0, file.status) << file.err;
  EXPECT_EQ("railsim: warning: --model " + path + " leaves out architecture fields; using swiglu false, "
            "untie_embeddings_and_output_weights false\n",
            file.err);
}

TEST(CliTest, JsonOutputIsDeterministic) {
  std::vector<Args> commands = {
      {"compare", "--format", "json"},
      {"network", "--design", "fat-tree", "--gpus", "1000", "--hb-size", "8", "--radix", "16", "--format", "json"},
      {"cost", "--gpus", "4096", "--hb-size", "8", "--radix", "64", "--format", "json"},
      {"network", "--design", "rail-only", "--gpus", "1024", "--hb-size", "8", "--radix", "16", "--gpus-per-nic", "2",
       "--format", "json"},
      {"cost", "--gpus", "4096", "--hb-size", "8", "--radix", "64", "--gpus-per-nic", "4", "--format", "json"},
      {"presets", "--format", "json"}};
  Args estimate = kEstimate, search = kSearch;
  estimate.insert(estimate.end(), {"--format", "json"});
  search.insert(search.end(), {"--format", "json"});
  commands.push_back(estimate);
  commands.push_back(search);
  Args traffic = kTraffic;
  traffic.insert(traffic.end(), {"--format", "json"});
  commands.push_back(traffic);
  // Optimizer precision and sharding (ZeRO-3 adds the FSDP gathers to traffic).
  Args sharded = estimate, sharded_traffic = traffic, explore = search;
  for (Args* a : {&sharded, &sharded_traffic}) {
    a->insert(a->end(), {"--data-parallel-sharding", "full", "--main-grads-dtype", "bf16", "--main-params-dtype",
                         "fp16", "--exp-avg-dtype", "bf16", "--exp-avg-sq-dtype", "bf16"});
  }
  sharded_traffic.insert(sharded_traffic.end(), {"--fsdp-shard-group-size", "1"});  // dp 2: two replicas
  explore.push_back("--explore-optimizer");
  // Stack profiles and the interleave group size (kEstimate: pp 16, m 2048 / 32 = 64).
  Args stacked = estimate, grouped = estimate, stacked_search = search;
  stacked.insert(stacked.end(), {"--stack", "megatron-2021"});
  grouped.insert(grouped.end(), {"--vp", "2", "--microbatch-group-size-per-virtual-pipeline-stage", "32", "--stack",
                                 "nemo"});
  stacked_search.insert(stacked_search.end(), {"--stack", "fsdp"});
  commands.push_back(stacked);
  commands.push_back(grouped);
  commands.push_back(stacked_search);
  // An eager run on GB200, whose host's issue floor binds at tp 8.
  commands.push_back({"estimate", "--model", "llama3.1-8b", "--system", "gb200-nvl72", "--gpus", "72", "--tp", "8",
                      "--pp", "1", "--micro-batch-size", "1", "--global-batch-size", "72", "--sequence-parallel",
                      "--cuda-graph-impl", "none", "--format", "json"});
  commands.push_back(sharded);
  commands.push_back(sharded_traffic);
  commands.push_back(explore);
  commands.push_back({"alltoall", "--system", "dgx-h100", "--gpus", "256", "--bytes-per-pair", "64KiB", "--network",
                      "rail-only", "--radix", "16", "--simulate", "--routing", "ecmp", "--seed", "7", "--format",
                      "json"});
  commands.push_back({"collective", "--system", "dgx-h100", "--gpus", "256", "--op", "all-reduce", "--bytes",
                      "64MiB", "--group", "dp", "--tp", "8", "--simulate", "--format", "json"});
  commands.push_back({"collective", "--system", "aws-p5", "--gpus", "64", "--op", "all-reduce", "--bytes", "32MiB",
                      "--group", "all", "--protocol", "ll128", "--format", "json"});
  // A dp group placed inside the HB domains, and NCCL's PAT on a dp group of one GPU per domain, simulated.
  commands.push_back({"collective", "--system", "dgx-h100", "--gpus", "256", "--op", "all-reduce", "--bytes",
                      "16MiB", "--group", "dp", "--tp", "8", "--placement", "dp-tp-pp", "--format", "json"});
  commands.push_back({"collective", "--system", "dgx-h100", "--gpus", "256", "--op", "all-gather", "--bytes", "1MiB",
                      "--group", "dp", "--tp", "8", "--algorithm", "pat", "--simulate", "--format", "json"});
  // The whole cluster's cost with a named server, and the cost per PFLOP/s-day.
  commands.push_back({"compare", "--gpus", "1024", "--hb-sizes", "8", "--radixes", "32", "--server", "dgx-b200",
                      "--format", "json"});
  // DeepEP's pipelined dispatch with an fp8 payload, simulated.
  commands.push_back({"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "moe-dispatch", "--model",
                      "deepseek-v3", "--group", "ep", "--ep", "16", "--pp", "8", "--moe-dispatch-precision", "fp8",
                      "--network", "rail-only", "--radix", "16", "--simulate", "--format", "json"});
  commands.push_back({"failures", "--gpus", "256", "--radix", "16", "--fail", "nic5,hb3", "--trials", "300",
                      "--model", "megatron-1.7b", "--tp", "8", "--pp", "1", "--micro-batch-size", "1",
                      "--global-batch-size", "256", "--format", "json"});
  commands.push_back({"failures", "--gpus", "256", "--radix", "16", "--network", "rail-only", "--spare-policy", "ocs",
                      "--trials", "300", "--seed", "9", "--format", "json"});
  // The search's answer does not depend on its thread count.
  Args one_thread = search, two_threads = search;
  one_thread.insert(one_thread.end(), {"--threads", "1"});
  two_threads.insert(two_threads.end(), {"--threads", "2"});
  EXPECT_EQ(RunRailsim(one_thread).out, RunRailsim(two_threads).out);
  commands.push_back({"estimate", "--model", std::string(RAILSIM_SOURCE_DIR) + "/tests/data/hf/deepseek-v3.json",
                      "--system", "dgx-h100", "--gpus", "2048", "--tp", "1", "--pp", "16", "--ep", "64",
                      "--micro-batch-size", "1", "--global-batch-size", "2048", "--seq-length", "2048",
                      "--format", "json"});
  const std::string data = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/";
  commands.push_back({"calibrate", "--system", "dgx-h100", "--nccl-tests", data + "nccl-tests/p5-8nodes.csv",
                      data + "nccl-tests/p5-8nodes/alltoall_perf.txt", "--steps", data + "h100-steps.csv",
                      "--holdout", "0.2", "--format", "json"});
  // sweep's rows: the same bytes from two runs on two threads, after sorting
  // (rows arrive as points finish).
  {
    const std::string dir = MakeTempDir();
    // (config, points, error rows: 100 GPUs are not a multiple of 8)
    const std::vector<std::tuple<std::string, int, int>> configs = {
        {R"({"study": "network", "fixed": {"hb_size": 8, "radix": 32},
      "axes": {"design": ["rail-only", "rail-optimized", "fat-tree"], "gpus": [64, 128, 256, 100]}})", 12, 3},
        {R"({"study": "collective", "fixed": {"system": "dgx-h100", "gpus": 256, "tp": 8, "group": "dp",
      "simulate": true}, "axes": {"op": ["all-reduce", "all-gather"], "bytes": ["64KiB", "16MiB"]}})", 4, 0},
        {R"({"study": "failures", "fixed": {"gpus": 256, "radix": 16, "trials": 200, "seed": 3},
      "axes": {"network": ["rail-only", "rail-optimized"]}})", 2, 0},
        {R"({"study": "compare", "fixed": {"gpus": 1024, "hb_size": 8, "radix": 32, "moe_model": "none",
      "model": "gpt3-175b", "system": "dgx-h100"}, "axes": {"global_batch_size": [512, 1536]}})", 2, 0}};
    for (const auto& [config, points, errors] : configs) {
      std::ofstream(dir + "/sweep.json") << config;
      std::vector<std::string> runs;
      for (const char* name : {"a.jsonl", "b.jsonl"}) {
        std::remove((dir + "/" + name).c_str());
        RunResult r = RunRailsim({"sweep", "--config", dir + "/sweep.json", "--out", dir + "/" + name,
                                  "--threads", "2"});
        ASSERT_EQ(0, r.status) << r.err;
        RunResult merged = RunRailsim({"sweep", "--merge", dir + "/" + name});
        ASSERT_EQ(0, merged.status) << merged.err;
        EXPECT_EQ(points, LineCount(merged.out)) << config;
        int error_rows = 0;
        for (size_t at = merged.out.find("\"error\""); at != std::string::npos; at = merged.out.find("\"error\"", at + 1)) {
          ++error_rows;
        }
        EXPECT_EQ(errors, error_rows) << merged.out;
        runs.push_back(merged.out);
      }
      EXPECT_EQ(runs[0], runs[1]) << config;
    }
  }
  for (const Args& args : commands) {
    RunResult a = RunRailsim(args), b = RunRailsim(args);
    ASSERT_EQ(0, a.status) << args[0] << ": " << a.err;
    EXPECT_EQ(a.out, b.out) << args[0];
    // No NaN or infinity reaches an output (nlohmann prints them as null).
    EXPECT_TRUE(AllFinite(nlohmann::json::parse(a.out))) << args[0];
  }
  // The simulator's thread count changes nothing, and a simulated baseline
  // counts its flows.
  const Args alltoall = {"alltoall", "--system", "dgx-h100", "--gpus", "256", "--bytes-per-pair", "64KiB",
                         "--network", "rail-only", "--radix", "16", "--simulate", "--schedule", "pipelined",
                         "--routing", "ecmp", "--baseline", "simulate", "--format", "json"};
  Args threaded = alltoall;
  threaded.insert(threaded.end(), {"--threads", "2"});
  RunResult one = RunRailsim(alltoall), two = RunRailsim(threaded);
  ASSERT_EQ(0, one.status) << one.err;
  EXPECT_EQ(one.out, two.out);
  nlohmann::json j = nlohmann::json::parse(one.out);
  // 256 x 255 pairs on each network: forwarded in two phases on Rail-only
  // (NVLink to the rail, then the rail), direct on rail-optimized.
  EXPECT_EQ(true, j["rail_optimized_simulated"]);
  EXPECT_EQ(256 * 255, j["rail_optimized_flows"]);
  EXPECT_EQ(j["flows"].get<int64_t>() + 256 * 255, j["flows_simulated_total"]);
  // compare's CSV, and --quiet changes nothing on stdout.
  const Args csv = {"compare", "--gpus", "4096", "--hb-sizes", "8,64", "--radixes", "64", "--format", "csv"};
  RunResult a = RunRailsim(csv), b = RunRailsim(csv);
  Args quiet_csv = csv;
  quiet_csv.push_back("--quiet");
  RunResult quiet = RunRailsim(quiet_csv);
  ASSERT_EQ(0, a.status) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.out, quiet.out);
}


// Where an output is not a regular file it is written into, never replaced:
// a character device made by mknod (the issue's repro, skipped where mknod
// is not allowed) and /dev/null stay devices, a FIFO's reader gets the
// JSON, a link to a file stays a link. "-" is standard output (the report
// then goes to stderr, as tar's listing does), and so is /dev/stdout when
// stdout is a file.
TEST(CliTest, OutputsWriteIntoDevicesFifosLinksAndStandardOutput) {
  const std::string dir = MakeTempDir();
  auto mode = [](const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 ? st.st_mode & S_IFMT : 0;
  };
  const Args estimate = {"estimate", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "64", "--tp", "8",
                         "--pp", "8", "--global-batch-size", "64", "--micro-batch-size", "1"};
  const RunResult table = RunRailsim(estimate);
  ASSERT_EQ(0, table.status) << table.err;
  auto with = [](Args args, const Args& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  const bool node = ::mknod((dir + "/node").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  for (const std::string& device : node ? Args{dir + "/node", "/dev/null"} : Args{"/dev/null"}) {
    RunResult r = RunRailsim(with(estimate, {"--trace", device}));
    EXPECT_EQ(0, r.status) << r.err;
    EXPECT_EQ(table.out, r.out);
    EXPECT_EQ(mode_t(S_IFCHR), mode(device)) << device;
  }
  // A FIFO with a reader.
  ASSERT_EQ(0, ::mkfifo((dir + "/pipe").c_str(), 0644));
  const std::string calibrate = std::string(RAILSIM_BINARY) + " calibrate --system aws-p5 --nccl-tests " +
                                RAILSIM_SOURCE_DIR + "/tests/data/nccl-tests/p5-8nodes/all_reduce_perf.txt";
  RunResult fifo = RunProgram("sh", {"-c", "cat " + dir + "/pipe > " + dir + "/got & " + calibrate + " --out " + dir +
                                               "/pipe --format json > /dev/null; echo $?; wait"});
  EXPECT_EQ("0\n", fifo.out) << fifo.err;
  EXPECT_EQ("aws-p5-calibrated", nlohmann::json::parse(Slurp(dir + "/got"))["name"]);
  EXPECT_EQ(mode_t(S_IFIFO), mode(dir + "/pipe"));
  // A link to a file: the file gets the rows, the link stays.
  std::ofstream(dir + "/sweep.json") << R"({"study": "network", "fixed": {"design": "rail-only", "hb_size": 8,
      "radix": 64}, "axes": {"gpus": [64, 128]}})";
  std::ofstream(dir + "/rows.jsonl") << "old\n";
  ASSERT_EQ(0, ::symlink((dir + "/rows.jsonl").c_str(), (dir + "/link.jsonl").c_str()));
  RunResult linked =
      RunRailsim({"sweep", "--config", dir + "/sweep.json", "--out", dir + "/link.jsonl", "--threads", "1"});
  ASSERT_EQ(0, linked.status) << linked.err;
  EXPECT_EQ(mode_t(S_IFLNK), mode(dir + "/link.jsonl"));
  EXPECT_EQ(2, LineCount(Slurp(dir + "/rows.jsonl")));
  EXPECT_EQ(0u, Slurp(dir + "/rows.jsonl").find("{\"index\":0,\"points\":2,"));
  // "-": the rows on stdout; calibrate's system JSON on stdout, its table on stderr.
  RunResult rows = RunRailsim({"sweep", "--config", dir + "/sweep.json", "--out", "-", "--threads", "1"});
  ASSERT_EQ(0, rows.status) << rows.err;
  EXPECT_EQ(Slurp(dir + "/rows.jsonl"), rows.out);
  EXPECT_EQ("", rows.err);
  RunResult system = RunProgram("sh", {"-c", calibrate + " --out -"});
  ASSERT_EQ(0, system.status) << system.err;
  EXPECT_EQ(Slurp(dir + "/got"), system.out);
  EXPECT_NE(std::string::npos, system.err.find("railsim calibrate: aws-p5-calibrated")) << system.err;
  EXPECT_EQ(std::string::npos, system.err.find("Wrote the calibrated system")) << system.err;
  EXPECT_NE(0, ::access("-", F_OK)) << "no file called -";
  // /dev/stdout when stdout is a file: the trace alone in the file.
  RunResult redirected = RunProgram(
      "sh", {"-c", std::string(RAILSIM_BINARY) + " " + fmt::format("{}", fmt::join(estimate, " ")) +
                       " --trace /dev/stdout --format json > " + dir + "/trace.json"});
  ASSERT_EQ(0, redirected.status) << redirected.err;
  EXPECT_TRUE(nlohmann::json::parse(Slurp(dir + "/trace.json")).contains("traceEvents"));
  EXPECT_NE(std::string::npos, redirected.err.find("\"iteration_time_s\"")) << redirected.err;
  if (!node) GTEST_SKIP() << "mknod is not allowed here: /dev/null alone was checked";
}

// A report on a full disk (a file size limit here, so that nothing else
// fills) fails with the reason and leaves no folder; it made them all.
TEST(CliTest, ReportOnAFullDiskLeavesNoFolder) {
  const std::string dir = MakeTempDir();
  RunResult r = RunProgram("sh", {"-c", "ulimit -f 4; trap '' XFSZ; exec \"$0\" \"$@\"", RAILSIM_BINARY, "report",
                                  "--out", dir + "/new/report", "--quiet", "--gpus", "4096", "--hb-sizes", "8",
                                  "--radixes", "64"});
  EXPECT_EQ(2, r.status);
  // Ends with railsim's one line; fontconfig may say "write cache: ..." before
  // it when the size limit stops it refreshing a stale font cache.
  const std::string line = "railsim: error: --out: cannot write '" + dir + "/new/report/index.html': File too large\n";
  ASSERT_GE(r.err.size(), line.size()) << r.err;
  EXPECT_EQ(line, r.err.substr(r.err.size() - line.size()));
  EXPECT_EQ(std::string::npos, r.err.substr(0, r.err.size() - line.size()).find("railsim")) << r.err;
  EXPECT_EQ("", r.out);
  EXPECT_NE(0, ::access((dir + "/new").c_str(), F_OK)) << "the folders this run made are removed";
  EXPECT_EQ(0, ::access(dir.c_str(), F_OK)) << "the folder that was there stays";
}

// Under mpirun, a command that does not split its work runs on rank 0
// alone: its output and its errors appear once.
TEST(CliTest, MpirunPrintsOnceForCommandsThatDoNotSplit) {
#ifndef RAILSIM_MPIRUN_TEST
  GTEST_SKIP() << "built without RAILSIM_MPI, or with the sanitizers (Open MPI's own leaks would fail them)";
#else
  const std::string p5 = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/p5-8nodes/all_reduce_perf.txt";
  const std::vector<Args> commands = {
      {"estimate", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "64", "--tp", "8", "--pp", "8",
       "--global-batch-size", "64", "--micro-batch-size", "1"},
      {"network", "--design", "rail-only", "--gpus", "4096", "--hb-size", "8", "--radix", "64"},
      {"search", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "64", "--global-batch-size", "64",
       "--top", "3", "--format", "json"},
      {"calibrate", "--system", "aws-p5", "--nccl-tests", p5},
      {"failures", "--gpus", "256", "--network", "rail-only", "--radix", "16", "--trials", "50"}};
  for (const Args& args : commands) {
    RunResult one = RunRailsim(args);
    ASSERT_EQ(0, one.status) << one.err;
    Args mpi = {"--allow-run-as-root", "--oversubscribe", "-np", "2", RAILSIM_BINARY};
    mpi.insert(mpi.end(), args.begin(), args.end());
    RunResult two = RunProgram("mpirun", mpi);
    EXPECT_EQ(0, two.status) << args[0] << ": " << two.err;
    EXPECT_EQ(one.out, two.out) << args[0];
    mpi.insert(mpi.end(), {"--bogus", "1"});
    RunResult bad = RunProgram("mpirun", mpi);
    EXPECT_EQ(2, bad.status) << args[0];
    EXPECT_EQ("", bad.out) << args[0];
    const size_t at = bad.err.find("railsim: error: --bogus: unknown flag");
    ASSERT_NE(std::string::npos, at) << args[0] << ": " << bad.err;
    EXPECT_EQ(std::string::npos, bad.err.find("railsim: error:", at + 1)) << "printed once: " << bad.err;
  }
#endif
}

// MoE parallel folding from the command line: the layout refused while ep
// had to divide dp runs with --expert-tensor-parallel-size 1, its launcher
// flags read back, and `collective --group ep` places and simulates the same
// folded EP group: inside a 64-GPU NVLink domain no byte reaches a NIC.
TEST(CliTest, FoldedExpertLayoutRunsExportsAndSimulates) {
  const Args folded = {"estimate", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "256", "--tp", "2",
                       "--pp", "8", "--ep", "32", "--sequence-parallel", "--micro-batch-size", "1",
                       "--global-batch-size", "1024"};
  RunResult refused = RunRailsim(folded);
  EXPECT_EQ(2, refused.status);
  EXPECT_EQ("railsim: error: --ep: expected ep x expert tensor-parallel size to divide tp x cp x dp = 32 (the "
            "expert layers fold onto the attention's GPUs, as in Megatron-Core), got 32 x 2 = 64; "
            "--expert-tensor-parallel-size 1 fits\n",
            refused.err);
  Args etp1 = folded;
  etp1.insert(etp1.end(), {"--expert-tensor-parallel-size", "1"});
  Args json = etp1;
  json.insert(json.end(), {"--format", "json"});
  nlohmann::json j = JsonOf(json);
  EXPECT_EQ(32, j["strategy"]["ep"]);
  EXPECT_EQ(1, j["strategy"]["etp"]);
  EXPECT_EQ(16, j["strategy"]["dp"]);
  EXPECT_EQ(4, j["moe_dispatch"]["hb_domains_spanned"]);  // EP 32, one apart, over 8-GPU domains

  Args megatron = etp1;
  // 61 layers on 8 stages as Megatron-Core can split them: 7, 8 x 6, 6.
  megatron.insert(megatron.end(), {"--decoder-first-pipeline-num-layers", "7", "--decoder-last-pipeline-num-layers",
                                   "6", "--format", "megatron-args"});
  RunResult args = RunRailsim(megatron);
  ASSERT_EQ(0, args.status) << args.err;
  EXPECT_NE(std::string::npos, args.out.find("--expert-model-parallel-size 32 \\\n")) << args.out;
  EXPECT_NE(std::string::npos, args.out.find("--expert-tensor-parallel-size 1 \\\n")) << args.out;
  const spec::Strategy back =
      spec::ParseLauncherArgs(spec::Launcher::kMegatron, args.out, spec::LoadModel("deepseek-v3", "--model"), 256);
  EXPECT_EQ(1, back.expert_tp());
  EXPECT_EQ(32, back.ep);
  EXPECT_EQ(16, back.dp);
  Args nemo = etp1;
  nemo.insert(nemo.end(), {"--format", "nemo-overrides"});
  RunResult refused_nemo = RunRailsim(nemo);
  EXPECT_EQ(2, refused_nemo.status);
  EXPECT_EQ("railsim: error: --format: nemo-overrides write the experts' tensor parallelism as tp only; for "
            "another --expert-tensor-parallel-size use --format megatron-args\n",
            refused_nemo.err);

  // DeepSeek-V3 with tp 2, ep 64, etp 1 on 128 GPUs: the EP groups are GPUs
  // 0-63 and 64-127. On 64-GPU NVLink domains the simulated dispatch uses
  // NVLink only; on DGX B200's 8-GPU nodes it crosses the NICs.
  for (auto [system, hb, on_nics] : {std::tuple{"gb200-nvl72", "64", false}, std::tuple{"dgx-b200", "8", true}}) {
    nlohmann::json c = JsonOf({"collective", "--op", "moe-dispatch", "--model", "deepseek-v3", "--system", system,
                               "--hb-size", hb, "--gpus", "128", "--tp", "2", "--ep", "64",
                               "--expert-tensor-parallel-size", "1", "--group", "ep", "--simulate", "--format",
                               "json"});
    EXPECT_EQ(64, c["group"]["size"]) << system;
    EXPECT_EQ(1, c["group"]["stride"]) << system;
    EXPECT_GT(c["bytes_by_tier"]["nvlink"].get<double>(), 0) << system;
    EXPECT_EQ(on_nics, c["bytes_by_tier"]["nic_leaf"].get<double>() > 0) << system;
  }
}

// The second embedded scenario: 16,384 Blackwell GPUs as GB200 NVL72 racks
// (64 of each rack's 72 used) or as DGX B200 nodes. Each domain size runs
// its jobs on its own system and prices its cluster with its own server:
// 2,048 DGX B200 at the catalog's price, or 256 whole racks, 18,432 GPUs
// built around the jobs' 16,384.
TEST(CliTest, BlackwellRacksScenarioSetsNvl72RacksAgainstDgxB200Nodes) {
  const nlohmann::json j = JsonOf({"compare", "--scenario", "blackwell-racks", "--format", "json"});
  const nlohmann::json catalog =
      nlohmann::json::parse(Slurp(std::string(RAILSIM_SOURCE_DIR) + "/presets/catalogs/default.json"));
  std::map<std::string, double> server_usd;
  for (const nlohmann::json& s : catalog["servers"]) {
    server_usd[s["name"]] = s["cost_usd"].get<double>() + s["hb_switch_cost_usd"].get<double>();
  }
  ASSERT_EQ(4u, j["network"].size());  // 2 domain sizes x 2 radixes
  for (const nlohmann::json& n : j["network"]) {
    const bool racks = n["hb_domain_size"] == 72;
    EXPECT_EQ(racks ? 18432 : 16384, n["gpus"]);
    EXPECT_EQ(racks ? "gb200-nvl72" : "dgx-b200", n["server"]);
    const double servers = racks ? 256 * server_usd["gb200-nvl72"] : 2048 * server_usd["dgx-b200"];
    for (const nlohmann::json& d : n["designs"]) {
      EXPECT_EQ(0, d["hb_fabric_cost_usd"]);  // both servers hold their HB domain
      EXPECT_DOUBLE_EQ(servers + d["cost_usd"].get<double>(), d["cluster_cost_usd"].get<double>());
    }
  }
  std::map<std::pair<int, int64_t>, double> rail_only_s;
  for (const nlohmann::json& t : j["training"]) {
    const int k = t["hb_domain_size"];
    EXPECT_EQ(k == 72 ? "gb200-nvl72" : "dgx-b200", t["system"]);
    for (const char* side : {"rail_optimized_strategy", "rail_only_strategy", "ideal_strategy"}) {
      const nlohmann::json& s = t[side];
      EXPECT_EQ(16384, s["tp"].get<int64_t>() * s["pp"].get<int64_t>() * s["dp"].get<int64_t>() *
                           s["cp"].get<int64_t>())
          << side;
      EXPECT_EQ("fp8", s["precision"]) << side;  // the scenario's precision
    }
    rail_only_s[{k, t["global_batch_size"].get<int64_t>()}] = t["rail_only_iteration_time_s"];
  }
  // Llama 3.1 405B on the same GPU count: the rack's GPU and its 72-GPU
  // NVLink domain are no slower at either batch.
  for (int64_t batch : {2048, 4096}) {
    const double racks = rail_only_s[std::pair{72, batch}], nodes = rail_only_s[std::pair{8, batch}];
    EXPECT_LT(racks, nodes) << batch;
  }
  const std::string verdict = j["verdict"].dump();
  EXPECT_NE(std::string::npos, verdict.find("HB domain 72 (gb200-nvl72) against 8 (dgx-b200), both on Rail-only: "))
      << verdict;
}

// A report whose first domain size is the racks' (64 of 72 used): its
// failure study runs the jobs' 16,384 GPUs on that size's own system.
TEST(CliTest, ReportOfRacksFirstStudiesTheirFailures) {
  const std::string dir = MakeTempDir();
  std::ofstream(dir + "/racks.json") << R"({"name": "racks-first", "gpus": 16384, "hb_domain_sizes": [72, 8],
      "radixes": [64], "port_speed": "400Gbps", "model": "llama3-405b", "system": "dgx-b200",
      "hb_domain_systems": {"72": "gb200-nvl72"}, "gpus_per_domain": 64, "global_batch_sizes": [2048]})";
  RunResult r = RunRailsim({"report", "--scenario", dir + "/racks.json", "--out", dir + "/report", "--quiet"});
  ASSERT_EQ(0, r.status) << r.err;
  EXPECT_EQ(4, LineCount(Slurp(dir + "/report/failures.csv")));  // header and 3 designs
}

}  // namespace
}  // namespace railsim::testutil
