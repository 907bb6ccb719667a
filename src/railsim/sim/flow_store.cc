#include "railsim/sim/flow_store.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace railsim::sim {
namespace {

// Transparent huge pages are 2 MiB on x86-64 and arm64 (4 KiB base pages).
constexpr size_t kHugePage = size_t{2} << 20;
// Stores below this come from the heap: a mapping is at least a page.
constexpr size_t kSmallBytes = size_t{64} << 10;

}  // namespace

FlowStore::~FlowStore() { Free(); }

void FlowStore::Free() {
  if (mapped_bytes_ > 0) {
    munmap(data_, mapped_bytes_);
  } else {
    std::free(data_);
  }
}

void FlowStore::Reserve(size_t n) {
  if (n <= capacity_) return;
  Flow* data = nullptr;
  size_t bytes = n * sizeof(Flow), mapped = 0;
  if (bytes < kSmallBytes) {
    data = static_cast<Flow*>(std::malloc(bytes));
    if (!data) throw std::bad_alloc();
  } else {
    bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: ignored where THP is off
#endif
    data = static_cast<Flow*>(p);
    mapped = bytes;
  }
  if (data_) std::memcpy(data, data_, size_ * sizeof(Flow));
  Free();
  data_ = data;
  capacity_ = bytes / sizeof(Flow);
  mapped_bytes_ = mapped;
}

void FlowStore::Release() {
  size_ = 0;
  if (mapped_bytes_ > 0) madvise(data_, mapped_bytes_, MADV_DONTNEED);
}

}  // namespace railsim::sim
