// libFuzzer target: the placement file parser (and the rank order parser).
#include "railsim/spec/placement.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    if (!text.empty() && text[0] != '{') {
      railsim::spec::ParseRankOrder(text, "--placement");
      return;
    }
    railsim::spec::PlacementMap m = railsim::spec::ParsePlacementJson(text);
    // A parsed map is a permutation: every GPU exactly once.
    std::vector<bool> seen(m.gpu_of_rank.size(), false);
    for (int32_t g : m.gpu_of_rank) {
      if (g < 0 || size_t(g) >= seen.size() || seen[size_t(g)]) __builtin_trap();
      seen[size_t(g)] = true;
    }
  });
}
