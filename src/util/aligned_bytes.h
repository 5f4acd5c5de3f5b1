#pragma once
// An owned, zero-initialised byte buffer aligned to a cache line (64 bytes),
// for SIMD loads that require alignment.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace parley {

class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(uint64_t n) : size_(n) {
    void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, n);
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
