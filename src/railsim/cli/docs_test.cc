// Every subcommand's --help ends with a worked example, and docs/<command>.md
// documents every flag --help lists, so the docs cannot fall behind the code.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "railsim/cli/run_binary_test_util.h"

namespace railsim::testutil {
namespace {

TEST(DocsTest, EveryCommandHasAnExampleAndADocsPageWithEveryFlag) {
  RunResult top = RunRailsim({"--help"});
  ASSERT_EQ(0, top.status);
  const std::string subcommands = top.out.substr(top.out.find("Subcommands:"));
  std::regex name(R"(\n  ([a-z]+) )");
  int commands = 0;
  for (std::sregex_iterator it(subcommands.begin(), subcommands.end(), name), end; it != end; ++it) {
    const std::string command = (*it)[1];
    RunResult help = RunRailsim({command, "--help"});
    ASSERT_EQ(0, help.status) << command;
    const size_t example = help.out.find("\nExample:\n  railsim " + command);
    EXPECT_NE(std::string::npos, example) << command << " --help has no worked example";
    const std::string doc = Slurp(std::string(RAILSIM_SOURCE_DIR) + "/docs/" + command + ".md");
    ASSERT_FALSE(doc.empty()) << "docs/" << command << ".md is missing";
    const std::string options = help.out.substr(0, example);
    std::regex flag(R"(\n  (?:-h,)?(--[a-z0-9-]+))");
    std::set<std::string> missing;
    for (std::sregex_iterator f(options.begin(), options.end(), flag), fend; f != fend; ++f) {
      const std::string name = (*f)[1];
      if (name != "--help" && doc.find("`" + name + "`") == std::string::npos) missing.insert(name);
    }
    std::string list;
    for (const std::string& m : missing) list += " " + m;
    EXPECT_TRUE(missing.empty()) << "docs/" << command << ".md does not document:" << list;
    ++commands;
  }
  EXPECT_GE(commands, 11);
}

}  // namespace
}  // namespace railsim::testutil
