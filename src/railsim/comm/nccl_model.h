// NCCL's cost model (NCCL 2.30, src/graph/tuning.cc; docs/MODEL.md "The NCCL
// model"): the latency it charges per algorithm and protocol, the protocol's
// share of the bandwidth and its caps, and the channels its topology search
// finds. comm/algorithms.cc builds NCCL's algorithms as plans (comm/plan.h)
// with these numbers and picks the least estimated time, as NCCL does.
//
// Every constant comes from the system's preset (spec::NcclConstants); the
// functions only assemble them. Pure, allocation-free and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/comm/collective.h"

namespace railsim::comm {

/// NCCL's protocols (NCCL_PROTO), and auto = the least estimated time.
enum class Protocol : uint8_t { kAuto, kLL, kLL128, kSimple };

const char* ProtocolName(Protocol p);
std::optional<Protocol> ParseProtocol(std::string_view name);
std::vector<std::string> ProtocolNames();
/// NCCL's protocol index (LL 0, LL128 1, Simple 2). Requires p != kAuto.
inline int ProtocolIndex(Protocol p) { return int(p) - 1; }

/// What NCCL's topology search finds for a group: search channels and the
/// per-channel speed (bytes/s). Across HB domains each GPU's NIC carries
/// floor(NIC / speed) channels and every channel passes through each GPU's
/// NVLink (the budget NCCL's topology sees, NcclConstants::search_nvlink_Bps),
/// at the inter-node speed, from the first that fits the NIC down to 0.49 of
/// it, giving the most channels x speed. The channels do not grow with the
/// domain: a domain's traffic across domains leaves on `channels` NICs
/// (16 of an NVL72 rack's 72; all 8 of a DGX H100's). Inside one domain the
/// first intra-node speed that fits NVLink, as many as fit. At most
/// NcclConstants::max_search_channels either way.
struct NcclChannels {
  int64_t channels = 1;
  double channel_Bps = 0;
};
NcclChannels SearchChannels(const GroupLayout& g, const ClusterFabrics& c);

/// NCCL's latency of one call (ncclTopoTuneModel): `passes` is 2 for
/// all-reduce, 1 for all-gather and reduce-scatter; `bytes` the buffer (for
/// the ring plateau). Requires c.nccl.enabled, g.size >= 2.
double NcclLatency(spec::NcclAlgo algo, Protocol p, int passes, double bytes, const GroupLayout& g,
                   const ClusterFabrics& c, const NcclChannels& ch);

/// A protocol's share of the fabrics' achieved bandwidth (`factor`) and its
/// cap on a GPU's bytes per second (0 = none), as NCCL's busBw refinements
/// give them; the tree's include its correction for `bytes`.
struct ProtocolRate {
  double factor = 1;
  double cap_Bps = 0;
};
ProtocolRate NcclRate(spec::NcclAlgo algo, Protocol p, double bytes, const GroupLayout& g, const ClusterFabrics& c,
                      const NcclChannels& ch);

}  // namespace railsim::comm
