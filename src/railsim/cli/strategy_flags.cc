#include "railsim/cli/strategy_flags.h"

#include <CLI/CLI.hpp>

#include "railsim/study/flag_table.h"

namespace railsim::cli {
namespace {

// Declares every row of `table` on `sub`, each landing in `f`.
template <typename Flags>
void AddRows(CLI::App* sub, const std::vector<study::FlagRow<Flags>>& table, Flags* f, bool optional) {
  for (const study::FlagRow<Flags>& row : table) {
    if (row.on) {
      sub->add_flag(row.flag, *row.on(*f), row.help);
      continue;
    }
    CLI::Option* o = sub->add_option(row.flag, *row.text(*f), row.help);
    if (row.show_default) o->capture_default_str();
    if (row.required) o->required(!optional);
    if (row.given) o->each([given = row.given(*f)](const std::string&) { *given = true; });
  }
}

}  // namespace

void AddMoeFlags(CLI::App* sub, MoeFlags* f) { AddRows(sub, study::MoeFlagTable(), f, false); }

CLI::Option* AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional) {
  AddRows(sub, study::StrategyFlagTable(), f, optional);
  return sub->get_option("--data-parallel-sharding");
}

}  // namespace railsim::cli
