// FlowStore: the simulator's live flows of one island, 16 bytes each. It is
// reserved from the island's known peak (it doubles if a rank's share of a
// step goes over it). Large stores are one anonymous mapping that asks the
// kernel for transparent huge pages from 2 MiB up: a billion flows are
// 16 GiB, and with 4 KiB pages the first touch alone costs millions of page
// faults, and the TLB misses every pass over them. Small ones (thousands of
// HB domains' islands) come from the heap, with no page each.
//
// A flow is stored as what cannot be recomputed: its source, destination
// and task packed in one word, and the bytes it has left. Its path is a pure
// function of (source, destination, routing) and is recomputed when needed;
// its rate and the time it was last updated belong to its group
// (sim/islands.h).
//
// Not thread-safe to resize; threads may read and write disjoint records.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>

namespace railsim::sim {

struct Flow {
  /// GPU ids below 2^24 (spec::kMaxModelGpus), tasks below 2^16.
  static constexpr int kIdBits = 24;
  static constexpr uint64_t kIdMask = (uint64_t{1} << kIdBits) - 1;
  static constexpr int64_t kMaxTasks = int64_t{1} << 16;

  uint64_t key = 0;
  double remaining_bytes = 0;

  static uint64_t Key(int64_t src, int64_t dst, int32_t task) {
    assert(src >= 0 && uint64_t(src) <= kIdMask && dst >= 0 && uint64_t(dst) <= kIdMask && task >= 0 &&
           task < kMaxTasks);
    return uint64_t(src) | uint64_t(dst) << kIdBits | uint64_t(task) << (2 * kIdBits);
  }
  int64_t src() const { return int64_t(key & kIdMask); }
  int64_t dst() const { return int64_t((key >> kIdBits) & kIdMask); }
  int32_t task() const { return int32_t(key >> (2 * kIdBits)); }
};
static_assert(sizeof(Flow) == 16, "the memory estimate counts 16 bytes per flow");

class FlowStore {
 public:
  FlowStore() = default;
  ~FlowStore();
  FlowStore(const FlowStore&) = delete;
  FlowStore& operator=(const FlowStore&) = delete;

  /// Makes room for `n` flows (new memory, the old records copied); throws
  /// std::bad_alloc when the kernel refuses the memory.
  void Reserve(size_t n);

  /// Drops every flow and gives a mapping's pages back to the kernel (they
  /// are zero pages again on the next touch); the capacity stays.
  void Release();

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  Flow* data() { return data_; }
  const Flow* data() const { return data_; }
  Flow& operator[](size_t i) { return data_[i]; }
  const Flow& operator[](size_t i) const { return data_[i]; }

  /// Requires size() < capacity().
  void push_back(const Flow& f) {
    assert(size_ < capacity_ && "Reserve() first");
    data_[size_++] = f;
  }
  /// Requires n <= size().
  void shrink(size_t n) {
    assert(n <= size_);
    size_ = n;
  }

 private:
  void Free();  // data_'s memory, whichever kind

  Flow* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
  size_t mapped_bytes_ = 0;  // 0: data_ is from the heap (or null)
};

}  // namespace railsim::sim
