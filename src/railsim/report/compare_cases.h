// What compare's table, verdict and JSON read from a CompareResult alike:
// the cases at one HB domain size, one design's result, the MoE overhead and
// why a job has no time. Internal to report/ (compare_report.cc and
// compare_verdict.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "railsim/study/compare.h"

namespace railsim::report {

/// `design`'s result in the network case `c`, or nullptr.
const study::DesignResult* DesignOf(const study::NetworkCase& c, net::Design design);

/// The scenario's network cases at HB domain `k`, in radix order.
std::vector<const study::NetworkCase*> CasesAt(const study::CompareResult& result, int64_t k);

/// The MoE case at HB domain `k`, or nullptr.
const study::MoeCase* MoeAt(const study::CompareResult& result, int64_t k);

/// Why a job has no time on some network, in a sentence (empty when it has
/// one on every network).
std::string NoFitSentence(const study::CompareResult& result, const study::TrainingCase& t);

/// A ratio as a signed change: 1.083 -> "+8.3%".
std::string Change(double ratio);

/// Rail-only's iteration time against rail-optimized's for one MoE case
/// (both networks' best dispatch), less 1; 0 when either fits nothing.
double MoeOverhead(const study::MoeCase& m);

}  // namespace railsim::report
