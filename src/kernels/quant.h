#pragma once
// Scalar reference conversions between float rows and every supported DType.
// These define the formats (as in the GGUF specification / ggml); SIMD kernels
// are tested against them.
#include <cstdint>

#include "kernels/dtype.h"

namespace parley {

// n must be a multiple of the type's block size.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);
// Reference quantizer (round-to-nearest, the ggml reference rounding).
void quantize_row(DType type, const float* src, void* dst, int64_t n);

}  // namespace parley
