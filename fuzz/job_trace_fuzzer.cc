// libFuzzer target: the job-trace CSV reader (cluster --trace) and the switch
// map reader (cluster --topology).
#include "railsim/spec/job_trace.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    try {
      railsim::spec::ParseJobTrace(text, "fuzz.csv");
    } catch (const railsim::Error&) {
    }
    railsim::spec::ParseSwitchMap(text, "fuzz.csv");
  });
}
