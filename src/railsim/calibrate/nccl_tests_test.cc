// The nccl-tests readers against the published rows they were laid out from
// (tests/data/nccl-tests/p5-8nodes.csv; the text files are those rows in the
// exact format the *_perf binaries print, made by make_p5_text.py there), and
// every error message, word for word.
#include "railsim/calibrate/nccl_tests.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "testutil/reference_data.h"

namespace railsim::calibrate {
namespace {

std::string DataPath(const std::string& name) { return std::string(RAILSIM_SOURCE_DIR) + "/tests/data/" + name; }

// The published rows of one op ("all-reduce"), as the reference file gives them.
std::vector<std::vector<std::string>> Source(const std::string& op) {
  std::vector<std::vector<std::string>> rows;
  for (const std::vector<std::string>& c : testutil::ReadReferenceCsv("nccl-tests/p5-8nodes.csv")) {
    if (c[0] == op) rows.push_back(c);
  }
  return rows;
}

void ExpectRowsEqualSource(const NcclTestsRun& run, const std::string& op) {
  std::vector<std::vector<std::string>> source = Source(op);
  ASSERT_EQ(source.size(), run.rows.size()) << op;
  EXPECT_EQ(64, run.ranks);
  EXPECT_EQ(8, run.nodes);
  for (size_t i = 0; i < source.size(); ++i) {
    const NcclTestsRow& r = run.rows[i];
    const std::vector<std::string>& s = source[i];
    EXPECT_EQ(std::stod(s[3]) * 1048576, r.size_bytes) << op << " row " << i;
    EXPECT_EQ(std::stod(s[4]), r.oop_algbw_GBps) << op << " row " << i;
    EXPECT_EQ(std::stod(s[5]), r.oop_busbw_GBps) << op << " row " << i;
    EXPECT_EQ(std::stod(s[6]), r.inplace_algbw_GBps) << op << " row " << i;
    EXPECT_EQ(std::stod(s[7]), r.inplace_busbw_GBps) << op << " row " << i;
    // nccl-tests' algbw is size / time; the time column is printed to at
    // most seven characters (761.56, 15200.2), so it agrees to 1e-4.
    EXPECT_NEAR(r.size_bytes / (r.oop_time_us * 1e3) / r.oop_algbw_GBps, 1, 1e-4) << op << " row " << i;
    EXPECT_NEAR(r.size_bytes / (r.inplace_time_us * 1e3) / r.inplace_algbw_GBps, 1, 1e-4) << op << " row " << i;
  }
}

TEST(NcclTestsTest, TextRowsEqualThePublishedRows) {
  const std::vector<std::pair<std::string, NcclCollective>> files = {
      {"all_reduce_perf.txt", NcclCollective::kAllReduce},
      {"all_gather_perf.txt", NcclCollective::kAllGather},
      {"alltoall_perf.txt", NcclCollective::kAllToAll}};
  const std::vector<std::string> ops = {"all-reduce", "all-gather", "all-to-all"};
  for (size_t i = 0; i < files.size(); ++i) {
    std::vector<NcclTestsRun> runs = ReadNcclTests(DataPath("nccl-tests/p5-8nodes/" + files[i].first), "--nccl-tests");
    ASSERT_EQ(1u, runs.size());
    EXPECT_EQ(files[i].second, runs[0].collective);
    EXPECT_EQ("2.27.7", runs[0].nccl_version);  // nccl-library=22707, and NCCL's own "NCCL version 2.27.7+cuda12.8"
    EXPECT_EQ("", runs[0].algo);                // the source did not force an algorithm
    ExpectRowsEqualSource(runs[0], ops[i]);
  }
  NcclTestsRun ar = ReadNcclTests(DataPath("nccl-tests/p5-8nodes/all_reduce_perf.txt"), "x")[0];
  EXPECT_EQ(8388608, ar.rows[0].count);  // 32 MiB of floats
  EXPECT_EQ("float", ar.rows[0].type);
  EXPECT_EQ("sum", ar.rows[0].redop);
  EXPECT_EQ(-1, ar.rows[0].root);
  EXPECT_EQ(77, ar.rows[0].line);
}

TEST(NcclTestsTest, CsvRowsEqualThePublishedRows) {
  std::vector<NcclTestsRun> runs = ReadNcclTests(DataPath("nccl-tests/p5-8nodes.csv"), "--nccl-tests");
  ASSERT_EQ(3u, runs.size());
  EXPECT_EQ(NcclCollective::kAllReduce, runs[0].collective);
  EXPECT_EQ(NcclCollective::kAllGather, runs[1].collective);
  EXPECT_EQ(NcclCollective::kAllToAll, runs[2].collective);
  ExpectRowsEqualSource(runs[0], "all-reduce");
  ExpectRowsEqualSource(runs[1], "all-gather");
  ExpectRowsEqualSource(runs[2], "all-to-all");
}

// NCCL_ALGO / NCCL_PROTO from an environment dump and from NCCL's log, the
// version from the log, the collective from the file name, per-iteration
// columns and a timestamp, "N/A" in #wrong. reduce_scatter's count is per
// rank: 1024 bytes of floats over 2 ranks is 128.
TEST(NcclTestsTest, ReadsEnvironmentLogAndOptionalColumns) {
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
      "validation: 1 graph: 0\n"
      "#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid   6899 on    node-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   6900 on    node-b device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "NCCL_ALGO=Ring\n"
      "node-a:6899:6899 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n"
      "node-a:6899:6899 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n"
      "        1024           128     float     sum      -1    20.10    0.05    0.05       0    19.90    0.05    "
      "0.05    N/A\n"
      "        2048           256     float     sum      -1    21.00    0.10    0.10       0    21.00    0.10    "
      "0.10       0   2025-01-02 03:04:05\n";
  NcclTestsRun run = ParseNcclTestsText(text, "logs/reduce_scatter_perf.out");
  EXPECT_EQ(NcclCollective::kReduceScatter, run.collective);
  EXPECT_EQ("Ring", run.algo);
  EXPECT_EQ("Simple", run.proto);
  EXPECT_EQ("2.18.5", run.nccl_version);
  EXPECT_EQ(2, run.ranks);
  EXPECT_EQ(2, run.nodes);
  ASSERT_EQ(2u, run.rows.size());
  EXPECT_EQ(20.10, run.rows[0].oop_time_us);
  EXPECT_EQ(21.00, run.rows[1].inplace_time_us);
  for (std::string_view name : {"all_reduce_perf", "all-gather", "ALLTOALL", "sendrecv", "broadcast_perf",
                                "reduce_scatter"}) {
    EXPECT_TRUE(ParseNcclCollective(name).has_value()) << name;
  }
  EXPECT_FALSE(ParseNcclCollective("reduce_perf").has_value());
}

std::string ErrorOf(const std::string& text, const std::string& file) {
  try {
    ParseNcclTestsText(text, file);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(NcclTestsTest, BadFilesNameFileAndLine) {
  const std::string truncated = DataPath("nccl-tests/bad/truncated_all_reduce_perf.txt");
  const std::string garbled = DataPath("nccl-tests/bad/garbled_all_gather_perf.txt");
  EXPECT_EQ(truncated + ":83: expected a result row of 13 fields (size count type redop root, then time algbw busbw "
                        "#wrong out-of-place and in-place), got 7 (truncated?)",
            ErrorOf(ReadTextFile(truncated, "x"), truncated));
  EXPECT_EQ(garbled + ":77: time (out-of-place, us): expected a number in [0.001, 1e+10], got '12x6.63'",
            ErrorOf(ReadTextFile(garbled, "x"), garbled));
  try {
    ReadNcclTests(DataPath("nccl-tests/bad/garbled.csv"), "--nccl-tests");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(DataPath("nccl-tests/bad/garbled.csv") + ":7: size_mib: expected a number in [0, 9.53674e+08], got '6q4'",
              std::string(e.what()));
  }
  const std::string rank = "#  Rank  0 Group  0 Pid 1 on h device 0 [0000:04:00] GPU\n";
  const std::string row = "8 2 float sum -1 1.0 0.01 0.01 0 1.0 0.01 0.01 0\n";
  EXPECT_EQ("f.txt: no result rows: expected the table an nccl-tests binary prints (size count type redop root time "
            "algbw busbw #wrong ...)",
            ErrorOf(rank, "f.txt"));
  EXPECT_EQ("all_reduce.txt: no '#  Rank R Group G Pid P on HOST device D' lines: cannot tell how many GPUs ran",
            ErrorOf(row, "all_reduce.txt"));
  EXPECT_EQ("f.txt: cannot tell which collective ran: expected a '# Collective test starting: NAME' line or one of "
            "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf, broadcast_perf in "
            "the file name",
            ErrorOf(rank + row, "f.txt"));
  EXPECT_EQ("f.txt:1: railsim reads all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
            "sendrecv_perf, broadcast_perf; got 'hypercube_perf'",
            ErrorOf("# Collective test starting: hypercube_perf\n", "f.txt"));
  EXPECT_EQ("f.txt: no result rows: expected the table an nccl-tests binary prints (size count type redop root time "
            "algbw busbw #wrong ...); 1 line skipped (neither results nor headers), the first at line 2: 'mpirun: "
            "command not found'",
            ErrorOf(rank + "mpirun: command not found\n", "f.txt"));
  EXPECT_EQ("a.txt: the '#  Rank' lines list 1 ranks but the largest rank is 3: a rank is missing",
            ErrorOf("#  Rank  3 Group  0 Pid 1 on h device 0 [x] GPU\n" + row, "a.txt"));
  EXPECT_EQ("a.txt:2: rank 0 is listed twice", ErrorOf(rank + rank, "a.txt"));
  EXPECT_EQ("a.txt:1: expected '#  Rank R Group G Pid P on HOST device D ...' with a rank in [0, 16777215], got "
            "'#  Rank x Group 0'",
            ErrorOf("#  Rank x Group 0\n", "a.txt"));
  EXPECT_EQ("a.txt:2: size: expected bytes in [1, 1e+15], got '0'", ErrorOf(rank + "0 2 float sum -1 1 1 1 0 1 1 1 0\n", "a.txt"));
  EXPECT_EQ("a.txt:2: root: expected -1 or a rank, got '-2'",
            ErrorOf(rank + "8 2 float sum -2 1 1 1 0 1 1 1 0\n", "a.txt"));
  EXPECT_EQ("a.txt:2: time (in-place, us): expected a number in [0.001, 1e+10], got '0'",
            ErrorOf(rank + "8 2 float sum -1 1 1 1 0 0 1 1 0\n", "a.txt"));
  EXPECT_EQ("a.txt:2: #wrong (out-of-place): expected 0 or N/A, got 'many'",
            ErrorOf(rank + "8 2 float sum -1 1 1 1 many 1 1 1 0\n", "a.txt"));
}

TEST(NcclTestsTest, BadCsvNamesLineAndColumn) {
  auto error = [](const std::string& text) {
    try {
      ParseNcclTestsCsv(text, "n.csv");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ("n.csv:1: unknown column 'gpu' (did you mean 'gpus'?); expected op, nodes, gpus, size_bytes, size_mib, "
            "count, type, oop_time_us, oop_algbw_GBps, oop_busbw_GBps, inplace_time_us, inplace_algbw_GBps, "
            "inplace_busbw_GBps, algo, proto, nccl_version",
            error("op,nodes,gpu\n"));
  EXPECT_EQ("n.csv:1: missing column 'size_bytes' or 'size_mib'", error("op,nodes,gpus,oop_time_us\n"));
  EXPECT_EQ("n.csv:2: op: railsim reads all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
            "sendrecv_perf, broadcast_perf; got 'gather'",
            error("op,nodes,gpus,size_bytes,oop_time_us\ngather,1,8,1024,5\n"));
  EXPECT_EQ("n.csv:2: expected 5 cells as in the header, got 4 (truncated?)",
            error("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,8,1024\n"));
  EXPECT_EQ("n.csv:2: gpus, nodes: expected whole numbers with 1 <= nodes <= gpus <= 16777216, got 8 and 9",
            error("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,9,8,1024,5\n"));
  EXPECT_EQ("n.csv:2: gpus, nodes: expected whole numbers with 1 <= nodes <= gpus <= 16777216, got 1e300 and 1",
            error("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,1e300,1024,5\n"));
  EXPECT_EQ("n.csv:2: count: expected a whole number of elements, got '1e40'",
            error("op,nodes,gpus,size_bytes,count,oop_time_us\nall_reduce,1,8,1024,1e40,5\n"));
  EXPECT_EQ("n.csv: no data rows below the header", error("# x\nop,nodes,gpus,size_bytes,oop_time_us\n"));
}

// What launchers and NCCL add to a real log: a bare version line (read),
// an ssh warning, mpirun's and srun's own lines (skipped and counted).
TEST(NcclTestsTest, SkipsLinesOfLaunchersAndSaysHowMany) {
  const std::string text =
      "Warning: Permanently added 'node-b' (ED25519) to the list of known hosts.\n"
      "NCCL version 2.27.7+cuda12.8\n"
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#  Rank  0 Group  0 Pid   6899 on    node-a device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   6900 on    node-b device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
      "[node-a:06899] mca_base_component_repository_open: unable to open mca_btl_openib\n"
      "srun: Job step created\n"
      "        1024           256     float     sum      -1    20.10    0.05    0.05       0    19.90    0.05    "
      "0.05       0\n"
      "        2048           512     float     sum      -1    21.00    0.10    0.10       0    21.00    0.10    "
      "0.10       0\n"
      "8 ranks finished\n";
  NcclTestsRun run = ParseNcclTestsText(text, "logs/all_reduce_perf.out");
  ASSERT_EQ(2u, run.rows.size());
  EXPECT_EQ(8, run.rows[0].line);
  EXPECT_EQ("2.27.7", run.nccl_version);
  EXPECT_EQ(4, run.skipped);
  EXPECT_EQ(1, run.first_skipped_line);
  EXPECT_EQ("Warning: Permanently added 'node-b' (ED25519) to the list of known hosts.", run.first_skipped);
  EXPECT_EQ("logs/all_reduce_perf.out: 4 lines skipped (neither results nor headers), the first at line 1: "
            "'Warning: Permanently added 'node-b' (ED2...'",
            SkippedLinesNote(run));
  EXPECT_EQ("", SkippedLinesNote(ReadNcclTests(DataPath("nccl-tests/p5-8nodes/all_reduce_perf.txt"), "x")[0]));
}

// nccl-tests' rows that would mislead a fit, and values that turn into 0 or
// infinity once converted to seconds, each refused with its file and line.
TEST(NcclTestsTest, RefusesRowsThatWouldMisleadTheFit) {
  const std::string ranks = "#  Rank  0 Group  0 Pid 1 on a device 0 [0000:04:00] GPU\n"
                            "#  Rank  1 Group  0 Pid 1 on b device 0 [0000:04:00] GPU\n";
  const std::string row = "1024 256 float sum -1 10.0 0.10 0.20 0 10.0 0.10 0.20 0\n";
  EXPECT_EQ("a.txt:3: #wrong (in-place): expected 0, got 2: nccl-tests found corrupted data, so the row does not "
            "time a working collective",
            ErrorOf(ranks + "1024 256 float sum -1 10 0.1 0.2 0 10 0.1 0.2 2\n", "a.txt"));
  // all_reduce: size = count x 4 bytes; all_gather: count per rank, x 2 ranks.
  EXPECT_EQ("all_reduce.txt:3: count: 255 float elements of 4 bytes make 1020 bytes, but the size is 1024",
            ErrorOf(ranks + "1024 255 float sum -1 10 0.1 0.2 0 10 0.1 0.2 0\n", "all_reduce.txt"));
  EXPECT_EQ("all_gather.txt:3: count: 256 float elements of 4 bytes from each of 2 ranks make 2048 bytes, but the "
            "size is 1024",
            ErrorOf(ranks + "1024 256 float none -1 10 0.1 0.1 0 10 0.1 0.1 0\n", "all_gather.txt"));
  EXPECT_EQ("no error", ErrorOf(ranks + "1024 128 float none -1 10 0.1 0.1 0 10 0.1 0.1 0\n", "all_gather.txt"));
  EXPECT_EQ("all_reduce.txt:4: size 1024 bytes appears twice with different times: 10 us at line 3, 12 us here; give "
            "each run in its own file",
            ErrorOf(ranks + row + "1024 256 float sum -1 12.0 0.1 0.2 0 12 0.1 0.2 0\n", "all_reduce.txt"));
  EXPECT_EQ("no error", ErrorOf(ranks + row + row + "1024 512 half sum -1 9 0.1 0.2 0 9 0.1 0.2 0\n",
                                "all_reduce.txt"));  // the same row again, another type
  EXPECT_EQ("f.txt:5: a second collective, all_gather_perf, after all_reduce_perf at line 1: railsim reads one "
            "collective per file; split the file at its '# Collective test starting' lines",
            ErrorOf("# Collective test starting: all_reduce_perf\n" + ranks + row +
                        "# Collective test starting: all_gather_perf\n",
                    "f.txt"));
  EXPECT_EQ("all_reduce.txt:3: time (out-of-place, us): expected a number in [0.001, 1e+10], got '4.9e-324'",
            ErrorOf(ranks + "1024 256 float sum -1 4.9e-324 0.1 0.2 0 10 0.1 0.2 0\n", "all_reduce.txt"));
  EXPECT_EQ("all_reduce.txt:3: time (out-of-place, us): expected a number in [0.001, 1e+10], got '1e30'",
            ErrorOf(ranks + "1024 256 float sum -1 1e30 0.1 0.2 0 10 0.1 0.2 0\n", "all_reduce.txt"));
  EXPECT_EQ("all_reduce.txt:3: size: expected bytes in [1, 1e+15], got '9000000000000000000'",
            ErrorOf(ranks + "9000000000000000000 256 float sum -1 1 0.1 0.2 0 1 0.1 0.2 0\n", "all_reduce.txt"));
  auto csv = [](const std::string& text) {
    try {
      ParseNcclTestsCsv(text, "n.csv");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ("n.csv:2: size_bytes: expected a number in [0, 1e+15], got '1e308'",
            csv("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,8,1e308,5\n"));
  EXPECT_EQ("n.csv:2: size_mib: expected a number in [0, 9.53674e+08], got '1e308'",
            csv("op,nodes,gpus,size_mib,oop_time_us\nall_reduce,1,8,1e308,5\n"));
  EXPECT_EQ("n.csv:2: oop_algbw_GBps: 1024 bytes at 4.9e-324 GB/s take inf us; expected a time in [0.001, 1e+10] us",
            csv("op,nodes,gpus,size_bytes,oop_algbw_GBps\nall_reduce,1,8,1024,4.9e-324\n"));
  EXPECT_EQ("n.csv:2: oop_time_us: expected a number in [0.001, 1e+10], got '4.9e-324'",
            csv("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,8,1024,4.9e-324\n"));
  EXPECT_EQ("n.csv:3: count: 255 float elements of 4 bytes make 1020 bytes, but the size is 1024",
            csv("op,nodes,gpus,size_bytes,count,type,oop_time_us\nall_reduce,1,8,2048,512,float,5\n"
                "all_reduce,1,8,1024,255,float,5\n"));
  EXPECT_EQ("n.csv:3: size 1024 bytes appears twice with different times: 5 us at line 2, 6 us here; give each "
            "run in its own file",
            csv("op,nodes,gpus,size_bytes,oop_time_us\nall_reduce,1,8,1024,5\nall_reduce,1,8,1024,6\n"));
}

}  // namespace
}  // namespace railsim::calibrate
