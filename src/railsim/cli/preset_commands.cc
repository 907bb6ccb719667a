// `railsim presets` (list) and `railsim presets show NAME` (print the JSON to
// copy and edit; for a model file or Hugging Face config.json, the model as
// railsim reads it).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "railsim/cli/commands.h"
#include "railsim/cli/flags.h"
#include "railsim/core/file.h"
#include "railsim/report/preset_report.h"
#include "railsim/spec/presets.h"

namespace railsim::cli {
namespace {

Action SetupPresets(CLI::App* sub) {
  auto format = std::make_shared<std::string>("table");
  auto name = std::make_shared<std::string>();
  sub->add_option("--format", *format, "table, json or csv")->capture_default_str();
  CLI::App* show = sub->add_subcommand("show", "print a preset's JSON (a template for your own file)");
  show->add_option("name", *name,
                   "preset name, or a model file or Hugging Face config.json (printed as railsim reads it)")
      ->required();
  return [sub, show, format, name]() {
    if (show->parsed()) {
      const bool model_file = name->starts_with("hf:") || (!spec::IsPresetName(*name) && PathExists(*name));
      PrintStdout(model_file ? spec::ModelToJson(spec::LoadModel(*name, "presets show"))
                             : std::string(spec::PresetText(*name, "presets show")));
      return 0;
    }
    Format output = ParseFormatFlag(*format, true);
    std::vector<spec::PresetInfo> presets = spec::ListPresets();
    PrintStdout(output == Format::kJson  ? report::PresetsJson(presets)
                : output == Format::kCsv ? report::PresetsCsv(presets)
                                         : report::PresetsTable(presets));
    (void)sub;
    return 0;
  };
}

}  // namespace

std::vector<Command> PresetCommands() {
  return {{"presets", "list the embedded systems, models, catalogs and scenarios", SetupPresets, "  railsim presets                                  # every system, model, catalog and scenario\n  railsim presets show deepseek-v3 > my-model.json\n  railsim presets show Llama-3.1-8B/config.json    # a Hugging Face config as railsim reads it"}};
}

}  // namespace railsim::cli
