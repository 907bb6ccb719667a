#include "railsim/comm/moe.h"

#include <algorithm>
#include <cmath>

#include "railsim/comm/algorithms.h"
#include "railsim/comm/collective.h"

namespace railsim::comm {
namespace {

// C(a - s, k) / C(a, k) for real a, s: the chance that k draws without
// replacement from a items all miss a subset of s of them.
double AllMiss(double a, double s, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) {
    if (a - s - i <= 0) return 0;
    p *= (a - s - i) / (a - i);
  }
  return p;
}

}  // namespace

double DispatchBytesPerToken(int64_t hidden, spec::MoeDispatchPrecision p) {
  const double h = double(hidden);
  if (p == spec::MoeDispatchPrecision::kFp8) return h + 4 * std::ceil(h / 128);
  return 2 * h;
}

double DomainReachProbability(const MoeDispatch& d, int64_t domains) {
  if (domains <= 1) return 1;
  const double per_domain = double(d.experts) / double(domains);
  const int64_t m = d.max_domains > 0 ? std::min<int64_t>(d.max_domains, domains) : domains;
  const double pool = per_domain * double(m);  // experts of the domains a token may use
  const int k = std::min(d.topk, int(pool));
  return double(m) / double(domains) * (1 - AllMiss(pool, per_domain, k));
}

MoeAllToAll ResolveMoeAllToAll(MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c) {
  const bool can_forward = g.domains > 1 && g.size % g.local == 0 && g.rail_aligned;
  if (a == MoeAllToAll::kAuto) {
    return c.network == NetworkKind::kRailOnly && can_forward ? MoeAllToAll::kForwarded : MoeAllToAll::kDirect;
  }
  if (a == MoeAllToAll::kForwarded && !can_forward) return MoeAllToAll::kDirect;
  return a;
}

Plan MoeDispatchPlan(const MoeDispatch& d, MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c,
                     double* analytic_s) {
  Plan plan;
  const MoeAllToAll algorithm = ResolveMoeAllToAll(a, g, c);
  plan.algorithm = MoeAllToAllName(algorithm);
  if (analytic_s) *analytic_s = 0;
  if (g.size <= 1 || d.tokens <= 0 || d.topk <= 0) return plan;
  const double scale = d.tokens * d.bytes_per_token * std::max(1.0, d.imbalance);
  if (algorithm == MoeAllToAll::kDirect) {
    Phase& p = plan.Add();
    p.name = "dispatch, direct";
    p.pattern = Pattern::kAllPairs;
    p.family = {g.size, g.stride};
    p.bytes_per_flow = scale * d.topk / double(g.size);
    p.latency_s = (g.domains > 1 ? c.nic.latency_s : 0) + c.hb.latency_s;
  } else {
    // Once per reached domain along the rail, then to the experts' GPUs in
    // it: member j of a domain ends up with topk / local of every token row
    // its domain holds, which is tokens x topk / local from each local peer.
    Phase& rail = plan.Add();
    rail.name = "to each domain reached, along the rail";
    rail.pattern = Pattern::kAllPairs;
    rail.family = {g.domains, g.stride * g.local};
    rail.bytes_per_flow = scale * DomainReachProbability(d, g.domains);
    rail.latency_s = c.nic.latency_s;
    if (g.local > 1) {
      Phase& hb = plan.Add();
      hb.name = "to the experts in the HB domain";
      hb.pattern = Pattern::kAllPairs;
      hb.family = {g.local, g.stride};
      hb.bytes_per_flow = scale * d.topk / double(g.local);
      hb.latency_s = c.hb.latency_s;
      // DeepEP's forwarder passes each chunk on as it arrives (plan.h).
      hb.chunks = d.chunks > 1 ? std::min(d.chunks, kMaxForwardChunks) : 1;
    }
  }
  if (analytic_s) *analytic_s = PlanTime(plan, c);
  return plan;
}

double MoeDispatchTime(const MoeDispatch& d, MoeAllToAll a, const GroupLayout& g, const ClusterFabrics& c) {
  double t = 0;
  MoeDispatchPlan(d, a, g, c, &t);
  return t;
}

}  // namespace railsim::comm
