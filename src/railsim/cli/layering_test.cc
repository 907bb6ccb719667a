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
  for (const char* layer : {"core", "spec", "net", "comm", "sim", "mpi", "perf", "search", "study", "request", "calibrate", "sweep", "report"}) {
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

// The build links each floor's library (railsim_<layer>, CMakeLists.txt)
// with exactly the floors its arrow lists, so a call up a floor fails to
// link even where no include shows it.
TEST(LayeringTest, TheBuildLinksEachFloorOnlyToTheFloorsBelowIt) {
  const std::map<std::string, std::set<std::string>> floors = DocumentedFloors();
  const std::string cmake = Slurp(fs::path(RAILSIM_SOURCE_DIR) / "CMakeLists.txt");
  const std::regex link_line(R"(target_link_libraries\(railsim_(\w+) PUBLIC([^\n]*))"), lib(R"(railsim_(\w+))");
  std::map<std::string, std::set<std::string>> linked;
  for (std::sregex_iterator it(cmake.begin(), cmake.end(), link_line), e; it != e; ++it) {
    const std::string deps = (*it)[2];
    std::set<std::string>& below = linked[(*it)[1]];
    for (std::sregex_iterator d(deps.begin(), deps.end(), lib); d != e; ++d) below.insert((*d)[1]);
  }
  for (const auto& [layer, allowed] : floors) {
    ASSERT_TRUE(linked.count(layer)) << "CMakeLists.txt has no railsim_" << layer << " library";
    EXPECT_EQ(allowed, linked.at(layer)) << "railsim_" << layer << " links other floors than docs/ARCHITECTURE.md's arrow";
  }
  EXPECT_EQ(floors.size(), linked.size());
}

}  // namespace
}  // namespace railsim
