#include "railsim/cli/model_flags.h"

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "railsim/cli/flag_rows.h"

namespace railsim::cli {

void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required) {
  std::vector<request::FlagRow<ModelFlags>> rows = request::ModelFlagTable();
  // The command's own words for what the model is for, before the row's.
  const std::string model_help = help + " (" + rows[0].help + ")";
  rows[0].help = model_help.c_str();
  rows[0].required = required;
  AddFlagRows(sub, rows, f);
}

}  // namespace railsim::cli
