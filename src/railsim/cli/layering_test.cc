// The floors of docs/ARCHITECTURE.md, checked on the sources: every
// #include "railsim/<layer>/..." of a library or benchmark file names its
// own layer or one the picture's arrow lists for it. The arrows are read
// from the page itself, so the picture and the code cannot drift apart.
// Tests may reach up (an end-to-end test of perf/ may run a study).
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace railsim {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The picture's arrows: for each library layer ("perf"), the layers after
// its "->" ({"comm", "net", "spec", "core"}). cli/ and python/ ("everything
// below", "report, study and below") sit above every layer and are skipped.
std::map<std::string, std::set<std::string>> DocumentedFloors() {
  const std::string page = Slurp(fs::path(RAILSIM_SOURCE_DIR) / "docs/ARCHITECTURE.md");
  const size_t start = page.find("```\n"), end = page.find("```\n", start + 4);
  std::istringstream picture(page.substr(start + 4, end - start - 4));
  std::map<std::string, std::set<std::string>> floors;
  const std::regex layer_line(R"(^(\w+)/\s)"), word(R"(\w+)");
  std::string layer, line;
  while (std::getline(picture, line)) {
    std::smatch m;
    if (std::regex_search(line, m, layer_line)) layer = m[1];
    const size_t arrow = line.find("->");
    if (arrow == std::string::npos || layer == "cli" || layer == "python") continue;
    const std::string below = line.substr(arrow + 2);
    std::set<std::string>& allowed = floors[layer];
    for (std::sregex_iterator it(below.begin(), below.end(), word), e; it != e; ++it) allowed.insert(it->str());
  }
  floors["core"];  // the ground floor includes no other layer
  return floors;
}

TEST(LayeringTest, TheArchitecturePageNamesEveryLibraryLayer) {
  const std::map<std::string, std::set<std::string>> floors = DocumentedFloors();
  for (const char* layer : {"core", "spec", "net", "comm", "sim", "mpi", "perf", "search", "study", "calibrate", "sweep", "report"}) {
    EXPECT_TRUE(floors.count(layer)) << layer;
  }
  EXPECT_EQ((std::set<std::string>{"comm", "net", "spec", "core"}), floors.at("perf"));
}

TEST(LayeringTest, LibraryAndBenchmarkFilesIncludeOnlyDownward) {
  const std::map<std::string, std::set<std::string>> floors = DocumentedFloors();
  const std::regex include(R"re(#include "railsim/(\w+)/)re");
  int files = 0;
  for (const auto& [layer, allowed] : floors) {
    const fs::path folder = fs::path(RAILSIM_SOURCE_DIR) / "src/railsim" / layer;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      const std::string name = entry.path().filename().string();
      if (name.find("_test") != std::string::npos) continue;
      ++files;
      const std::string text = Slurp(entry.path());
      for (std::sregex_iterator it(text.begin(), text.end(), include), e; it != e; ++it) {
        const std::string used = (*it)[1];
        EXPECT_TRUE(used == layer || allowed.count(used))
            << layer << "/" << name << " includes railsim/" << used << "/, which is not below " << layer
            << " in docs/ARCHITECTURE.md";
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace railsim
