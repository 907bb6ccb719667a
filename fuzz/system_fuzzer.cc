// libFuzzer target: the system JSON parser.
#include "railsim/spec/presets.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    railsim::spec::ParseSystemJson(text);
  });
}
