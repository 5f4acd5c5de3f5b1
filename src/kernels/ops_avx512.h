#pragma once
// AVX-512 versions of some ops (ops_avx512.cpp); ops.cpp calls them when the
// active path is AVX-512 or better. Same contracts as ops.h.
#include <cstdint>

namespace parley::avx512 {

void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n);
void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n);

}  // namespace parley::avx512
