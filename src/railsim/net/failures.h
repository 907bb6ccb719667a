// Failures of a built network (net/topology.h): which devices are down, what
// that does to every GPU's own path into the NIC network, and routing around
// them.
//
// Devices are named as the graph names them: "gpu17", "nic17", "hb5" (a whole
// HB domain: its server with every GPU and NIC), "switch:rail3/leaf2",
// "switch:spine0", and "link:A-B" for the link between nodes A and B (for
// example "link:rail0/leaf1-rail0/spine3" or "link:nic17-rail1/leaf0"); when
// two switches are joined by several parallel cables, "link:A-B#2" names the
// third. A device down takes its links with it.
//
// A GPU whose own NIC path (NIC, NIC-to-leaf cable, leaf switch with a live
// uplink) is broken is "disconnected"; it keeps training when another GPU of
// its HB domain with a healthy path forwards for it over NVLink, as NCCL's
// PXN does. Each disconnected GPU gets one forwarder, assigned round-robin
// over its domain's healthy GPUs, so a forwarder's NIC carries its own
// traffic and that of the GPUs assigned to it. On Rail-only the forwarded
// bytes travel on the forwarder's rail and cross NVLink again at the far end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "railsim/net/topology.h"

namespace railsim::net {

struct FailureSet {
  std::vector<std::string> devices;  ///< the names given, in order, without repeats
  std::vector<uint8_t> node_down;    ///< per node
  std::vector<uint8_t> link_down;    ///< per link: down itself or an end down
  // Per GPU, derived by Resolve():
  std::vector<uint8_t> gpu_removed;       ///< the GPU itself is down
  std::vector<uint8_t> nic_path_ok;       ///< its own NIC path works (false when removed)
  std::vector<int32_t> forwarder;         ///< GPU carrying a disconnected GPU's traffic, or -1
  std::vector<int32_t> forwarded_for;     ///< disconnected GPUs a GPU forwards for

  bool empty() const { return devices.empty(); }
  /// True when the GPU is live but lost its own NIC path.
  bool disconnected(int64_t gpu) const { return !gpu_removed[gpu] && !nic_path_ok[gpu]; }
};

/// Splits "a,b,c" into names (spaces around commas allowed). Throws
/// Error(where) on an empty list or an empty name.
std::vector<std::string> SplitFailureList(std::string_view text, const std::string& where);

/// Parses a failure spec file: a JSON array of device names. Throws
/// Error(where) naming the JSON pointer of a bad entry.
std::vector<std::string> ParseFailureFile(std::string_view json_text, const std::string& where);

/// The failures of `devices` on `topology`. Throws Error(where) for a name
/// that is not a device of this network, with the valid range or a "did you
/// mean".
FailureSet ResolveFailures(const Topology& topology, const std::vector<std::string>& devices,
                           const std::string& where);

/// HB domains (those with a live GPU) that can no longer exchange traffic
/// with every other such domain. Two domains can when some live NIC of one
/// and some live NIC of the other still sit on one connected piece of the
/// switch fabric (forwarding over NVLink at either end, as routing does);
/// 0 when the network still joins every domain.
int64_t PartitionedDomains(const Topology& topology, const FailureSet& failures);

/// The spec name of link `link` ("link:A-B", with "#i" among parallel cables).
std::string LinkName(const Topology& topology, LinkId link);

/// No failures: every GPU healthy.
FailureSet NoFailures(const Topology& topology);

/// Route(src, dst) around the failures: writes the hops to `out` (room for
/// kMaxRouteHops) and returns how many, or -1 when no live path exists.
/// Requires src and dst live (not removed).
int RouteAroundFailures(const Topology& topology, const FailureSet& failures, int64_t src, int64_t dst,
                        const RouteOptions& options, Hop* out);

}  // namespace railsim::net
