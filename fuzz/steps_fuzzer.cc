// libFuzzer target: the measured step-time CSV reader (calibrate --steps).
#include "railsim/calibrate/step_times.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    // No model directory: a model named by path is read from the working
    // directory, where the corpus holds none; presets load as usual.
    railsim::calibrate::ParseStepsCsv(text, "fuzz.csv", "");
  });
}
