#include "railsim/core/reference_data_test_util.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace railsim::testutil {

std::vector<std::vector<std::string>> ReadReferenceCsv(const std::string& name) {
  std::string path = std::string(RAILSIM_SOURCE_DIR) + "/tests/data/" + name;
  std::ifstream in(path);
  if (!in) ADD_FAILURE() << "cannot read " << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace railsim::testutil
