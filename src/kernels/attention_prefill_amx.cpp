// The prefill attention's products on AMX bf16 tiles (attention_prefill_tiles.h).
// Tiles: 0 A (Q, then P), 1-2 B (K^T, then V), 4-7 C (S: 4-5; P V: 4-7).
#include <immintrin.h>

#include <algorithm>

#include "kernels/amx_tiles.h"
#include "kernels/attention_prefill_tiles.h"

namespace parley::prefill {
namespace {

// o[r] = o[r] * corr[r] + (P V)[r] for dims d0 .. d0 + 16 * n of every row.
void add_values(Scratch& s, int32_t d0, int n, int32_t hd) {
  for (int r = 0; r < kRows; ++r) {
    float* o = s.o.data() + size_t(r) * size_t(hd) + size_t(d0);
    const __m512 c = _mm512_set1_ps(s.corr[r]);
    for (int i = 0; i < n; ++i)
      _mm512_storeu_ps(o + 16 * i, _mm512_fmadd_ps(_mm512_loadu_ps(o + 16 * i), c, _mm512_load_ps(s.pv[r] + 16 * i)));
  }
}

}  // namespace

void begin_tiles() { configure_full_tiles(); }
void end_tiles() { _tile_release(); }

void scores_on_tiles(Scratch& s, int32_t m0, int32_t kb, int32_t hd) {
  const int32_t chunks = hd / 32;
  _tile_zero(4);
  _tile_zero(5);
  for (int32_t c = 0; c < chunks; ++c) {
    _tile_loadd(0, s.q.data() + size_t(m0) * size_t(hd) + size_t(c) * 32, hd * 2);
    _tile_loadd(1, s.kt[size_t((2 * kb) * chunks + c)].v, 64);
    _tile_dpbf16ps(4, 0, 1);
    _tile_loadd(2, s.kt[size_t((2 * kb + 1) * chunks + c)].v, 64);
    _tile_dpbf16ps(5, 0, 2);
  }
  _tile_stored(4, &s.s[0][0], kKeys * 4);
  _tile_stored(5, &s.s[0][16], kKeys * 4);
}

// 4 dim tiles (64 dims) per pass. Tile numbers are pasted into the
// instruction's text, hence a macro.
#define PV_TILE(tc, tb, i)                                               \
  if ((i) < n) {                                                         \
    _tile_zero(tc);                                                      \
    _tile_loadd(tb, s.vt[size_t(kb * dim_tiles + dt + (i))].v, 64);      \
    _tile_dpbf16ps(tc, 0, tb);                                           \
    _tile_stored(tc, &s.pv[0][16 * (i)], 64 * 4);                        \
  }
void values_on_tiles(Scratch& s, int32_t kb, int32_t hd) {
  const int32_t dim_tiles = hd / 16;
  _tile_loadd(0, s.p, 64);
  for (int32_t dt = 0; dt < dim_tiles; dt += 4) {
    const int n = std::min<int32_t>(4, dim_tiles - dt);
    PV_TILE(4, 1, 0)
    PV_TILE(5, 2, 1)
    PV_TILE(6, 1, 2)
    PV_TILE(7, 2, 3)
    add_values(s, dt * 16, n, hd);
  }
}
#undef PV_TILE

}  // namespace parley::prefill
