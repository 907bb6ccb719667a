// The command table: every subcommand is one row (name, one-line help, setup),
// as in ninja's tool table. setup() declares the command's flags on its CLI11
// subcommand and returns the action to run after a successful parse.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace railsim::cli {

/// Runs the parsed command; returns the exit status. Throws Error on bad input.
using Action = std::function<int()>;

struct Command {
  const char* name;
  const char* help;
  std::function<Action(CLI::App* sub)> setup;
  /// Worked example(s) that end the command's --help.
  const char* example = "";
};

/// Every subcommand, in the order --help lists them.
std::vector<Command> AllCommands();

std::vector<Command> NetworkCommands();  ///< compare, network, cost
std::vector<Command> PresetCommands();   ///< presets
std::vector<Command> PerfCommands();     ///< estimate, search
std::vector<Command> CommCommands();     ///< alltoall, collective
std::vector<Command> FailureCommands();  ///< failures
std::vector<Command> CalibrateCommands();  ///< calibrate
std::vector<Command> SweepCommands();    ///< sweep
std::vector<Command> ClusterCommands();  ///< cluster

/// Parses argv and runs the chosen command. Throws Error on bad input.
int Run(int argc, char** argv);

}  // namespace railsim::cli
