// --model and --seq-length, as every command that takes a model declares them
// (their values are read by request/job_flags.h).
#pragma once

#include <string>

#include "railsim/request/job_flags.h"

namespace CLI {
class App;
}

namespace railsim::cli {

using request::ApplySeqLengthFlag;
using request::CheckSeqLengthNeedsModel;
using request::LoadModelFlags;
using request::ModelFlags;

/// Declares request::ModelFlagTable's rows: --model (its help after `help`;
/// required when `required`) and --seq-length.
void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required);

}  // namespace railsim::cli
