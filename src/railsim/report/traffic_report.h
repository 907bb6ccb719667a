// Formatting the traffic analysis (`railsim traffic`): a table for people,
// one JSON document for scripts, and the per-pair CSV export.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "railsim/perf/context.h"
#include "railsim/spec/strategy.h"
#include "railsim/study/traffic.h"

namespace railsim::report {

/// Pairs, bytes by class, parallelism and tier, and the placement check.
std::string TrafficTable(const perf::PerfContext& c, const spec::Strategy& s, const study::TrafficResult& r);

/// One JSON document with at least gpu_pairs, gpu_pairs_communicating,
/// bytes_total, bytes_by_class{hb_domain, same_rail, cross_rail},
/// bytes_by_parallelism{tp, cp, ep, pp, dp, embedding}, bytes_by_tier{nvlink,
/// nic_to_leaf, leaf_to_spine, spine_to_core}, bytes_between_rails and
/// placement_check[...].
std::string TrafficJson(const perf::PerfContext& c, const spec::Strategy& s, const study::TrafficResult& r);

/// One row per communicating pair: src,dst,bytes,class,tp,cp,ep,pp,dp,embedding.
std::string TrafficPairsCsv(const study::TrafficResult& r);
/// The same handed to `sink` in blocks of about a megabyte (for large exports).
void WriteTrafficPairsCsv(const study::TrafficResult& r, const std::function<void(std::string_view)>& sink);

/// "megatron-1t on 32,768 x dgx-h100" and "placement tp-cp-ep-dp-pp;
/// rail-optimized network (radix 64, 3 tiers); HB domains of 8": the
/// heatmap's title lines (with StrategyLine between them).
std::string TrafficTitle(const perf::PerfContext& c);
std::string TrafficSetting(const perf::PerfContext& c, const study::TrafficResult& r);

}  // namespace railsim::report
