#include "railsim/net/failures.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "railsim/core/error.h"
#include "railsim/core/spellcheck.h"
#include "railsim/spec/json_reader.h"

namespace railsim::net {
namespace {

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A decimal index with digits only (no sign, no spaces), or -1.
int64_t ParseIndex(std::string_view digits) {
  if (digits.empty() || digits.size() > 12) return -1;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return -1;
  return value;
}

const char kNameForms[] = "gpu<i>, nic<i>, hb<i>, switch:<name> or link:<node>-<node>";

// Looks device names up on one topology; switch names are indexed on first use.
class DeviceNames {
 public:
  DeviceNames(const Topology& t, const std::string& where) : t_(t), where_(where) {}

  // The GPU, NIC or HB domain named `name` ("gpu3", "nic3", "hb0"), or
  // nullopt when the name is not of that form (a switch may be named like
  // one). Throws when the index is out of range.
  std::optional<NodeId> Endpoint(std::string_view name, std::string_view device) {
    for (auto [prefix, count, base] : {std::tuple{"gpu", t_.gpus(), int64_t{0}},
                                       std::tuple{"nic", t_.nics(), t_.gpus()},
                                       std::tuple{"hb", t_.hb_domains(), int64_t{t_.hb_node(0)}}}) {
      std::string_view p(prefix);
      if (name.substr(0, p.size()) != p) continue;
      int64_t index = ParseIndex(name.substr(p.size()));
      if (index < 0) return std::nullopt;
      if (index >= count) {
        throw Error(where_, fmt::format("\"{}\": no such device; this network has {}0 to {}{}", device, prefix,
                                        prefix, count - 1));
      }
      return static_cast<NodeId>(base + index);
    }
    return std::nullopt;
  }

  // The node named `name`: an endpoint, or a switch ("rail1/leaf0", "spine2").
  // A "did you mean" writes the switch it suggests as `prefix` + its name,
  // as the user wrote it ("switch:rail1/leaf0" for a switch device, the bare
  // name inside a link's).
  NodeId Node(std::string_view name, std::string_view device, std::string_view prefix = "") {
    if (std::optional<NodeId> id = Endpoint(name, device)) return *id;
    IndexSwitches();
    auto it = switches_.find(std::string(name));
    if (it != switches_.end()) return it->second;
    std::string hint = DidYouMean(name, switch_names_);
    if (!hint.empty()) hint = fmt::format(" (did you mean '{}{}'?)", prefix, ClosestMatch(name, switch_names_));
    throw Error(where_, fmt::format("\"{}\": no such device in the {} network{}", device,
                                    DesignName(t_.params().design), hint));
  }

  NodeId Switch(std::string_view name, std::string_view device) {
    NodeId id = Node(name, device, "switch:");
    if (t_.nodes()[id].kind != NodeKind::kSwitch) {
      throw Error(where_, fmt::format("\"{}\": {} is not a switch; name it without \"switch:\"", device, name));
    }
    return id;
  }

 private:
  void IndexSwitches() {
    if (!switch_names_.empty()) return;
    for (NodeId id = t_.first_switch_node();
         id < static_cast<NodeId>(t_.nodes().size()); ++id) {
      std::string name = t_.NodeName(id);
      switches_.emplace(name, id);
      switch_names_.push_back(std::move(name));
    }
  }

  const Topology& t_;
  const std::string& where_;
  std::unordered_map<std::string, NodeId> switches_;
  std::vector<std::string> switch_names_;
};

// The link "A-B" or "A-B#i" (the i-th of parallel cables, by id).
LinkId FindLink(const Topology& t, DeviceNames& names, std::string_view spec, std::string_view device,
                const std::string& where) {
  int64_t which = 0;
  if (size_t hash = spec.find('#'); hash != std::string_view::npos) {
    which = ParseIndex(spec.substr(hash + 1));
    if (which < 0) {
      throw Error(where, fmt::format("\"{}\": expected a cable number after '#'", device));
    }
    spec = spec.substr(0, hash);
  }
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos || spec.find('-', dash + 1) != std::string_view::npos) {
    throw Error(where, fmt::format("\"{}\": a link is named by its two ends, link:<node>-<node>", device));
  }
  NodeId a = names.Node(spec.substr(0, dash), device);
  NodeId b = names.Node(spec.substr(dash + 1), device);
  int64_t found = 0;
  for (LinkId l = 0; l < static_cast<LinkId>(t.links().size()); ++l) {
    const Link& link = t.links()[l];
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) {
      if (found++ == which) return l;
    }
  }
  if (found == 0) {
    throw Error(where, fmt::format("\"{}\": {} and {} are not linked", device, t.NodeName(a), t.NodeName(b)));
  }
  throw Error(where, fmt::format("\"{}\": {} and {} have {} cable{} (#0 to #{})", device, t.NodeName(a),
                                 t.NodeName(b), found, found == 1 ? "" : "s", found - 1));
}

