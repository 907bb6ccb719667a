// One rule for every subcommand's raw arguments, checked before CLI11 parses
// them, so that no command can differ: an unknown flag gets the nearest known
// one ("did you mean --radix?"), a flag that takes a value must get one (not
// the next flag, not an empty string), and a single-valued flag may be given
// only once. CLI11 alone reports these as "--radix is required" or silently
// takes the last of two values.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace railsim::cli {

/// Throws Error naming the offending flag unless `args` (the words after the
/// subcommand's name) follow the rule above for `sub` and its own
/// subcommands. Does nothing when --help is among them.
void CheckArguments(const CLI::App& sub, const std::vector<std::string>& args);

}  // namespace railsim::cli
