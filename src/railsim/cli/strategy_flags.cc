#include "railsim/cli/strategy_flags.h"

#include "railsim/cli/flag_rows.h"

namespace railsim::cli {

CLI::Option* AddStrategyFlags(CLI::App* sub, StrategyFlags* f, bool optional) {
  AddFlagRows(sub, request::StrategyFlagTable(), f, optional);
  return sub->get_option("--data-parallel-sharding");
}

}  // namespace railsim::cli
