#include "testutil/reference_data.h"

#include <fstream>

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
    // RFC 4180 quoting within a line: "a, b" is one cell, "" a quote.
    std::vector<std::string> cells(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      const char ch = line[i];
      if (ch == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = !quoted;
      } else if (ch == ',' && !quoted) {
        cells.emplace_back();
      } else {
        cells.back() += ch;
      }
    }
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace railsim::testutil
