#pragma once
// Prefix-cache index: block content hash -> block id, open addressing with
// linear probing in a table sized once (no allocation after construction;
// deletion shifts entries back instead of leaving tombstones).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace parley {

class BlockHashMap {
 public:
  explicit BlockHashMap(int64_t max_entries);
  int32_t find(uint64_t hash) const;  // -1 when absent
  void insert(uint64_t hash, int32_t block);  // hash must be absent
  void erase(uint64_t hash);                  // no-op when absent
  int64_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t hash = 0;
    int32_t block = -1;  // -1: empty
  };
  size_t home(uint64_t h) const { return size_t(h * 0x9e3779b97f4a7c15ull >> 7) & mask_; }
  size_t probe(uint64_t h) const;  // the slot holding h, or the empty slot where it would go

  std::vector<Slot> slots_;
  size_t mask_;
  int64_t size_ = 0;
};

}  // namespace parley
