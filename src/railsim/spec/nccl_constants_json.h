// Reading and writing the "nccl" object of a system preset (see
// spec/nccl_constants.h). Internal to spec/: system.cc is its only user.
#pragma once

#include <map>
#include <string>

#include "railsim/spec/json_reader.h"
#include "railsim/spec/nccl_constants.h"

namespace railsim::spec {

/// Reads and validates the "nccl" object `r`; `sources` receives its
/// "sources" map. Throws Error naming the JSON pointer of a bad field.
NcclConstants ReadNcclConstants(JsonReader r, std::map<std::string, std::string>* sources);

/// The JSON form of `n` (human units), which ReadNcclConstants reads back unchanged.
nlohmann::ordered_json NcclConstantsJson(const NcclConstants& n, const std::map<std::string, std::string>& sources);

}  // namespace railsim::spec
