// Presets: the systems, models and catalogs railsim ships, embedded at build
// time from presets/*/ *.json (see cmake/embed_presets.cmake), and the loaders
// that accept either a preset name or a path to a JSON file of the same shape.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/spec/catalog.h"
#include "railsim/spec/failure_catalog.h"
#include "railsim/spec/model.h"
#include "railsim/spec/scenario.h"
#include "railsim/spec/system.h"

namespace railsim::spec {

enum class PresetKind { kSystem, kModel, kCatalog, kScenario, kFailureCatalog };

/// "system", "model", "catalog", "scenario" or "failure-catalog".
const char* PresetKindName(PresetKind kind);

struct PresetInfo {
  PresetKind kind;
  std::string name;
  std::string description;
};

/// All embedded presets, grouped by kind, sorted by name within a kind.
std::vector<PresetInfo> ListPresets();

/// The embedded JSON text of a preset, or nullopt if there is none.
std::optional<std::string_view> FindPreset(PresetKind kind, std::string_view name);

/// True when some embedded preset, of any kind, is named `name`.
bool IsPresetName(std::string_view name);

/// The JSON text of any preset named `name` whatever its kind. Throws
/// Error(where) with a "did you mean" when no preset has that name.
std::string_view PresetText(std::string_view name, const std::string& where);

/// Loads a preset by name, a JSON file by path, or JSON text given as the
/// argument itself (starting with '{': the Python module's dicts). `flag`
/// (e.g. "--system") prefixes every error, followed by the file and the JSON
/// pointer: "--model m.json: /hidden_size: expected an integer >= 1, got -4".
SystemSpec LoadSystem(const std::string& name_or_path, const std::string& flag);
/// A model file may also be a Hugging Face config.json (spec/hf_config.h),
/// recognised by its keys or forced by an "hf:" prefix on the path.
ModelSpec LoadModel(const std::string& name_or_path, const std::string& flag);
Catalog LoadCatalog(const std::string& name_or_path, const std::string& flag);
Scenario LoadScenario(const std::string& name_or_path, const std::string& flag);
FailureCatalog LoadFailureCatalog(const std::string& name_or_path, const std::string& flag);

}  // namespace railsim::spec
