#include "railsim/spec/nccl_constants_json.h"

#include <fmt/format.h>

#include "railsim/core/error.h"

// The "nccl" object keeps NCCL's own units so that every number can be
// checked against src/graph/tuning.cc as written: latencies in microseconds
// (keys ending _us), bandwidths in GB/s = 1e9 bytes/s (keys ending _GBps).
namespace railsim::spec {
namespace {

constexpr const char* kAlgoKeys[kNcclAlgos] = {"ring", "tree", "nvls", "nvls_tree"};
constexpr const char* kProtoKeys[kNcclProtocols] = {"ll", "ll128", "simple"};
constexpr const char* kScaleKeys[3] = {"one_node", "two_nodes", "more_nodes"};

// Bounds that keep every derived time finite; NCCL's own values sit far
// inside them (latencies up to 31 us, bandwidths up to a few hundred GB/s).
constexpr double kMaxLatency_us = 10000;
constexpr double kMaxBandwidth_GBps = 100000;
constexpr double kUs = 1e-6, kGBps = 1e9;

PerAlgoProto ReadLatencies(JsonReader r) {
  PerAlgoProto out{};
  for (int a = 0; a < kNcclAlgos; ++a) {
    JsonReader algo = r.Object(kAlgoKeys[a]);
    for (int p = 0; p < kNcclProtocols; ++p) out[a][p] = algo.Number(kProtoKeys[p], 0, kMaxLatency_us) * kUs;
    algo.Finish();
  }
  r.Finish();
  return out;
}

// Per-scale bandwidths; 0 where NCCL's table has 0 (not available).
PerScale ReadPerScale(JsonReader r) {
  PerScale out{};
  for (int s = 0; s < 3; ++s) out[s] = r.Number(kScaleKeys[s], 0, kMaxBandwidth_GBps) * kGBps;
  r.Finish();
  return out;
}

// A non-empty list of numbers in [min, max], at most N long; with
// `descending`, strictly decreasing.
template <size_t N>
int ReadList(JsonReader& r, const std::string& key, double min, double max, double scale, bool descending,
             std::array<double, N>* out) {
  const nlohmann::json& a = r.Array(key);
  const std::string where = r.PointerTo(key);
  if (a.empty() || a.size() > N) throw Error(where, fmt::format("expected 1 to {} numbers, got {}", N, a.size()));
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = fmt::format("{}/{}", where, i);
    if (!a[i].is_number()) throw Error(at, fmt::format("expected a number, got {}", Describe(a[i])));
    const double v = a[i].get<double>();
    if (!(v >= min && v <= max)) throw Error(at, fmt::format("expected a number in [{}, {}], got {}", min, max, v));
    if (descending && i > 0 && !(v < (*out)[i - 1] / scale)) {
      throw Error(at, "expected the speeds in decreasing order");
    }
    (*out)[i] = v * scale;
  }
  return int(a.size());
}

nlohmann::ordered_json LatenciesJson(const PerAlgoProto& t) {
  nlohmann::ordered_json j;
  for (int a = 0; a < kNcclAlgos; ++a) {
    for (int p = 0; p < kNcclProtocols; ++p) j[kAlgoKeys[a]][kProtoKeys[p]] = t[a][p] / kUs;
  }
  return j;
}

nlohmann::ordered_json PerScaleJson(const PerScale& t) {
  nlohmann::ordered_json j;
  for (int s = 0; s < 3; ++s) j[kScaleKeys[s]] = t[s] / kGBps;
  return j;
}

template <size_t N>
nlohmann::ordered_json ListJson(const std::array<double, N>& a, int count, double scale) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (int i = 0; i < count; ++i) j.push_back(a[i] / scale);
  return j;
}

}  // namespace

