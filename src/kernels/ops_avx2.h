#pragma once
// AVX2 versions of the ops (ops_avx2.cpp); ops.cpp calls them when the active
// path is AVX2 or better. Same contracts as ops.h.
#include <cstdint>

namespace parley::avx2 {

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps);
void softmax(float* x, int64_t n);
void swiglu(float* gate, const float* up, int64_t n);
void geglu(float* gate, const float* up, int64_t n);  // tanh_ops.h
void softcap(float* x, int64_t n, float cap);
void add(float* y, const float* x, int64_t n);
float dot(const float* a, const float* b, int64_t n);
void axpy(float* y, float a, const float* x, int64_t n);
void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n);
void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n);
int64_t argmax(const float* x, int64_t n);
float max_of(const float* x, int64_t n);
float sum(const float* x, int64_t n);
void exp_weights(const float* x, float shift, float temperature, float* w, int64_t n);
void rope_rotate(float* v, const float* cos, const float* sin, int64_t half, bool interleaved);

}  // namespace parley::avx2
