#include "railsim/cli/model_flags.h"

#include <CLI/CLI.hpp>


namespace railsim::cli {

void AddModelFlags(CLI::App* sub, ModelFlags* f, const std::string& help, bool required) {
  CLI::Option* model = sub->add_option("--model", f->model, help + " (a preset, a model JSON file or a Hugging Face config.json)");
  if (required) model->required();
  sub->add_option("--seq-length", f->seq_length,
                  "training sequence length (default: the model's; a config.json's is its pre-training context)");
}

}  // namespace railsim::cli
