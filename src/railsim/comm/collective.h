// Analytic time of the collectives LLM training runs, on a cluster of HB
// domains (NVLink) joined by a NIC network, for any group placement.
//
// Each time is the analytic reading of the algorithm's plan (comm/plan.h,
// comm/algorithms.h) with the algorithm the performance model assumes
// (Algorithm::kAuto); the same plan lists the flows sim/ simulates.
//
// Cost model (reference section 5): per tier, latency + bytes x factor /
// (bandwidth x efficiency), with ring factors 2(n-1)/n for all-reduce and
// (n-1)/n for reduce-scatter and all-gather, and in-switch reduction where the
// HB fabric has it. Latency terms use the cheaper of a ring (n-1 steps) and a
// tree (log2 n steps), as NCCL switches algorithm with scale.
//
// A group that spans several HB domains with several members in each uses the
// hierarchical algorithm: reduce-scatter inside the domain, all-reduce across
// domains on each rail, all-gather inside the domain, phases in sequence. That
// is the only algorithm a Rail-only network offers; a rail-optimized network
// may also run a flat ring through every NIC, and gets the faster of the two.
//
// Leaves of the built NIC network with fewer up-links than down-links
// (oversubscription) slow the bytes that leave them; see ClusterFabrics.
//
// All functions are pure, allocation-free and thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "railsim/spec/nccl_constants.h"