// Marks the device `name` down in `f`.
void MarkDown(const Topology& t, DeviceNames& names, const std::string& name, const std::string& where,
              FailureSet* f) {
  std::string_view n(name);
  if (n.substr(0, 7) == "switch:") {
    f->node_down[names.Switch(n.substr(7), name)] = 1;
    return;
  }
  if (n.substr(0, 5) == "link:") {
    f->link_down[FindLink(t, names, n.substr(5), name, where)] = 1;
    return;
  }
  if (std::optional<NodeId> id = names.Endpoint(n, name)) {
    f->node_down[*id] = 1;
    if (t.nodes()[*id].kind == NodeKind::kHbDomain) {
      // The whole server: its GPUs and their NICs.
      const int64_t k = t.params().hb_domain_size;
      const int64_t domain = t.nodes()[*id].index;
      for (int64_t g = domain * k; g < (domain + 1) * k; ++g) {
        f->node_down[t.gpu_node(g)] = 1;
        f->node_down[t.nic_node(g)] = 1;
      }
    }
    return;
  }
  throw Error(where, fmt::format("\"{}\": not a device name; expected {}{}", name, kNameForms,
                                 DidYouMean(n.substr(0, n.find(':') + 1), {"switch:", "link:"})));
}

// Per GPU: removed, own NIC path, forwarders (see the header).
void DeriveGpuState(const Topology& t, FailureSet* f) {
  const int64_t n = t.gpus();
  const int64_t k = t.params().hb_domain_size;
  for (LinkId l = 0; l < static_cast<LinkId>(t.links().size()); ++l) {
    const Link& link = t.links()[l];
    if (f->node_down[link.a] || f->node_down[link.b]) f->link_down[l] = 1;
  }
  f->gpu_removed.assign(static_cast<size_t>(n), 0);
  f->nic_path_ok.assign(static_cast<size_t>(n), 0);
  f->forwarder.assign(static_cast<size_t>(n), -1);
  f->forwarded_for.assign(static_cast<size_t>(n), 0);
  for (int64_t g = 0; g < n; ++g) {
    // A GPU cut off from its HB domain cannot run its tensor-parallel group.
    f->gpu_removed[g] = f->node_down[t.gpu_node(g)] || f->link_down[t.hb_link(g)];
    if (f->gpu_removed[g]) continue;
    bool ok = !f->link_down[t.pcie_link(g)] && !f->link_down[t.nic_leaf_link(g)];
    const ClosFabric& fabric = t.fabrics()[t.fabric_of(g)];
    if (ok && fabric.tiers > 1) {
      const UplinkBundle& up = fabric.leaf_up[t.leaf_of(g)];
      bool any_up = false;
      for (int32_t i = 0; i < up.count && !any_up; ++i) any_up = !f->link_down[up.first_link + i];
      ok = any_up;
    }
    f->nic_path_ok[g] = ok;
  }
  std::vector<int64_t> healthy, cut;
  for (int64_t d = 0; d < n / k; ++d) {
    healthy.clear();
    cut.clear();
    for (int64_t g = d * k; g < (d + 1) * k; ++g) {
      if (f->gpu_removed[g]) continue;
      (f->nic_path_ok[g] ? healthy : cut).push_back(g);
    }
    if (healthy.empty()) continue;
    // One forwarder per NIC before a second on any: GPUs that share a NIC
    // come after the first GPU of every other NIC.
    const int64_t per_nic = t.params().gpus_per_nic;
    std::stable_sort(healthy.begin(), healthy.end(),
                     [per_nic](int64_t a, int64_t b) { return a % per_nic < b % per_nic; });
    for (size_t i = 0; i < cut.size(); ++i) {
      int64_t via = healthy[i % healthy.size()];
      f->forwarder[cut[i]] = static_cast<int32_t>(via);
      ++f->forwarded_for[via];
    }
  }
}

