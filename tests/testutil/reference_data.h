// Test helper: reads a reference table from tests/data/ (CSV with '#'
// comment lines and one header line, cells optionally in double quotes) as
// rows of cells.
#pragma once

#include <string>
#include <vector>

namespace railsim::testutil {

/// Rows of tests/data/<name> below its header; empty cells kept. Fails the
/// calling test (ADD_FAILURE) if the file cannot be read.
std::vector<std::vector<std::string>> ReadReferenceCsv(const std::string& name);

}  // namespace railsim::testutil
