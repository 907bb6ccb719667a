// Every subcommand's --help ends with a worked example, and docs/<command>.md
// documents every flag --help lists, so the docs cannot fall behind the code;
// every repository file the pages name exists.
#include <filesystem>
#include <fstream>
#include <regex>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testutil/run_binary.h"

namespace railsim::testutil {
namespace {

TEST(DocsTest, EveryCommandHasAnExampleAndADocsPageWithEveryFlag) {
  RunResult top = RunRailsim({"--help"});
  ASSERT_EQ(0, top.status);
  // Lines "  name   help" after "Subcommands:" (std::regex is avoided: GCC 12
  // warns inside it under the sanitizers).
  std::vector<std::string> names;
  std::stringstream lines(top.out.substr(top.out.find("Subcommands:")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    }
  }
  int commands = 0;
  for (const std::string& command : names) {
    RunResult help = RunRailsim({command, "--help"});
    ASSERT_EQ(0, help.status) << command;
    const size_t example = help.out.find("\nExample:\n  railsim " + command);
    EXPECT_NE(std::string::npos, example) << command << " --help has no worked example";
    const std::string doc = Slurp(std::string(RAILSIM_SOURCE_DIR) + "/docs/" + command + ".md");
    ASSERT_FALSE(doc.empty()) << "docs/" << command << ".md is missing";
    std::set<std::string> missing;
    std::stringstream options(help.out.substr(0, example));
    while (std::getline(options, line)) {
      size_t at = line.rfind("  --", 0) == 0 ? 2 : line.rfind("  -h,--", 0) == 0 ? 5 : std::string::npos;
      if (at == std::string::npos) continue;
      const std::string name = line.substr(at, line.find_first_of(" =", at) - at);
      // "--network,--design": one spelling is documented, the other is an alias.
      bool documented = false;
      std::stringstream spellings(name);
      for (std::string spelling; std::getline(spellings, spelling, ',');) {
        documented = documented || doc.find("`" + spelling + "`") != std::string::npos;
      }
      if (name != "--help" && !documented) missing.insert(name);
    }
    std::string list;
    for (const std::string& m : missing) list += " " + m;
    EXPECT_TRUE(missing.empty()) << "docs/" << command << ".md does not document:" << list;
    ++commands;
  }
  EXPECT_GE(commands, 11);
}

// Every key in a JSON document, at any depth.
void CollectKeys(const nlohmann::json& j, std::set<std::string>* keys) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      keys->insert(it.key());
      CollectKeys(it.value(), keys);
    }
  } else if (j.is_array()) {
    for (const nlohmann::json& e : j) CollectKeys(e, keys);
  }
}

// The `identifiers` of a page's "JSON keys:" paragraph (flags and values
// with other characters are skipped).
std::vector<std::string> DocumentedKeys(const std::string& doc) {
  std::vector<std::string> keys;
  const size_t start = doc.find("JSON keys:");
  if (start == std::string::npos) return keys;
  const size_t end = doc.find("\n\n", start);
  const std::string paragraph = doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
  for (size_t open = paragraph.find('`'); open != std::string::npos; open = paragraph.find('`', open + 1)) {
    const size_t close = paragraph.find('`', open + 1);
    if (close == std::string::npos) break;
    const std::string word = paragraph.substr(open + 1, close - open - 1);
    open = close;
    if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos) {
      keys.push_back(word);
    }
  }
  return keys;
}

