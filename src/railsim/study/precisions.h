// The precision a job or a scenario names (--precision, a scenario's
// "precision"), checked against the GPU that runs it. Studies parse their
// scenario's text with these as the flags do; `where` names the flag,
// keyword, key or JSON pointer the text came from.
#pragma once

#include <string>
#include <vector>

#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"

namespace railsim::study {

/// bf16, fp8, mxfp8 or fp4, in spec::kAllPrecisions' order.
std::vector<std::string> PrecisionNames();

/// --precision: bf16, fp8, mxfp8 or fp4, when the context's GPU runs it
/// (fp8: an FP8 peak; mxfp8 and fp4: block-scaled tensor cores, an FP4 peak).
/// `where` is the flag, keyword or key the text came from.
spec::Precision ParsePrecision(const std::string& text, const perf::PerfContext& c,
                               const std::string& where = "--precision");
/// search's --precision: one of those, or "any": every one the GPU runs.
std::vector<spec::Precision> ParseSearchPrecisions(const std::string& text, const perf::PerfContext& c,
                                                   const std::string& where = "--precision");
/// --fp8-params (fp8, mxfp8) and --fp4-params (fp4) as the strategy's one
/// field; throws Error naming the flag given for the other format. `fp8_where`
/// and `fp4_where` are the flags, keywords or keys they came from.
bool LowPrecisionParams(bool fp8_params, bool fp4_params, spec::Precision p, const std::string& fp8_where,
                        const std::string& fp4_where);
}  // namespace railsim::study
