#include "engine/block_hash_map.h"

namespace parley {

BlockHashMap::BlockHashMap(int64_t max_entries) {
  size_t cap = 16;
  while (cap < size_t(max_entries) * 2) cap *= 2;  // load factor <= 1/2
  slots_.resize(cap);
  mask_ = cap - 1;
}

size_t BlockHashMap::probe(uint64_t h) const {
  size_t i = home(h);
  while (slots_[i].block >= 0 && slots_[i].hash != h) i = (i + 1) & mask_;
  return i;
}

int32_t BlockHashMap::find(uint64_t hash) const {
  return slots_[probe(hash)].block;
}

void BlockHashMap::insert(uint64_t hash, int32_t block) {
  Slot& s = slots_[probe(hash)];
  if (s.block < 0) ++size_;
  s = {hash, block};
}

// Backward-shift deletion: later entries of the probe run that could live in
// the freed slot move into it, so lookups never stop early at a hole.
void BlockHashMap::erase(uint64_t hash) {
  size_t i = probe(hash);
  if (slots_[i].block < 0) return;
  --size_;
  for (size_t j = (i + 1) & mask_; slots_[j].block >= 0; j = (j + 1) & mask_) {
    const size_t want = home(slots_[j].hash);
    // Movable if its home is not within (i, j] cyclically.
    const bool between = i <= j ? (want > i && want <= j) : (want > i || want <= j);
    if (!between) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i] = Slot{};
}

}  // namespace parley
