// ForEachFlow(): the flows of one plan phase (see comm/plan.h). Inline
// because the simulator calls it for millions of flows.
#pragma once

#include <cassert>
#include <cstdint>

namespace railsim::comm {

namespace plan_internal {

/// Member `j` of a double binary tree over `n` members: its parent in tree
/// `t` (0: heap order, parent (j - 1) / 2; 1: the mirror image, so that the
/// leaves of one tree are the inner nodes of the other), or -1 for the root.
inline int64_t TreeParent(int64_t j, int64_t n, int t) {
  if (t == 0) return j == 0 ? -1 : (j - 1) / 2;
  int64_t p = n - 1 - j;
  return p == 0 ? -1 : n - 1 - (p - 1) / 2;
}

/// NCCL's binary tree over ranks 0 .. n - 1 (ncclGetBtree, src/graph/trees.cc):
/// the parent of `rank`, or -1 for the root 0, which has one child.
inline int64_t NcclBtreeParent(int64_t rank, int64_t n) {
  if (rank == 0) return -1;
  int64_t bit = 1;
  while (bit < n && (bit & rank) == 0) bit <<= 1;
  const int64_t up = (rank ^ bit) | (bit << 1);
  return up >= n ? rank ^ bit : up;
}

/// NCCL's double binary tree (ncclGetDtree): tree 0 the binary tree, tree 1
/// its mirror (n even) or the tree shifted by one rank (n odd), so that most
/// ranks are inner in one tree and a leaf in the other.
inline int64_t NcclTreeParent(int64_t j, int64_t n, int t) {
  if (t == 0) return NcclBtreeParent(j, n);
  if (n % 2 == 1) {
    const int64_t u = NcclBtreeParent((j - 1 + n) % n, n);
    return u < 0 ? -1 : (u + 1) % n;
  }
  const int64_t u = NcclBtreeParent(n - 1 - j, n);
  return u < 0 ? -1 : n - 1 - u;
}

}  // namespace plan_internal

template <typename Fn>
void ForEachFlow(const Phase& phase, int64_t gpus, int64_t hb_domain_size, Fn&& fn) {
  const GroupFamily& f = phase.family;
  const int64_t n = f.size;
  const double b = phase.bytes_per_flow / phase.chunks;
  if (n <= 1 && phase.pattern != Pattern::kViaSwitch) return;
  const int64_t groups = f.Groups(gpus);
  for (int64_t g = 0; g < groups; ++g) {
    switch (phase.pattern) {
      case Pattern::kRing: {
        const int64_t rings = phase.channels;
        if (rings <= 1 && phase.block <= 0) {
          for (int64_t j = 0; j < n; ++j) fn(f.Member(g, j), f.Member(g, (j + 1) % n), b);
          break;
        }
        // Channel c enters each block of l members (one HB domain) at local
        // c, runs through the block, hands back to local c, which sends to
        // local c of the next block: see Phase::channels.
        const int64_t l = phase.block > 0 ? phase.block : rings;
        assert(n % l == 0 && rings <= l);
        (void)hb_domain_size;
        const int64_t blocks = n / l;
        for (int64_t c = 0; c < rings; ++c) {
          for (int64_t d = 0; d < blocks; ++d) {
            for (int64_t i = 0; i + 1 < l; ++i) {
              fn(f.Member(g, d * l + (c + i) % l), f.Member(g, d * l + (c + i + 1) % l), b);
            }
            fn(f.Member(g, d * l + (c + l - 1) % l), f.Member(g, d * l + c), b);
            if (blocks > 1) fn(f.Member(g, d * l + c), f.Member(g, ((d + 1) % blocks) * l + c), b);
          }
        }
        break;
      }
      case Pattern::kChain:
        for (int64_t j = 0; j + 1 < n; ++j) fn(f.Member(g, j), f.Member(g, j + 1), b);
        break;
      case Pattern::kAllPairs:
        for (int64_t i = 0; i < n; ++i) {
          const int64_t src = f.Member(g, i);
          for (int64_t j = 0; j < n; ++j) {
            if (j != i) fn(src, f.Member(g, j), b);
          }
        }
        break;
      case Pattern::kTree:
        for (int t = 0; t < 2; ++t) {
          for (int64_t j = 0; j < n; ++j) {
            int64_t parent = plan_internal::TreeParent(j, n, t);
            if (parent < 0) continue;
            if (phase.downward) {
              fn(f.Member(g, parent), f.Member(g, j), b);
            } else {
              fn(f.Member(g, j), f.Member(g, parent), b);
            }
          }
        }
        break;
      case Pattern::kNodeTree: {
        // Both directions at once: b per tree edge and direction, 2b per
        // chain link (both trees' data).
        const int64_t heads = phase.channels > 1 ? phase.channels : 1;
        const int64_t l = phase.block > 0 ? phase.block : heads;
        assert(n % l == 0 && heads <= l);
        const int64_t blocks = n / l;
        for (int64_t c = 0; c < heads; ++c) {
          for (int64_t d = 0; d < blocks && phase.chains; ++d) {
            for (int64_t i = 1; i < l; ++i) {
              const int64_t lower = f.Member(g, d * l + (c + i) % l), upper = f.Member(g, d * l + (c + i - 1) % l);
              fn(lower, upper, 2 * b);
              fn(upper, lower, 2 * b);
            }
          }
          for (int t = 0; t < 2; ++t) {
            for (int64_t d = 0; d < blocks; ++d) {
              const int64_t parent = plan_internal::NcclTreeParent(d, blocks, t);
              if (parent < 0) continue;
              fn(f.Member(g, d * l + c), f.Member(g, parent * l + c), b);
              fn(f.Member(g, parent * l + c), f.Member(g, d * l + c), b);
            }
          }
        }
        break;
      }
      case Pattern::kViaSwitch:
        for (int64_t j = 0; j < n; ++j) fn(f.Member(g, j), f.Member(g, j), b);
        break;
    }
  }
}

template <typename Fn>
void ForEachGraphFlow(const Phase& phase, int64_t graph_gpus, int64_t hb_domain_size, const DomainUse& use,
                      Fn&& fn) {
  // A family that does not tile the job's GPUs would name GPUs past the
  // graph (GroupFamily::Tiles); callers that run one over a cluster check.
  assert(phase.family.Tiles(use.JobGpus(graph_gpus)) && "the phase's groups tile the job's GPUs");
  if (use.whole()) {
    ForEachFlow(phase, graph_gpus, hb_domain_size, fn);
    return;
  }
  ForEachFlow(phase, use.JobGpus(graph_gpus), use.used,
              [&](int64_t src, int64_t dst, double bytes) { fn(use.GpuId(src), use.GpuId(dst), bytes); });
}

}  // namespace railsim::comm