bool PathLive(const FailureSet& f, const Hop* hops, int count) {
  for (int i = 0; i < count; ++i) {
    if (f.link_down[hops[i].link]) return false;
  }
  return true;
}

// The NIC-network path from e's NIC to i's, re-hashed over the surviving
// equal-cost paths when the usual one is broken (as ECMP or a subnet
// manager's re-route would); -1 when none of the tries is live.
int LiveFabricPath(const Topology& t, const FailureSet& f, int64_t e, int64_t i, const RouteOptions& options,
                   Hop* out) {
  constexpr int kTries = 256;
  RouteOptions o = options;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    int count = t.FabricRouteInto(e, i, o, out);
    if (PathLive(f, out, count)) return count;
    o.routing = Routing::kEcmp;
    o.seed = options.seed + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(attempt + 1);
  }
  return -1;
}

bool Usable(const FailureSet& f, int64_t g) { return !f.gpu_removed[g] && f.nic_path_ok[g]; }

}  // namespace

std::vector<std::string> SplitFailureList(std::string_view text, const std::string& where) {
  std::vector<std::string> out;
  if (TrimSpaces(text).empty()) throw Error(where, "expected one or more device names, got an empty list");
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    std::string_view item = TrimSpaces(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (item.empty()) throw Error(where, "empty device name in the list (two commas, or one at an end)");
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> ParseFailureFile(std::string_view json_text, const std::string& where) {
  nlohmann::json doc;
  try {
    doc = spec::ParseJsonText(json_text);
  } catch (const Error& e) {
    throw Error(where, e.message());
  }
  if (!doc.is_array()) {
    throw Error(where, fmt::format("expected a JSON array of device names, got {}", spec::Describe(doc)));
  }
  if (doc.empty()) throw Error(where, "expected one or more device names, got an empty array");
  std::vector<std::string> out;
  for (size_t i = 0; i < doc.size(); ++i) {
    if (!doc[i].is_string() || doc[i].get<std::string>().empty()) {
      throw Error(where, fmt::format("/{}: expected a device name such as \"gpu17\", got {}", i,
                                     spec::Describe(doc[i])));
    }
    out.push_back(doc[i].get<std::string>());
  }
  return out;
}

std::string LinkName(const Topology& t, LinkId link) {
  const Link& l = t.links()[link];
  int64_t index = 0, parallel = 0;
  for (LinkId other = 0; other < static_cast<LinkId>(t.links().size()); ++other) {
    const Link& o = t.links()[other];
    if (o.a != l.a || o.b != l.b) continue;
    if (other < link) ++index;
    ++parallel;
  }
  std::string name = "link:" + t.NodeName(l.a) + "-" + t.NodeName(l.b);
  return parallel > 1 ? fmt::format("{}#{}", name, index) : name;
}

FailureSet NoFailures(const Topology& t) {
  FailureSet f;
  f.node_down.assign(t.nodes().size(), 0);
  f.link_down.assign(t.links().size(), 0);
  DeriveGpuState(t, &f);
  return f;
}

FailureSet ResolveFailures(const Topology& t, const std::vector<std::string>& devices, const std::string& where) {
  FailureSet f;
  f.node_down.assign(t.nodes().size(), 0);
  f.link_down.assign(t.links().size(), 0);
  DeviceNames names(t, where);
  for (const std::string& d : devices) {
    bool repeated = false;
    for (const std::string& seen : f.devices) repeated = repeated || seen == d;
    if (repeated) continue;
    MarkDown(t, names, d, where, &f);
    f.devices.push_back(d);
  }
  DeriveGpuState(t, &f);
  return f;
}

int RouteAroundFailures(const Topology& t, const FailureSet& f, int64_t src, int64_t dst,
                        const RouteOptions& options, Hop* out) {
  if (f.empty()) return t.RouteInto(src, dst, options, out);
  if (src == dst) return 0;
  const int64_t k = t.params().hb_domain_size;
  const int64_t ds = t.domain_of(src), dd = t.domain_of(dst);
  if (ds == dd) {
    out[0] = {t.hb_link(src), true};
    out[1] = {t.hb_link(dst), false};
    return 2;
  }
  int64_t egress = -1, ingress = -1;
  if (t.params().design == Design::kRailOnly) {
    // Both ends must use one rail: the destination's (the usual forwarding),
    // the source's, a forwarder's, or else the first rail live at both ends.
    const int64_t candidates[] = {t.rail_of(dst), t.rail_of(src),
                                  f.forwarder[src] >= 0 ? t.rail_of(f.forwarder[src]) : -1,
                                  f.forwarder[dst] >= 0 ? t.rail_of(f.forwarder[dst]) : -1};
    // A usable GPU of domain d on rail r: `self` when it is one, else the
    // first of the rail's GPUs there (gpus_per_nic of them share its NIC).
    const int64_t per_nic = t.params().gpus_per_nic;
    auto on_rail = [&](int64_t self, int64_t d, int64_t r) -> int64_t {
      if (t.rail_of(self) == r && Usable(f, self)) return self;
      for (int64_t g = d * k + r * per_nic; g < d * k + (r + 1) * per_nic; ++g) {
        if (Usable(f, g)) return g;
      }
      return -1;
    };
    auto try_rail = [&](int64_t r) {
      if (r < 0) return false;
      const int64_t e = on_rail(src, ds, r), i = on_rail(dst, dd, r);
      if (e < 0 || i < 0) return false;
      egress = e;
      ingress = i;
      return true;
    };
    bool found = false;
    for (int64_t r : candidates) found = found || try_rail(r);
    for (int64_t r = 0; r < t.rails() && !found; ++r) found = try_rail(r);
    if (!found) return -1;
  } else {
    egress = Usable(f, src) ? src : f.forwarder[src];
    ingress = Usable(f, dst) ? dst : f.forwarder[dst];
    if (egress < 0 || ingress < 0) return -1;
  }
  int n = 0;
  if (egress != src) {
    out[n++] = {t.hb_link(src), true};
    out[n++] = {t.hb_link(egress), false};
  }
  int fabric = LiveFabricPath(t, f, egress, ingress, options, out + n);
  if (fabric < 0) return -1;
  n += fabric;
  if (ingress != dst) {
    out[n++] = {t.hb_link(ingress), true};
    out[n++] = {t.hb_link(dst), false};
  }
  return n;
}

namespace {

// Union-find over node ids, with path halving.
int32_t Find(std::vector<int32_t>& parent, int32_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

int64_t PartitionedDomains(const Topology& t, const FailureSet& f) {
  const int32_t nodes = static_cast<int32_t>(t.nodes().size());
  std::vector<int32_t> parent(static_cast<size_t>(nodes));
  for (int32_t i = 0; i < nodes; ++i) parent[i] = i;
  for (LinkId l = 0; l < static_cast<LinkId>(t.links().size()); ++l) {
    const Link& link = t.links()[l];
    if (link.kind != LinkKind::kLeafToSpine && link.kind != LinkKind::kSpineToCore) continue;
    if (f.link_down[l] || f.node_down[link.a] || f.node_down[link.b]) continue;
    parent[Find(parent, link.a)] = Find(parent, link.b);
  }
  // Per domain, the fabric pieces its live NICs sit on (sorted, unique).
  std::vector<std::vector<int32_t>> reach(static_cast<size_t>(t.hb_domains()));
  for (int64_t g = 0; g < t.gpus(); ++g) {
    if (!f.nic_path_ok[g]) continue;
    const LinkId up = t.nic_leaf_link(g);
    if (up < 0) continue;
    reach[size_t(t.domain_of(g))].push_back(Find(parent, t.links()[up].b));
  }
  std::map<std::vector<int32_t>, int64_t> kinds;  // distinct reach sets and their domain counts
  for (int64_t d = 0; d < t.hb_domains(); ++d) {
    std::vector<int32_t>& r = reach[size_t(d)];
    bool live = false;
    for (int64_t g = d * t.params().hb_domain_size; g < (d + 1) * t.params().hb_domain_size; ++g) {
      live = live || !f.gpu_removed[g];
    }
    if (!live) continue;
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    ++kinds[r];
  }
  auto meet = [](const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
      if (a[i] == b[j]) return true;
      a[i] < b[j] ? ++i : ++j;
    }
    return false;
  };
  int64_t domains = 0;
  for (const auto& [unused, count] : kinds) domains += count;
  if (domains <= 1) return 0;  // one HB domain needs no network
  int64_t cut = 0;
  for (const auto& [a, count] : kinds) {
    bool joined = !a.empty() && (count == 1 || meet(a, a));
    for (const auto& [b, unused] : kinds) {
      if (&a != &b && !meet(a, b)) joined = false;
    }
    if (!joined) cut += count;
  }
  return cut;
}

}  // namespace railsim::net
