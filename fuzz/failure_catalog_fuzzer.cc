// libFuzzer target: the failure catalog parser. A parsed catalog must hold
// only finite, in-range rates and repair times, and print back to JSON that
// parses to the same values.
#include <cmath>

#include "railsim/spec/failure_catalog.h"
#include "spec_fuzzer_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return railsim::fuzz::RunParser(data, size, [](std::string_view text) {
    railsim::spec::FailureCatalog c = railsim::spec::ParseFailureCatalogJson(text);
    for (const railsim::spec::ComponentRates& r : c.components) {
      if (!std::isfinite(r.rate_per_year) || r.rate_per_year < 0) __builtin_trap();
      if (!std::isfinite(r.mttr_hours) || r.mttr_hours <= 0) __builtin_trap();
    }
    railsim::spec::FailureCatalog again =
        railsim::spec::ParseFailureCatalogJson(railsim::spec::FailureCatalogToJson(c));
    for (int i = 0; i < railsim::spec::kComponents; ++i) {
      if (again.components[size_t(i)].rate_per_year != c.components[size_t(i)].rate_per_year) __builtin_trap();
      if (again.components[size_t(i)].mttr_hours != c.components[size_t(i)].mttr_hours) __builtin_trap();
    }
  });
}
