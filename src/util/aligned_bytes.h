#pragma once
// An owned byte buffer aligned to a cache line (64 bytes), for SIMD loads
// that require alignment; buffers of 2 MiB and more are aligned to 2 MiB.
// Zero-initialised ones are also asked to be backed by huge pages: a kernel streaming
// hundreds of MB then takes one TLB miss per 2 MiB instead of per 4 KiB.
// A lazy buffer (a KV pool sized for the worst case) is left uninitialised,
// its pages committed only as they are first written, and not advised: a
// huge-page fault in the middle of serving zeroes 2 MiB and may compact
// memory first, a latency spike the TLB savings do not repay.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace parley {

class AlignedBytes {
 public:
  AlignedBytes() = default;
  enum class Init { Zero, Lazy };
  explicit AlignedBytes(uint64_t n, Init init = Init::Zero) : size_(n) {
    constexpr uint64_t kHuge = uint64_t(2) << 20;
    const uint64_t align = n >= kHuge ? kHuge : 64;
    const uint64_t bytes = (n + align - 1) / align * align;
    void* p = std::aligned_alloc(align, bytes);
    if (!p) throw std::bad_alloc();
    if (init == Init::Zero) {
      if (align == kHuge) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: fine if refused
      std::memset(p, 0, n);
    }
    data_.reset(static_cast<uint8_t*>(p));
  }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  uint64_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t, Free> data_;
  uint64_t size_ = 0;
};

}  // namespace parley
