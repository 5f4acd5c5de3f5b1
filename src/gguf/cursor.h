#pragma once
// Bounds-checked little-endian reading of a mapped GGUF file, with error
// messages that name the file, the field being read and its position.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/mapped_file.h"

namespace parley::gguf {

static_assert(std::endian::native == std::endian::little, "GGUF reading assumes a little-endian host");

// Where a field lives, as a chain of frames built on the stack: its text is
// only assembled when an error is raised, so per-element frames cost nothing.
struct Where {
  const Where* parent = nullptr;
  std::string_view label;  // appended as is when not empty
  uint64_t index = 0;      // appended as "[index]" when label is empty
  std::string str() const;
};

class Cursor {
 public:
  explicit Cursor(const MappedFile& file) : base_(file.data()), size_(file.size()), path_(file.path()) {}

  uint64_t pos() const { return pos_; }
  uint64_t size() const { return size_; }
  uint64_t remaining() const { return size_ - pos_; }
  const uint8_t* base() const { return base_; }

  [[noreturn]] void fail(const Where& where, const std::string& what) const;

  // Fails unless n bytes are left; `field` names what needs them.
  void need(uint64_t n, const Where& where, std::string_view field) const {
    if (n > remaining()) truncated(n, where, field);
  }
  // Fails unless `count` items of at least `min_bytes` each could still fit:
  // an absurd count is rejected before anything is allocated for it.
  void check_count(uint64_t count, uint64_t min_bytes, const Where& where, std::string_view field) const;

  template <class T>
  T read(const Where& where, std::string_view field) {
    need(sizeof(T), where, field);
    T x;
    std::memcpy(&x, base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return x;
  }
  std::string read_string(const Where& where, std::string_view field);

 private:
  [[noreturn]] void truncated(uint64_t n, const Where& where, std::string_view field) const;

  const uint8_t* base_;
  uint64_t size_;
  uint64_t pos_ = 0;
  const std::string& path_;
};

}  // namespace parley::gguf