NcclConstants ReadNcclConstants(JsonReader r, std::map<std::string, std::string>* sources) {
  NcclConstants n;
  n.enabled = true;
  n.ll128_enabled = r.BoolOr("ll128_enabled", true);
  n.ll_enabled = r.BoolOr("ll_enabled", true);
  n.base_latency_s = ReadLatencies(r.Object("base_latency_us"));
  n.nvlink_latency_s = ReadLatencies(r.Object("nvlink_latency_us"));
  n.net_latency_s = ReadLatencies(r.Object("net_latency_us"));
  n.net_overhead_s = r.Number("net_overhead_us", 0, kMaxLatency_us) * kUs;
  n.nic_reported_latency_s = r.NumberOr("nic_reported_latency_us", 0, 0, kMaxLatency_us) * kUs;
  n.ring_plateau_factor = r.Number("ring_plateau_factor", 1, 10);
  n.ll_max_Bps = ReadPerScale(r.Object("ll_max_GBps"));
  n.ring_ll128_channel_Bps = ReadPerScale(r.Object("ring_ll128_channel_GBps"));
  n.tree_channel_Bps = ReadPerScale(r.Object("tree_channel_GBps"));
  n.tree_ll128_channel_Bps = ReadPerScale(r.Object("tree_ll128_channel_GBps"));
  n.nvls_tree_channel_Bps = ReadPerScale(r.Object("nvls_tree_channel_GBps"));
  JsonReader corrections = r.Object("tree_correction");
  for (int p = 0; p < kNcclProtocols; ++p) {
    const std::string key = kProtoKeys[p];
    if (ReadList(corrections, key, 0.01, 1, 1, false, &n.tree_correction[p]) != kNcclTreeCorrections) {
      throw Error(corrections.PointerTo(key), fmt::format("expected {} numbers", kNcclTreeCorrections));
    }
  }
  corrections.Finish();
  n.nvls_tree_correction = r.BoolOr("nvls_tree_correction", false);
  n.intra_speed_count = ReadList(r, "intra_speeds_GBps", 0.01, kMaxBandwidth_GBps, kGBps, true, &n.intra_speeds_Bps);
  n.inter_speed_count = ReadList(r, "inter_speeds_GBps", 0.01, kMaxBandwidth_GBps, kGBps, true, &n.inter_speeds_Bps);
  n.search_nvlink_Bps = r.NumberOr("search_nvlink_GBps", 0, 0, kMaxBandwidth_GBps) * kGBps;
  n.max_search_channels = int(r.IntOr("max_search_channels", 0, 0, 64));
  n.caps_bound_time = r.BoolOr("caps_bound_time", true);
  n.nic_tree_efficiency = r.Number("nic_tree_efficiency", 0.01, 1.0);
  n.nic_alltoall_efficiency = r.Number("nic_alltoall_efficiency", 0.01, 1.0);
  n.p2p_peer_latency_s = r.NumberOr("p2p_peer_latency_us", 0, 0, kMaxLatency_us) * kUs;
  if (r.Has("pat")) {
    JsonReader pat = r.Object("pat");
    n.pat.enabled = true;
    n.pat.base_latency_s = pat.Number("base_latency_us", 0, kMaxLatency_us) * kUs;
    n.pat.rank_latency_s = pat.Number("rank_latency_us", 0, kMaxLatency_us) * kUs;
    n.pat.net_step_divisor = pat.Number("net_step_divisor", 0.01, 1000);
    n.pat.bw_factor = pat.Number("bandwidth_factor", 0.01, 1);
    pat.Finish();
  }
  if (r.Has("collnet")) {
    JsonReader cn = r.Object("collnet");
    n.collnet.enabled = true;
    n.collnet.nvlink_latency_s = cn.Number("nvlink_latency_us", 0, kMaxLatency_us) * kUs;
    n.collnet.net_latency_s = cn.Number("net_latency_us", 0, kMaxLatency_us) * kUs;
    n.collnet.arity_latency_s = cn.Number("arity_latency_us", 0, kMaxLatency_us) * kUs;
    n.collnet.bw_factor = cn.Number("bandwidth_factor", 0.01, 1);
    cn.Finish();
  }
  *sources = r.StringMapOr("sources");
  r.Finish();
  return n;
}

nlohmann::ordered_json NcclConstantsJson(const NcclConstants& n, const std::map<std::string, std::string>& sources) {
  nlohmann::ordered_json j;
  j["ll128_enabled"] = n.ll128_enabled;
  if (!n.ll_enabled) j["ll_enabled"] = false;
  j["base_latency_us"] = LatenciesJson(n.base_latency_s);
  j["nvlink_latency_us"] = LatenciesJson(n.nvlink_latency_s);
  j["net_latency_us"] = LatenciesJson(n.net_latency_s);
  j["net_overhead_us"] = n.net_overhead_s / kUs;
  j["nic_reported_latency_us"] = n.nic_reported_latency_s / kUs;
  j["ring_plateau_factor"] = n.ring_plateau_factor;
  j["ll_max_GBps"] = PerScaleJson(n.ll_max_Bps);
  j["ring_ll128_channel_GBps"] = PerScaleJson(n.ring_ll128_channel_Bps);
  j["tree_channel_GBps"] = PerScaleJson(n.tree_channel_Bps);
  j["tree_ll128_channel_GBps"] = PerScaleJson(n.tree_ll128_channel_Bps);
  j["nvls_tree_channel_GBps"] = PerScaleJson(n.nvls_tree_channel_Bps);
  for (int p = 0; p < kNcclProtocols; ++p) {
    j["tree_correction"][kProtoKeys[p]] = ListJson(n.tree_correction[p], kNcclTreeCorrections, 1);
  }
  if (n.nvls_tree_correction) j["nvls_tree_correction"] = true;
  j["intra_speeds_GBps"] = ListJson(n.intra_speeds_Bps, n.intra_speed_count, kGBps);
  j["inter_speeds_GBps"] = ListJson(n.inter_speeds_Bps, n.inter_speed_count, kGBps);
  // Written only where set, so that systems without them read back unchanged.
  if (n.search_nvlink_Bps > 0) j["search_nvlink_GBps"] = n.search_nvlink_Bps / kGBps;
  if (n.max_search_channels > 0) j["max_search_channels"] = n.max_search_channels;
  if (!n.caps_bound_time) j["caps_bound_time"] = false;
  j["nic_tree_efficiency"] = n.nic_tree_efficiency;
  j["nic_alltoall_efficiency"] = n.nic_alltoall_efficiency;
  j["p2p_peer_latency_us"] = n.p2p_peer_latency_s / kUs;
  if (n.pat.enabled) {
    j["pat"]["base_latency_us"] = n.pat.base_latency_s / kUs;
    j["pat"]["rank_latency_us"] = n.pat.rank_latency_s / kUs;
    j["pat"]["net_step_divisor"] = n.pat.net_step_divisor;
    j["pat"]["bandwidth_factor"] = n.pat.bw_factor;
  }
  if (n.collnet.enabled) {
    j["collnet"]["nvlink_latency_us"] = n.collnet.nvlink_latency_s / kUs;
    j["collnet"]["net_latency_us"] = n.collnet.net_latency_s / kUs;
    j["collnet"]["arity_latency_us"] = n.collnet.arity_latency_s / kUs;
    j["collnet"]["bandwidth_factor"] = n.collnet.bw_factor;
  }
  j["sources"] = SourcesJson(sources);
  return j;
}

}  // namespace railsim::spec
