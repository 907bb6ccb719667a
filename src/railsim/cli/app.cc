// railsim's command-line entry: builds the command table, parses, dispatches.
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/arguments.h"
#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"

namespace railsim::cli {

std::vector<Command> AllCommands() {
  std::vector<Command> all;
  for (auto group : {NetworkCommands(), PerfCommands(), CommCommands(), FailureCommands(), CalibrateCommands(),
                     SweepCommands(), PresetCommands()}) {
    all.insert(all.end(), group.begin(), group.end());
  }
  return all;
}

namespace {

// CLI11 messages can span lines; railsim promises one.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

int Run(int argc, char** argv) {
  std::vector<Command> commands = AllCommands();
  std::vector<std::string> names;
  for (const Command& c : commands) names.push_back(c.name);

  CLI::App app{"railsim: design GPU-cluster networks for LLM training (Rail-only, rail-optimized, "
               "fat-tree) and predict training performance on them"};
  app.name("railsim");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.require_subcommand(0, 1);
  app.allow_windows_style_options(false);
  app.set_version_flag("--version", std::string("railsim ") + RAILSIM_VERSION);
  std::map<std::string, Action> actions;
  bool quiet = false;
  for (const Command& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    sub->footer(fmt::format("\nExample:\n{}\nMore: docs/{}.md", c.example, c.name));
    actions[c.name] = c.setup(sub);
    sub->add_flag("--quiet", quiet, "no progress line on stderr (it shows only when stderr is a terminal)");
  }

  if (argc < 2) {
    throw Error("", fmt::format("expected a command: {} (see railsim --help)", fmt::join(names, ", ")));
  }
  std::string first = argv[1];
  if (first == "help") {  // `railsim help [command]`, as git and go have it
    if (argc > 3) throw Error("help", "expected at most one command name");
    if (argc == 2) {
      PrintStdout(app.help());
      return 0;
    }
    const std::string topic = argv[2];
    if (!actions.count(topic)) {
      throw Error("help", fmt::format("unknown command '{}'{}; expected one of {}", topic, DidYouMean(topic, names),
                                      fmt::join(names, ", ")));
    }
    PrintStdout(app.get_subcommand(topic)->help());
    return 0;
  }
  if (!first.empty() && first[0] != '-' && !actions.count(first)) {
    throw Error("", fmt::format("unknown command '{}'{}; expected one of {}", first,
                                DidYouMean(first, names), fmt::join(names, ", ")));
  }
  if (actions.count(first)) CheckArguments(*app.get_subcommand(first), std::vector<std::string>(argv + 2, argv + argc));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForVersion& e) {
    PrintStdout(std::string(e.what()) + "\n");
    return 0;
  } catch (const CLI::CallForHelp&) {
    PrintStdout(app.help());
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    PrintStdout(app.help("", CLI::AppFormatMode::All));
    return 0;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help on a subcommand
      for (CLI::App* sub : app.get_subcommands()) PrintStdout(sub->help());
      if (app.get_subcommands().empty()) PrintStdout(app.help());
      return 0;
    }
    throw Error("", OneLine(e.what()));
  }
  SetQuiet(quiet);
  for (CLI::App* sub : app.get_subcommands()) return actions[sub->get_name()]();
  throw Error("", fmt::format("expected a command: {} (see railsim --help)", fmt::join(names, ", ")));
}

}  // namespace railsim::cli
