// --model and --seq-length, as every command that takes a model declares them:
// a preset, a railsim model file or a Hugging Face config.json (which carries
// the model's maximum context, not the length a run trains at).
#pragma once

#include <optional>
#include <string>

#include "railsim/spec/model.h"

namespace CLI {
class App;
}

namespace railsim::cli {

struct ModelFlags {
  std::string model, seq_length;
};

/// Declares --model (with `help`; required when `required`) and --seq-length.
void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required);

/// The model --model names with --seq-length applied. Throws Error("--model"
/// or "--seq-length"), including for --seq-length without --model.
/// Requires: f.model is not empty.
spec::ModelSpec LoadModelFlags(const ModelFlags& f);

/// Applies --seq-length (when given) to a model loaded elsewhere.
void ApplySeqLengthFlag(const std::string& seq_length, spec::ModelSpec* m);

/// Throws Error("--seq-length") when it is given without a model.
void CheckSeqLengthNeedsModel(const ModelFlags& f);

}  // namespace railsim::cli