namespace railsim::comm {

enum class NetworkKind { kRailOnly, kRailOptimized, kIdeal };
/// "rail-only", "rail-optimized", "ideal": the --network spelling.
const char* NetworkKindName(NetworkKind n);

/// One tier's achieved bandwidth and per-step latency.
struct Fabric {
  double bw_Bps = 0;      ///< per GPU per direction, line rate
  double efficiency = 1;  ///< achieved fraction
  double latency_s = 0;
  double effective_Bps() const { return bw_Bps * efficiency; }
};

struct ClusterFabrics {
  NetworkKind network = NetworkKind::kRailOptimized;
  /// Ranks per HB domain as the collectives see them: K (== N for the ideal
  /// network), or the GPUs of each domain a job uses (DomainUse::used).
  int64_t hb_domain_size = 8;
  Fabric hb;
  Fabric nic;  ///< latency includes the switch hops of the built network
  /// In-switch all-reduce busbw as a fraction of hb.bw_Bps; 0 = none.
  double hb_in_network_allreduce_efficiency = 0;
  /// The built NIC network as the analytic times see it (perf/context.h
  /// fills these from net/): GPUs under one leaf switch (0 = a single switch,
  /// nothing leaves a leaf), leaf down-links per up-link (>= 1; 1 = full
  /// bisection), and whether a leaf holds one rail's GPUs of consecutive HB
  /// domains (rail-optimized, Rail-only) or consecutive GPUs (fat tree).
  int64_t leaf_gpus = 0;
  double leaf_uplink_ratio = 1;
  bool rail_leaves = true;
  /// NCCL's cost model (comm/nccl_model.h); when enabled, the auto choice of
  /// the reductions is NCCL's least estimated time over its algorithms and
  /// protocols, and all-to-all pays NCCL's per-peer schedule.
  spec::NcclConstants nccl;
};

/// Which GPUs of the built cluster a job runs on when it uses the first
/// `used` GPUs of every HB domain of `size` (a Slurm segment per NVL72 rack,
/// --gpus-per-domain); the rest of each domain stays idle. Ranks, placements
/// and the analytic times work on the job's GPUs, numbered 0..J-1 in domains
/// of `used` consecutive GPUs (GPU i on rail i % used); the built graph
/// holds every GPU, and job GPU i is its GPU (i / used) size + i % used,
/// with that GPU's own NIC, rail and leaf. The default uses whole domains,
/// where the two numberings are the same. Copyable on purpose.
struct DomainUse {
  int64_t size = 1;  ///< K: GPUs per HB domain as built
  int64_t used = 1;  ///< in [1, size]: the job's GPUs per domain
  bool whole() const { return used == size; }
  int64_t idle() const { return size - used; }  ///< GPUs of each domain the job leaves idle
  /// The built graph's id of job GPU `job_gpu`.
  int64_t GpuId(int64_t job_gpu) const { return whole() ? job_gpu : job_gpu / used * size + job_gpu % used; }
  /// The job GPU at built GPU `gpu`, or -1 for an idle one.
  int64_t JobGpu(int64_t gpu) const { return gpu % size < used ? gpu / size * used + gpu % size : -1; }
  /// GPUs built for a job of `job_gpus` (whole domains).
  int64_t BuiltGpus(int64_t job_gpus) const { return whole() ? job_gpus : job_gpus / used * size; }
  /// The job's GPUs on a graph of `built_gpus`.
  int64_t JobGpus(int64_t built_gpus) const { return whole() ? built_gpus : built_gpus / size * used; }
};

/// Where a group's members sit: `size` ranks spaced `stride` apart.
struct GroupLayout {
  int64_t size = 1;
  int64_t stride = 1;   ///< ranks between consecutive members
  int64_t local = 1;    ///< members per HB domain
  int64_t domains = 1;  ///< HB domains spanned
  /// Members in different domains share a local rank (a rail), so the group
  /// needs no cross-rail forwarding on Rail-only.
  bool rail_aligned = true;
  bool operator==(const GroupLayout&) const = default;
};

/// Layout of the group of `size` ranks starting at rank 0 spaced `stride`
/// apart, with HB domains of `hb_domain_size` consecutive ranks.
/// Requires size, stride, hb_domain_size >= 1.
GroupLayout LayoutOf(int64_t size, int64_t stride, int64_t hb_domain_size);

/// Layout of the group whose members are the GPUs `members[0..n)` (in the
/// order the algorithm visits them). Exact when they are evenly spaced (the
/// layout of LayoutOf with that spacing); otherwise the strided layout with
/// the same number of domains, members per domain and rail alignment, which
/// is what the collectives' times depend on. Requires n >= 1, distinct GPUs.
GroupLayout LayoutOfMembers(const int64_t* members, int64_t n, int64_t hb_domain_size);

/// All-reduce of `bytes` (the full buffer on every member).
double AllReduceTime(double bytes, const GroupLayout& g, const ClusterFabrics& c);
/// Reduce-scatter of a `bytes` buffer (each member ends with bytes / size).
double ReduceScatterTime(double bytes, const GroupLayout& g, const ClusterFabrics& c);
/// All-gather into a `bytes` buffer (each member contributes bytes / size).
double AllGatherTime(double bytes, const GroupLayout& g, const ClusterFabrics& c);

/// Uniform all-to-all: every member sends `bytes` in total, bytes / size to
/// each member (itself included). On Rail-only, data for another rail in
/// another domain is forwarded over NVLink first (reference section 4):
/// sequential phases when `pipelined` is false, overlapped chunks otherwise.
double AllToAllTime(double bytes, const GroupLayout& g, const ClusterFabrics& c, bool pipelined);

/// Point-to-point transfer of `bytes` between neighbours `distance` ranks
/// apart in a chain of `members` ranks (pipeline stages), for the slowest
/// neighbour pair: NVLink when the whole chain sits in one HB domain, the NIC
/// network otherwise. Rail-only forwards a cross-rail transfer through the HB
/// domain in chunks (as NCCL's PXN), costing one more latency.
double SendRecvTime(double bytes, int64_t distance, int64_t members, const ClusterFabrics& c);
/// The same for a chain laid out as `chain` (members in stage order).
double SendRecvTime(double bytes, const GroupLayout& chain, const ClusterFabrics& c);

/// The times above for one ClusterFabrics, remembering the last few calls:
/// the search times the three recomputation modes of a strategy back to
/// back, and their data-parallel and pipeline calls repeat exactly (same
/// bytes, same groups). Each answer equals the function's. Not thread-safe:
/// one per worker thread. Holds a reference to `c`.
class CollectiveTimeMemo {
 public:
  explicit CollectiveTimeMemo(const ClusterFabrics& c) : fabrics_(c) {}
  double AllReduce(double bytes, const GroupLayout& g) { return Time(Call::kAllReduce, bytes, g); }
  double ReduceScatter(double bytes, const GroupLayout& g) { return Time(Call::kReduceScatter, bytes, g); }
  double AllGather(double bytes, const GroupLayout& g) { return Time(Call::kAllGather, bytes, g); }
  double SendRecv(double bytes, const GroupLayout& chain) { return Time(Call::kSendRecv, bytes, chain); }
  const ClusterFabrics& fabrics() const { return fabrics_; }

 private:
  enum class Call : uint8_t { kAllReduce, kReduceScatter, kAllGather, kSendRecv };
  struct Entry {
    Call call = Call::kAllReduce;
    double bytes = -1;  // no call has this size: an empty entry
    GroupLayout group;
    double time_s = 0;
  };
  double Time(Call call, double bytes, const GroupLayout& g);
  const ClusterFabrics& fabrics_;
  // A strategy makes at most seven such calls (hybrid sharding's three, the
  // expert group's two, the embedding's and the pipeline's): eight hold one
  // strategy's while the next repeats them.
  std::array<Entry, 8> entries_;
  std::size_t next_ = 0;
};

}  // namespace railsim::comm