// A docs page that names a JSON key names one the command really prints.
TEST(DocsTest, EveryJsonKeyADocsPageNamesIsInTheOutput) {
  const std::vector<std::vector<std::string>> runs = {
      {"network", "--design", "rail-only", "--gpus", "4096", "--hb-size", "8", "--radix", "64"},
      {"estimate", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "1024", "--tp", "8", "--pp", "8",
       "--global-batch-size", "512", "--micro-batch-size", "1"},
      {"search", "--model", "gpt3-175b", "--system", "dgx-h100", "--gpus", "1024", "--global-batch-size", "512",
       "--top", "2", "--timing"},
      {"traffic", "--model", "gpt3-175b", "--system", "dgx-a100", "--gpus", "64", "--tp", "8", "--pp", "4",
       "--global-batch-size", "64", "--micro-batch-size", "1"},
      {"alltoall", "--system", "dgx-a100", "--gpus", "72", "--bytes-per-pair", "1MB", "--network", "rail-only",
       "--radix", "128", "--simulate"},
      {"collective", "--system", "dgx-h100", "--gpus", "128", "--op", "all-reduce", "--bytes", "64MiB", "--group",
       "dp", "--tp", "8", "--simulate"},
      {"estimate", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "2048", "--tp", "1", "--pp", "16",
       "--ep", "64", "--global-batch-size", "2048", "--micro-batch-size", "1", "--moe-max-domains", "4"},
      {"collective", "--op", "moe-dispatch", "--model", "deepseek-v3", "--system", "dgx-h100", "--gpus", "2048",
       "--group", "ep", "--ep", "64", "--pp", "16", "--moe-max-domains", "4", "--network", "rail-only"},
      {"compare"},
      // A scenario's job trace: the shared_cluster key.
      {"compare", "--scenario",
       R"({"name": "shared", "gpus": 64, "hb_domain_sizes": [8], "radixes": [16], "port_speed": "400Gbps",
           "job_trace": ")" + std::string(RAILSIM_SOURCE_DIR) + R"(/tests/data/job-traces/lingjun2023-jobs.csv"})"},
      // 64 of each NVL72 rack's 72 GPUs: the keys that say so.
      {"traffic", "--model", "llama3-70b", "--system", "gb200-nvl72", "--gpus", "256", "--tp", "8", "--pp", "8",
       "--global-batch-size", "256", "--micro-batch-size", "1", "--gpus-per-domain", "64", "--placement", "tp-pp-dp"},
      {"collective", "--op", "all-reduce", "--bytes", "64MiB", "--group", "dp", "--system", "gb200-nvl72", "--gpus",
       "256", "--tp", "8", "--pp", "8", "--placement", "tp-pp-dp", "--gpus-per-domain", "64"},
      {"cluster", "--trace", std::string(RAILSIM_SOURCE_DIR) + "/tests/data/job-traces/lingjun2023-jobs.csv",
       "--gpus", "2048", "--network", "rail-only", "--policy", "first-fit"},
      {"calibrate", "--system", "dgx-h100", "--nccl-tests",
       std::string(RAILSIM_SOURCE_DIR) + "/tests/data/nccl-tests/p5-8nodes.csv", "--steps",
       std::string(RAILSIM_SOURCE_DIR) + "/tests/data/h100-steps.csv"}};
  std::map<std::string, std::set<std::string>> printed;  // per command, over its runs
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--format", "json"});
    RunResult r = RunRailsim(args);
    ASSERT_EQ(0, r.status) << args[0] << ": " << r.err;
    CollectKeys(nlohmann::json::parse(r.out), &printed[args[0]]);
  }
  for (const auto& [command, keys] : printed) {
    const std::string doc = Slurp(std::string(RAILSIM_SOURCE_DIR) + "/docs/" + command + ".md");
    const std::vector<std::string> named = DocumentedKeys(doc);
    EXPECT_FALSE(named.empty()) << "docs/" << command << ".md names no JSON keys";
    for (const std::string& key : named) {
      EXPECT_TRUE(keys.count(key)) << "docs/" << command << ".md names `" << key << "`, which "
                                   << command << " --format json does not print";
    }
  }
}

// A file moves (a test to another floor, a bench to request/) and the page
// that names it is not told: every path under the repository's own
// directories that README.md, BENCHMARKS.md or a docs/ page names must exist.
// NCCL's sources (src/graph/...) are named as NCCL's, not ours.
TEST(DocsTest, EveryRepositoryFileNamedExists) {
  const std::string root = RAILSIM_SOURCE_DIR;
  std::vector<std::string> pages = {"README.md", "BENCHMARKS.md"};
  for (const auto& entry : std::filesystem::directory_iterator(root + "/docs")) {
    if (entry.path().extension() == ".md") pages.push_back("docs/" + entry.path().filename().string());
  }
  const std::regex path(R"((src/railsim|tests|python|scripts|presets|examples)/[A-Za-z0-9_./-]+\.(cc|h|py|json|csv|sh|md|txt))");
  int named = 0;
  for (const std::string& page : pages) {
    const std::string text = Slurp(root + "/" + page);
    ASSERT_FALSE(text.empty()) << page;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it) {
      const std::string file = it->str();
      EXPECT_TRUE(std::filesystem::exists(root + "/" + file)) << page << " names " << file << ", which is not there";
      ++named;
    }
  }
  EXPECT_GT(named, 50);  // the pages name their sources; a regex that matched nothing would pass
}

}  // namespace
}  // namespace railsim::testutil
