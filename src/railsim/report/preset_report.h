// Formatting the preset list of `railsim presets`.
#pragma once

#include <string>
#include <vector>

#include "railsim/spec/presets.h"

namespace railsim::report {

std::string PresetsTable(const std::vector<spec::PresetInfo>& presets);
/// {"presets": [{"kind", "name", "description"}, ...]}
std::string PresetsJson(const std::vector<spec::PresetInfo>& presets);
/// kind,name,description
std::string PresetsCsv(const std::vector<spec::PresetInfo>& presets);

}  // namespace railsim::report
