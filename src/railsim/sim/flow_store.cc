#include "railsim/sim/flow_store.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace railsim::sim {
namespace {

// Transparent huge pages are 2 MiB on x86-64 and arm64 (4 KiB base pages).
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPage = size_t{4} << 10;

}  // namespace

FlowStore::~FlowStore() {
  if (data_) munmap(data_, mapped_bytes_);
}

void FlowStore::Reserve(size_t n) {
  if (n <= capacity_) return;
  // Small stores (a simulation may hold thousands, one per island) take base
  // pages: a huge page each would be 2 MiB of memory for a few flows.
  const bool huge = n * sizeof(Flow) >= kHugePage;
  const size_t page = huge ? kHugePage : kPage;
  const size_t bytes = (n * sizeof(Flow) + page - 1) / page * page;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: ignored where THP is off
#endif
  Flow* data = static_cast<Flow*>(p);
  if (data_) {
    std::memcpy(data, data_, size_ * sizeof(Flow));
    munmap(data_, mapped_bytes_);
  }
  data_ = data;
  capacity_ = bytes / sizeof(Flow);
  mapped_bytes_ = bytes;
}

}  // namespace railsim::sim
