// `railsim estimate` and `railsim search` (iteration time, memory, best
// parallelisation).
#include "railsim/cli/commands.h"

namespace railsim::cli {

std::vector<Command> PerfCommands() { return {}; }

}  // namespace railsim::cli
