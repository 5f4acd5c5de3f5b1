#pragma once
// What the prefill attention's two product paths share (attention_prefill.h):
// the scratch layouts of one call and the AMX products. Internal to
// attention_prefill_bf16.cpp and attention_prefill_amx.cpp.
//
// Layouts, per call (one KV head, keys 0 .. n_keys - 1 padded with zeros to
// a multiple of 32):
//   Q rows [row m = token * group + head][head_dim] bf16, pre-multiplied by
//     the scale; an A tile is 16 rows x 32 dims.
//   K^T tiles [block of 16 keys][32 dims]: row i holds dims 2i, 2i + 1 of
//     each of the 16 keys (the B layout of S = Q K^T).
//   V tiles [block of 32 keys][16 dims]: row i holds keys 2i, 2i + 1 of each
//     of the 16 dims (the B layout of O = P V).
// A tile row is also what one vdpbf16ps takes with a broadcast bf16 pair of
// Q (or P): 16 keys' (or dims') fp32 sums.
#include <cstdint>
#include <vector>

namespace parley::prefill {

constexpr int kRows = 16;  // query rows of a tile
constexpr int kKeys = 32;  // keys per step

struct alignas(64) Tile {
  uint16_t v[16][32];
};

struct Scratch {
  std::vector<Tile> kt, vt;
  std::vector<uint16_t> q;  // [row][head_dim]
  std::vector<float> row;   // K or V rows as floats
  std::vector<float> o;     // [16][head_dim] running sums of a query tile
  alignas(64) float s[kRows][kKeys];
  alignas(64) float pv[kRows][64];
  alignas(64) uint16_t p[kRows][kKeys];
  float max[kRows], sum[kRows], corr[kRows];
  int32_t limit[kRows];  // last key each row attends
};

// On AMX tiles (attention_prefill_amx.cpp), between begin_tiles() and end_tiles():
// the scores of keys kb * 32 .. + 31 for the rows m0 .. m0 + 15 into s.s, and
// o = o * corr + P V for those keys.
void begin_tiles();
void end_tiles();
void scores_on_tiles(Scratch& s, int32_t m0, int32_t kb, int32_t hd);
void values_on_tiles(Scratch& s, int32_t kb, int32_t hd);

}  // namespace parley::prefill
