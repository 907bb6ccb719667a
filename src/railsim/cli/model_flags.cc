#include "railsim/cli/model_flags.h"

#include <cassert>

#include <CLI/CLI.hpp>

#include "railsim/cli/flags.h"
#include "railsim/core/error.h"
#include "railsim/spec/presets.h"

namespace railsim::cli {

void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required) {
  CLI::Option* model = sub->add_option("--model", f->model, help + " (a preset, a model JSON file or a Hugging Face config.json)");
  if (required) model->required();
  sub->add_option("--seq-length", f->seq_length,
                  "training sequence length (default: the model's; a config.json's is its pre-training context)");
}

void ApplySeqLengthFlag(const std::string& seq_length, spec::ModelSpec* m) {
  if (seq_length.empty()) return;
  spec::SetSeqLength(m, ParseIntFlag("--seq-length", seq_length, 1, spec::kMaxSeqLength), "--seq-length");
}

spec::ModelSpec LoadModelFlags(const ModelFlags& f) {
  assert(!f.model.empty() && "callers check --model first");
  spec::ModelSpec m = spec::LoadModel(f.model, "--model");
  ApplySeqLengthFlag(f.seq_length, &m);
  return m;
}

void CheckSeqLengthNeedsModel(const ModelFlags& f) {
  if (f.model.empty() && !f.seq_length.empty()) throw Error("--seq-length", "sets the model's length; give --model too");
}

}  // namespace railsim::cli
