#pragma once
// Element-wise and row operations of the transformer forward pass.
#include <cstdint>

namespace parley {

// out = x / rms(x) * weight (weight may be null: no scale)
void rmsnorm(float* out, const float* x, const float* weight, int64_t n, float eps);
void softmax(float* x, int64_t n);                        // in place, numerically stable
void swiglu(float* gate, const float* up, int64_t n);     // gate = silu(gate) * up
void add(float* y, const float* x, int64_t n);            // y += x
float dot(const float* a, const float* b, int64_t n);
void axpy(float* y, float a, const float* x, int64_t n);  // y += a * x
// y[i][j] += sum over k < rows of a[i][k] * x[k * stride + j], for the m
// output rows i (row pointers y[i], a[i]) and j < n: a LoRA expansion, the rank
// rows of Bᵀ added into m output rows. Each load of x serves several rows and
// each y element is read and written once; every element's sum runs over k in
// order, so a row's result does not depend on the rows beside it.
void axpy_rows(float* const* y, const float* const* a, int64_t m, const float* x, int64_t rows, int64_t stride,
               int64_t n);
// The same with x's rows in F16, widened exactly.
void axpy_rows_f16(float* const* y, const float* const* a, int64_t m, const uint16_t* x, int64_t rows, int64_t stride,
                   int64_t n);
// Rotary embedding of one head: pairs (v[2i], v[2i+1]) when `interleaved`,
// else (v[i], v[i + half]), i < half, rotated by angles with these cosines
// and sines: (a, b) -> (a c - b s, a s + b c), the same roundings on every path.
void rope_rotate(float* v, const float* cos, const float* sin, int64_t half, bool interleaved);
// Index of the largest value, the lowest on ties; NaN and -inf are never
// chosen (-1 when nothing else is left).
int64_t argmax(const float* x, int64_t n);
float max_of(const float* x, int64_t n);  // the largest value, NaN ignored (-inf if none)
float sum(const float* x, int64_t n);
// w[i] = exp((x[i] - shift) / temperature), 0 where x[i] is -inf or NaN: the
// unnormalised weights of sampling at temperature > 0 (shift: the largest x).
void exp_weights(const float* x, float shift, float temperature, float* w, int64_t n);

}  // namespace parley
