#include "railsim/study/precisions.h"

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/study/flag_values.h"

namespace railsim::study {

std::vector<std::string> PrecisionNames() {
  std::vector<std::string> names;
  for (spec::Precision p : spec::kAllPrecisions) names.push_back(spec::PrecisionName(p));
  return names;
}

spec::Precision ParsePrecision(const std::string& text, const perf::PerfContext& c, const std::string& where) {
  const spec::Precision p = *spec::PrecisionFromName(ParseChoiceFlag(where, text, PrecisionNames()));
  if (!c.gpu.Supports(p)) {
    throw Error(where, p == spec::Precision::kFp8
                           ? fmt::format("the system's GPU {} has no FP8 peak (gpu.peak_flops_fp8); use bf16",
                                         c.system.gpu.name)
                           : fmt::format("{} needs block-scaled tensor cores, which the system's GPU {} lacks (no "
                                         "gpu.peak_flops_fp4: Blackwell has them); use {}",
                                         text, c.system.gpu.name, c.gpu.Supports(spec::Precision::kFp8) ? "fp8" : "bf16"));
  }
  return p;
}

std::vector<spec::Precision> ParseSearchPrecisions(const std::string& text, const perf::PerfContext& c,
                                                   const std::string& where) {
  std::vector<std::string> names = PrecisionNames();
  names.push_back("any");
  if (ParseChoiceFlag(where, text, names) != "any") return {ParsePrecision(text, c, where)};
  std::vector<spec::Precision> out;
  for (spec::Precision p : spec::kAllPrecisions) {
    if (c.gpu.Supports(p)) out.push_back(p);
  }
  return out;
}

bool LowPrecisionParams(bool fp8_params, bool fp4_params, spec::Precision p, const std::string& fp8_where,
                        const std::string& fp4_where) {
  const bool fp4 = p == spec::Precision::kFp4;
  if (fp8_params && (fp4 || p == spec::Precision::kBf16)) {
    throw Error(fp8_where, fmt::format("applies to --precision fp8 or mxfp8, got {}{}", spec::PrecisionName(p),
                                       fp4 ? " (use " + fp4_where + ")" : ""));
  }
  if (fp4_params && !fp4) {
    throw Error(fp4_where, fmt::format("applies to --precision fp4, got {}{}", spec::PrecisionName(p),
                                       p != spec::Precision::kBf16 ? " (use " + fp8_where + ")" : ""));
  }
  return fp8_params || fp4_params;
}

}  // namespace railsim::study
