// --model and --seq-length, as every command that takes a model declares them
// (their values are read by study/job_flags.h).
#pragma once

#include <string>

#include "railsim/study/job_flags.h"

namespace CLI {
class App;
}

namespace railsim::cli {

using study::ApplySeqLengthFlag;
using study::CheckSeqLengthNeedsModel;
using study::LoadModelFlags;
using study::ModelFlags;

/// Declares study::ModelFlagTable's rows: --model (its help after `help`;
/// required when `required`) and --seq-length.
void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required);

}  // namespace railsim::cli
