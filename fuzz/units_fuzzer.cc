// libFuzzer target: the unit-string parsers ("400Gbps", "1MiB", ...), and the
// round trip through the formatters for every value they accept.
#include <cmath>
#include <cstdlib>
#include <string>

#include "railsim/core/units.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    using namespace railsim::units;
    double (*parsers[])(std::string_view, const std::string&) = {
        ParseBandwidth, ParseBytes, ParseFlopRate, ParseDuration, ParseNumber};
    for (auto parse : parsers) {
      try {
        double v = parse(text, "/x");
        if (!std::isfinite(v)) std::abort();
      } catch (const railsim::Error&) {
      }
    }
    try {
      double v = ParseBandwidth(text, "/x");
      if (v > 0 && std::fabs(ParseBandwidth(FormatByteRate(v), "/x") - v) > 1e-9 * v) std::abort();
    } catch (const railsim::Error&) {
    }
  });
}
