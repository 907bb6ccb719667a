// railsim's command-line entry: builds the command table, parses, dispatches.
#include <map>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/arguments.h"
#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/cli/mpi_ranks.h"
#include "railsim/core/error.h"
#include "railsim/core/file.h"
#include "railsim/core/spellcheck.h"
#include "railsim/study/command_line.h"

namespace railsim::cli {

std::vector<Command> AllCommands() {
  std::vector<Command> all;
  for (auto group : {NetworkCommands(), PerfCommands(), CommCommands(), FailureCommands(), CalibrateCommands(),
                     SweepCommands(), ClusterCommands(), PresetCommands()}) {
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

// A parsed command line: the action to run, or the exit status when parsing
// answered already (help, version). The app owns the options the action
// reads, so it lives as long.
struct Parsed {
  std::unique_ptr<CLI::App> owner;
  Action action;
  int status = 0;
};

Parsed Parse(int argc, char** argv) {
  std::vector<Command> commands = AllCommands();
  std::vector<std::string> names;
  for (const Command& c : commands) names.push_back(c.name);

  Parsed parsed;
  parsed.owner = std::make_unique<CLI::App>(
      "railsim: design GPU-cluster networks for LLM training (Rail-only, rail-optimized, fat-tree) and predict "
      "training performance on them");
  CLI::App& app = *parsed.owner;
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
      return parsed;
    }
    const std::string topic = argv[2];
    if (!actions.count(topic)) {
      throw Error("help", fmt::format("unknown command '{}'{}; expected one of {}", topic, DidYouMean(topic, names),
                                      fmt::join(names, ", ")));
    }
    PrintStdout(app.get_subcommand(topic)->help());
    return parsed;
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
    return parsed;
  } catch (const CLI::CallForHelp&) {
    PrintStdout(app.help());
    return parsed;
  } catch (const CLI::CallForAllHelp&) {
    PrintStdout(app.help("", CLI::AppFormatMode::All));
    return parsed;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help on a subcommand
      for (CLI::App* sub : app.get_subcommands()) PrintStdout(sub->help());
      if (app.get_subcommands().empty()) PrintStdout(app.help());
      return parsed;
    }
    throw Error("", OneLine(e.what()));
  }
  SetQuiet(quiet);
  for (CLI::App* sub : app.get_subcommands()) {
    parsed.action = actions[sub->get_name()];
    return parsed;
  }
  throw Error("", fmt::format("expected a command: {} (see railsim --help)", fmt::join(names, ", ")));
}

}  // namespace

int Run(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  InputFileRecord inputs;  // so that no output replaces a file the command read
  MpiRanks ranks(args);
  if (!ranks.runs_command()) return ranks.status();
  try {
    Parsed parsed = Parse(argc, argv);
    // Outputs are rank 0's: only its files are checked.
    if (parsed.action && !ranks.silent() && study::CheckOutputFlags(args)) MoveReportToStderr();
    return parsed.action ? parsed.action() : parsed.status;
  } catch (const Error& e) {
    return ranks.Fail(e);
  }
}

}  // namespace railsim::cli
