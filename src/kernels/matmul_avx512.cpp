// AVX-512 (F, BW, VL, DQ) kernels: the shared templates with maddubs + madd.
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/matmul_512.h"

namespace parley {
namespace {

struct MaddubsPolicy {
  static constexpr bool kExactU8 = false;  // maddubs saturates pairs above 32767
  static __m512i dot(__m512i u, __m512i s) {
    return _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1));
  }
  static __m512i dot_acc(__m512i acc, __m512i u, __m512i s) { return _mm512_add_epi32(acc, dot(u, s)); }
  static __m512i madd16(__m512i acc, __m512i a, __m512i b) { return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b)); }
  static __m512i add_scaled(__m512i acc, __m512i u, __m512i x, __m512i s16) {
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, x), s16));
  }
};

}  // namespace

RowsKernel avx512_kernel(DType type) { return kernels_512<MaddubsPolicy>(type); }

}  // namespace parley
