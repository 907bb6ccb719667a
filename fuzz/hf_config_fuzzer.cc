// libFuzzer target: the Hugging Face config.json reader. A config it accepts
// is a valid railsim model: its JSON form reads back unchanged.
#include "railsim/spec/hf_config.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    railsim::spec::ModelSpec m = railsim::spec::ParseHfConfigJson(text, "fuzz");
    const std::string json = railsim::spec::ModelToJson(m);
    if (railsim::spec::ModelToJson(railsim::spec::ParseModelJson(json)) != json) __builtin_trap();
    if (m.is_moe() && m.moe_layers.size() != size_t(m.num_layers)) __builtin_trap();
  });
}
