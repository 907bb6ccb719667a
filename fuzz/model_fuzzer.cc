// libFuzzer target: the model JSON parser. A parsed model prints back to JSON
// that parses to the same model, and an MoE model has one layer flag per layer.
#include "railsim/spec/presets.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    railsim::spec::ModelSpec m = railsim::spec::ParseModelJson(text);
    const std::string json = railsim::spec::ModelToJson(m);
    if (railsim::spec::ModelToJson(railsim::spec::ParseModelJson(json)) != json) __builtin_trap();
    if (m.is_moe() && m.moe_layers.size() != size_t(m.num_layers)) __builtin_trap();
    if (m.is_moe() && m.moe_layer_count() < 1) __builtin_trap();
  });
}
