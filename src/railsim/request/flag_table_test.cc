// The strategy flag table is the one place a strategy flag is written: the
// CLI declares its rows, the Python module binds them as keywords, the sweep
// takes them as keys and the docs list them. Checked here against the binary,
// the sweep's key list and the docs pages.
#include "railsim/request/flag_table.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "testutil/run_binary.h"
#include "railsim/spec/sweep_config.h"

namespace railsim::request {
namespace {

std::string Page(const std::string& name) { return testutil::Slurp(std::string(RAILSIM_SOURCE_DIR) + "/docs/" + name); }

TEST(FlagTableTest, KeywordsAreTheFlagsNames) {
  EXPECT_EQ("micro_batch_size", KeywordOf("--micro-batch-size"));
  EXPECT_EQ("microbatch_group_size_per_virtual_pipeline_stage",
            KeywordOf("--microbatch-group-size-per-virtual-pipeline-stage"));
  EXPECT_EQ("moe_overlap", KeywordOf("--moe-overlap"));
}

TEST(FlagTableTest, ErrorsReadInTheKeywordsAModuleOrSweepUserTyped) {
  EXPECT_EQ("micro_batch_size: expected an integer", InKeywords(Error("--micro-batch-size", "expected an integer")));
  // A file's field after the flag keeps its place.
  EXPECT_EQ("model m.json: /hidden_size: expected a positive integer",
            InKeywords(Error("--model m.json", "/hidden_size: expected a positive integer")));
  // A field named otherwise, or no field, is left as it is.
  EXPECT_EQ("dp: does not divide gpus 256", InKeywords(Error("dp", "does not divide gpus 256")));
  EXPECT_EQ("no strategy fits in memory", InKeywords(Error("", "no strategy fits in memory")));
}

TEST(FlagTableTest, EveryRowLandsInItsOwnField) {
  // Writing through every row's accessor reaches a field no other row
  // reaches: two rows sharing a field would be one flag written twice.
  StrategyFlags f;
  std::set<const void*> fields;
  for (const FlagRow<StrategyFlags>& row : StrategyFlagTable()) {
    const void* field = row.text ? static_cast<const void*>(row.text(f)) : static_cast<const void*>(row.on(f));
    EXPECT_TRUE(fields.insert(field).second) << row.flag << " shares its field with another row";
    EXPECT_NE(nullptr, field) << row.flag;
    EXPECT_NE(std::string(""), row.help) << row.flag;
  }
  EXPECT_EQ(StrategyFlagTable().size(), fields.size());
}

TEST(FlagTableTest, EveryCommandThatTakesAStrategyDeclaresEveryRow) {
  for (const char* command : {"estimate", "traffic", "failures"}) {
    const testutil::RunResult help = testutil::RunRailsim({command, "--help"});
    ASSERT_EQ(0, help.status) << command;
    for (const FlagRow<StrategyFlags>& row : StrategyFlagTable()) {
      const bool listed = help.out.find(std::string("  ") + row.flag + " ") != std::string::npos ||
                          help.out.find(std::string("  ") + row.flag + "\n") != std::string::npos;
      EXPECT_TRUE(listed) << command << " --help lacks " << row.flag;
    }
  }
}

TEST(FlagTableTest, TheSweepTakesEveryRowAsAKeyOrSaysWhyNot) {
  // Rows a sweep point does not take: a grid over them is not a study yet.
  const std::set<std::string> not_swept = {
      "microbatch_group_size_per_virtual_pipeline_stage", "main_grads_dtype", "main_params_dtype", "exp_avg_dtype",
      "exp_avg_sq_dtype", "data_parallel_sharding", "fsdp_shard_group_size", "moe_dispatch_precision"};
  const std::vector<std::string> keys = spec::SweepParamKeys(spec::SweepStudy::kEstimate);
  for (const FlagRow<StrategyFlags>& row : StrategyFlagTable()) {
    const std::string keyword = KeywordOf(row.flag);
    const bool swept = std::find(keys.begin(), keys.end(), keyword) != keys.end();
    EXPECT_NE(swept, not_swept.contains(keyword))
        << keyword << (swept ? " is a sweep key: take it off the not-swept list" : " is no sweep key of estimate");
  }
}

TEST(FlagTableTest, TheDocsListEveryRowOnEveryPageThatTakesIt) {
  for (const char* page : {"estimate.md", "traffic.md", "failures.md"}) {
    const std::string text = Page(page);
    for (const FlagRow<StrategyFlags>& row : StrategyFlagTable()) {
      EXPECT_NE(std::string::npos, text.find(std::string("`") + row.flag + "`")) << page << " lacks " << row.flag;
    }
  }
}

TEST(FlagTableTest, TheJobsRowsAreDeclaredSweptAndDocumented) {
  struct Command {
    const char* name;
    bool design, search;
    spec::SweepStudy study;
  };
  for (const Command& c : {Command{"estimate", false, false, spec::SweepStudy::kEstimate},
                           Command{"search", false, true, spec::SweepStudy::kSearch},
                           Command{"traffic", true, false, spec::SweepStudy::kEstimate}}) {
    const testutil::RunResult help = testutil::RunRailsim({c.name, "--help"});
    ASSERT_EQ(0, help.status) << c.name;
    const std::string page = Page(std::string(c.name) + ".md");
    const std::vector<std::string> keys = spec::SweepParamKeys(c.study);
    for (const FlagRow<JobFlags>& row : JobFlagTable(c.design, c.search)) {
      EXPECT_NE(std::string::npos, help.out.find(std::string("  ") + row.flag)) << c.name << " lacks " << row.flag;
      EXPECT_NE(std::string::npos, page.find(std::string("`") + row.flag + "`")) << c.name << ".md lacks " << row.flag;
      // traffic's --design is the built network, which no sweep study has.
      if (c.design && std::string(row.flag) == "--design") continue;
      EXPECT_NE(keys.end(), std::find(keys.begin(), keys.end(), KeywordOf(row.flag)))
          << KeywordOf(row.flag) << " is no sweep key of " << spec::SweepStudyName(c.study);
    }
  }
}

TEST(FlagTableTest, SearchsOwnRowsAreDeclaredSweptAndDocumented) {
  // A sweep point runs one search on one thread and keeps its best strategy.
  const std::set<std::string> not_swept = {"top", "threads", "explore_optimizer", "moe_dispatch_precision"};
  const testutil::RunResult help = testutil::RunRailsim({"search", "--help"});
  ASSERT_EQ(0, help.status);
  const std::string page = Page("search.md");
  const std::vector<std::string> keys = spec::SweepParamKeys(spec::SweepStudy::kSearch);
  for (const FlagRow<SearchFlags>& row : SearchFlagTable()) {
    EXPECT_NE(std::string::npos, help.out.find(std::string("  ") + row.flag)) << "search lacks " << row.flag;
    EXPECT_NE(std::string::npos, page.find(std::string("`") + row.flag + "`")) << "search.md lacks " << row.flag;
    const std::string keyword = KeywordOf(row.flag);
    const bool swept = std::find(keys.begin(), keys.end(), keyword) != keys.end();
    EXPECT_NE(swept, not_swept.contains(keyword))
        << keyword << (swept ? " is a sweep key: take it off the not-swept list" : " is no sweep key of search");
  }
}

// Each row of `table` reaches a field of its own, has help, and is listed by
// `command --help` and documented on docs/<command>.md.
template <typename Flags>
void ExpectDeclaredAndDocumented(const char* command, const std::vector<FlagRow<Flags>>& table) {
  const testutil::RunResult help = testutil::RunRailsim({command, "--help"});
  ASSERT_EQ(0, help.status) << command;
  const std::string page = Page(std::string(command) + ".md");
  Flags f;
  std::set<const void*> fields;
  for (const FlagRow<Flags>& row : table) {
    const void* field = row.text ? static_cast<const void*>(row.text(f)) : static_cast<const void*>(row.on(f));
    EXPECT_TRUE(fields.insert(field).second) << command << " " << row.flag << " shares its field with another row";
    EXPECT_NE(std::string(""), row.help) << row.flag;
    EXPECT_NE(std::string::npos, help.out.find(std::string("  ") + row.flag)) << command << " lacks " << row.flag;
    EXPECT_NE(std::string::npos, page.find(std::string("`") + row.flag + "`")) << command << ".md lacks " << row.flag;
  }
}

TEST(FlagTableTest, AllToAllsAndCollectivesRowsAreDeclaredAndDocumented) {
  ExpectDeclaredAndDocumented("alltoall", AllToAllFlagTable());
  ExpectDeclaredAndDocumented("collective", CollectiveFlagTable());
  // The shared cluster rows land in each command's own ClusterFlags.
  CollectiveFlags c;
  EXPECT_EQ(&c.cluster.system, CollectiveFlagTable().front().text(c));
  EXPECT_EQ(std::string("--design"), CollectiveFlagTable()[3].alias);
}

TEST(FlagTableTest, FailuresAndClustersRowsAreDeclaredAndDocumented) {
  ExpectDeclaredAndDocumented("failures", FailureFlagTable());
  ExpectDeclaredAndDocumented("cluster", ClusterStudyFlagTable());
  // failures takes the strategy rows, none of them required (no --model, no strategy).
  size_t strategy_rows = 0;
  for (const FlagRow<FailureFlags>& row : FailureFlagTable()) {
    for (const FlagRow<StrategyFlags>& s : StrategyFlagTable()) strategy_rows += std::string(s.flag) == row.flag;
    EXPECT_EQ(std::string(row.flag) == "--gpus", row.required) << row.flag;
  }
  EXPECT_EQ(StrategyFlagTable().size(), strategy_rows);
}

TEST(FlagTableTest, ComparesAndReportsRowsAreDeclaredAndDocumented) {
  ExpectDeclaredAndDocumented("compare", CompareFlagTable());
  ExpectDeclaredAndDocumented("report", ReportFlagTable());
}

TEST(FlagTableTest, NetworksAndCostsRowsAreDeclaredAndDocumented) {
  ExpectDeclaredAndDocumented("network", NetworkFlagTable(false));
  ExpectDeclaredAndDocumented("cost", NetworkFlagTable(true));
  // --design is network's alone, --server cost's alone.
  auto has = [](const std::vector<FlagRow<NetworkFlags>>& table, const std::string& flag) {
    return std::any_of(table.begin(), table.end(), [&](const FlagRow<NetworkFlags>& r) { return r.flag == flag; });
  };
  EXPECT_TRUE(has(NetworkFlagTable(false), "--design"));
  EXPECT_FALSE(has(NetworkFlagTable(true), "--design"));
  EXPECT_TRUE(has(NetworkFlagTable(true), "--server"));
  EXPECT_FALSE(has(NetworkFlagTable(false), "--server"));
}

// The flags a table declares.
template <typename Flags>
void AddFlagsOf(const std::vector<FlagRow<Flags>>& table, std::set<std::string>* flags) {
  for (const FlagRow<Flags>& row : table) flags->insert(row.flag);
}

// Every flag `command --help` lists comes from one of the command's tables,
// or is one of the CLI's own output options (where and how to print); a flag
// declared straight on the CLI fails here.
TEST(FlagTableTest, EveryFlagOfEveryCommandComesFromItsTablesOrIsAnOutput) {
  std::map<std::string, std::set<std::string>> expected;
  auto job = [&](const char* command, bool design, bool search) {
    std::set<std::string>& f = expected[command];
    AddFlagsOf(ModelFlagTable(), &f);
    AddFlagsOf(JobFlagTable(design, search), &f);
    if (search) {
      AddFlagsOf(SearchFlagTable(), &f);
    } else {
      AddFlagsOf(StrategyFlagTable(), &f);
    }
  };
  job("estimate", false, false);
  job("search", false, true);
  job("traffic", true, false);
  AddFlagsOf(AllToAllFlagTable(), &expected["alltoall"]);
  AddFlagsOf(CollectiveFlagTable(), &expected["collective"]);
  AddFlagsOf(ModelFlagTable(), &expected["collective"]);
  AddFlagsOf(FailureFlagTable(), &expected["failures"]);
  AddFlagsOf(ModelFlagTable(), &expected["failures"]);
  AddFlagsOf(ClusterStudyFlagTable(), &expected["cluster"]);
  AddFlagsOf(NetworkFlagTable(false), &expected["network"]);
  AddFlagsOf(NetworkFlagTable(true), &expected["cost"]);
  AddFlagsOf(CompareFlagTable(), &expected["compare"]);
  AddFlagsOf(ReportFlagTable(), &expected["report"]);
  // The CLI's own options: how and where it prints. calibrate's, sweep's and
  // presets' flags are the CLI's alone (no module function or sweep key
  // takes them), so they are declared there once.
  const std::map<std::string, std::set<std::string>> outputs = {
      {"estimate", {"--format", "--trace", "--trace-png"}},
      {"search", {"--format", "--timing"}},
      {"traffic", {"--format", "--heatmap", "--export"}},
      {"alltoall", {"--format", "--export-links"}},
      {"collective", {"--format", "--export-links"}},
      {"failures", {"--format"}},
      {"cluster", {"--format", "--out"}},
      {"network", {"--format", "--export"}},
      {"cost", {"--format", "--export"}},
      {"compare", {"--format", "--print-scenario"}},
      {"report", {"--format"}},
  };
  for (auto& [command, flags] : expected) {
    flags.insert("--quiet");  // every command's
    flags.insert(outputs.at(command).begin(), outputs.at(command).end());
    const testutil::RunResult help = testutil::RunRailsim({command, "--help"});
    ASSERT_EQ(0, help.status) << command;
    std::set<std::string> listed;
    const std::regex option(R"((?:^|\n)  (--[a-z0-9-]+))");
    for (std::sregex_iterator it(help.out.begin(), help.out.end(), option), e; it != e; ++it) listed.insert((*it)[1]);
    EXPECT_EQ(flags, listed) << command;
  }
}

}  // namespace
}  // namespace railsim::request
