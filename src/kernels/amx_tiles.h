#pragma once
// The AMX tile configuration shared by the *_amx.cpp kernels. Internal
// linkage on purpose: only files compiled with the AMX flags include it.
#include <immintrin.h>

#include <cstdint>

namespace parley {
namespace {

// ldtilecfg's 64-byte operand (palette 1): each tile's rows and bytes per row.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};

  void set(int tile, int n_rows, int bytes_per_row) {
    rows[tile] = uint8_t(n_rows);
    colsb[tile] = uint16_t(bytes_per_row);
  }
  void load() const {
    // GCC 12 does not treat ldtilecfg as reading its operand and may sink the
    // stores that fill it past the instruction (seen: zero widths, a #GP).
    asm volatile("" : : "r"(this) : "memory");
    _tile_loadconfig(this);
  }
};

// All 8 tiles as 16 rows of 64 bytes (the bf16 kernels' shape).
inline void configure_full_tiles() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) c.set(t, 16, 64);
  c.load();
}

}  // namespace
}  // namespace parley
