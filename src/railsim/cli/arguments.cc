#include "railsim/cli/arguments.h"

#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"

namespace railsim::cli {
namespace {

// The option of `app` spelled `--name`, or null.
const CLI::Option* FindOption(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) {
      if (l == name) return opt;
    }
  }
  return nullptr;
}

std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

const CLI::App* FindSubcommand(const CLI::App& app, const std::string& word) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return sub;
  }
  return nullptr;
}

// Flags (--simulate) expect no value; options expect one, or several.
bool TakesValue(const CLI::Option& opt) { return opt.get_expected_max() > 0; }

bool Repeatable(const CLI::Option& opt) { return opt.get_expected_max() > 1; }

// " (did you mean '--radix'?)" for a typo, or for the start of a longer flag
// (--micro-batch for --micro-batch-size).
std::string FlagHint(const std::string& flag, const std::vector<std::string>& names) {
  std::string hint = DidYouMean(flag, names);
  if (!hint.empty()) return hint;
  for (const std::string& n : names) {
    if (n.starts_with(flag)) return " (did you mean '" + n + "'?)";
  }
  return "";
}

}  // namespace

void CheckArguments(const CLI::App& sub, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h" || a == "--help-all") return;
  }
  const CLI::App* app = &sub;
  std::map<const CLI::Option*, std::string> seen;  // option -> first value, for the repeat message
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    if (!word.starts_with("--")) {
      if (const CLI::App* nested = FindSubcommand(*app, word)) app = nested;
      continue;  // a positional argument: CLI11 judges it
    }
    const size_t eq = word.find('=');
    const std::string flag = word.substr(0, eq);
    const CLI::Option* opt = FindOption(*app, flag.substr(2));
    if (!opt) {
      throw Error(flag, fmt::format("unknown flag for 'railsim {}'{}; see railsim {} --help", sub.get_name(),
                                    FlagHint(flag, FlagNames(*app)), sub.get_name()));
    }
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else if (TakesValue(*opt)) {
      if (i + 1 == args.size()) throw Error(flag, "expected a value after it, got nothing");
      const std::string& next = args[i + 1];
      if (next.starts_with("--") && FindOption(*app, next.substr(2, next.find('=') - 2))) {
        throw Error(flag, fmt::format("expected a value after it, got the flag {}", next));
      }
      value = next;
      ++i;
    }
    if (TakesValue(*opt) && value.empty()) throw Error(flag, "expected a value, got an empty one");
    auto [it, first] = seen.emplace(opt, value);
    if (!first && !Repeatable(*opt)) {
      throw Error(flag, TakesValue(*opt) ? fmt::format("given twice ({} and {}); give it once", Quoted(it->second),
                                                       Quoted(value))
                                         : std::string("given twice; give it once"));
    }
  }
}

}  // namespace railsim::cli
