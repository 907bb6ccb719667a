// libFuzzer target: the sweep config parser. A parsed config must describe
// a grid of 1 to kMaxSweepPoints points whose first and last points carry
// every axis's keys.
#include "railsim/spec/sweep_config.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    railsim::spec::SweepConfig c = railsim::spec::ParseSweepConfigJson(text);
    if (c.points < 1 || c.points > railsim::spec::kMaxSweepPoints) __builtin_trap();
    for (int64_t index : {int64_t{0}, c.points - 1}) {
      std::vector<railsim::spec::SweepParam> point = c.Point(index);
      for (const railsim::spec::SweepAxis& axis : c.axes) {
        for (const std::string& key : axis.keys) {
          if (!railsim::spec::FindParam(point, key)) __builtin_trap();
        }
      }
    }
  });
}
