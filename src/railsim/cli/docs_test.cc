// Every subcommand's --help ends with a worked example, and docs/<command>.md
// documents every flag --help lists, so the docs cannot fall behind the code.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "railsim/cli/run_binary_test_util.h"

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

}  // namespace
}  // namespace railsim::testutil
