// libFuzzer target: the nccl-tests readers (text as the *_perf binaries print
// it, and the CSV form); the first byte chooses which.
#include "railsim/calibrate/nccl_tests.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool csv = data[0] & 1;
  return railsim::fuzz::RunParser(data + 1, size - 1, [csv](std::string_view text) {
    if (csv) {
      railsim::calibrate::ParseNcclTestsCsv(text, "fuzz.csv");
    } else {
      railsim::calibrate::ParseNcclTestsText(text, "fuzz_all_reduce_perf.txt");
    }
  });
}
