// AVX512-VNNI kernels: the shared AVX-512 templates with vpdpbusd (u8 x s8
// dot into int32) and vpdpwssd (int16 pairs into int32).
// GCC 12.2's avx512fintrin.h trips -Wuninitialized on its own
// _mm512_undefined_* idiom once inlined (GCC bug 105593, fixed in 12.3).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "kernels/matmul_512.h"

namespace parley {
namespace {

struct VnniPolicy {
  static constexpr bool kExactU8 = true;
  static __m512i dot(__m512i u, __m512i s) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, s); }
  static __m512i dot_acc(__m512i acc, __m512i u, __m512i s) { return _mm512_dpbusd_epi32(acc, u, s); }
  static __m512i madd16(__m512i acc, __m512i a, __m512i b) { return _mm512_dpwssd_epi32(acc, a, b); }
  static __m512i add_scaled(__m512i acc, __m512i u, __m512i x, __m512i s16) {
    return _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u, x), s16);
  }
};

}  // namespace

RowsKernel vnni_kernel(DType type) { return kernels_512<VnniPolicy>(type); }

}  // namespace parley
