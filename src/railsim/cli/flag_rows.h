// Declares a flag table's rows (request/flag_table.h) as CLI11 options: the
// one place the CLI turns a row into an option, so every command that takes
// a table's flags spells them, documents them and defaults them alike.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "railsim/request/flag_table.h"

namespace railsim::cli {

/// Declares every row of `table` on `sub`, each landing in `f`. A required
/// row is required unless `optional` (a command whose job is optional).
template <typename Flags>
void AddFlagRows(CLI::App* sub, const std::vector<request::FlagRow<Flags>>& table, Flags* f, bool optional = false) {
  for (const request::FlagRow<Flags>& row : table) {
    const std::string name = row.alias ? std::string(row.flag) + "," + row.alias : std::string(row.flag);
    if (row.on) {
      sub->add_flag(name, *row.on(*f), row.help);
      continue;
    }
    CLI::Option* o = sub->add_option(name, *row.text(*f), row.help);
    if (row.show_default) o->capture_default_str();
    if (row.required) o->required(!optional);
    if (row.given) o->each([given = row.given(*f)](const std::string&) { *given = true; });
  }
}

}  // namespace railsim::cli
