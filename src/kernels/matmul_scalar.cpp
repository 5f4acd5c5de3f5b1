// Portable reference kernels for every weight type. Quantized types take the
// same 8-bit activations and integer block sums as the SIMD paths.
#include <cstring>

#include "kernels/decode.h"
#include "kernels/matmul_kernels.h"
#include "kernels/tile.h"
#include "util/fp16.h"

namespace parley {
namespace {

constexpr int kTokenTile = 4;

inline float load_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float load_f16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return fp16_to_fp32(h);
}
inline float load_bf16(const uint8_t* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return bf16_to_fp32(h);
}

template <float (*Load)(const uint8_t*), int Bytes>
struct FloatDot {
  const WeightRows& w;
  const Acts& x;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = 0.0f;
    const float* xt = x.f + t0 * x.cols;
    for (int64_t c = 0; c < x.cols; ++c) {
      const float v = Load(row + c * Bytes);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) out[n] += v * xt[n * x.cols + c];
    }
  }
};

int dot_i8(const int8_t* a, const int8_t* b, int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i) sum += int(a[i]) * int(b[i]);
  return sum;
}

// Per block: (d_w * d_x) * sum(q_w * q_x) + m_w * (d_x * sum(q_x)).
struct Block32Dot {
  const WeightRows& w;
  const Acts& x;
  Block32Decoder decode;
  int bytes;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    float acc[N] = {};
    Block32 b;
    for (int64_t blk = 0; blk < x.blocks; ++blk) {
      decode(row + blk * bytes, b);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * x.blocks + blk;
        acc[n] += (b.d * x.d[i]) * float(dot_i8(b.q, x.q + i * 32, 32)) + b.m * x.s[i];
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = acc[n];
  }
};

// Per super-block: (d_w * d_x) * sum_j sc[j] * sum(q_w * q_x over j)
//                - (dmin_w * d_x) * sum_j m[j] * sum(q_x over j).
struct BlockKDot {
  const WeightRows& w;
  const Acts& x;
  BlockKDecoder decode;
  int bytes;

  template <int N>
  void run(const uint8_t* row, int64_t t0, float* out) const {
    float acc[N] = {};
    BlockK b;
    for (int64_t blk = 0; blk < x.blocks; ++blk) {
      decode(row + blk * bytes, b);
#pragma GCC unroll 8
      for (int n = 0; n < N; ++n) {
        const int64_t i = (t0 + n) * x.blocks + blk;
        const int8_t* xq = x.q + i * 256;
        const int16_t* bsums = x.bsums + i * 16;
        int isum = 0, msum = 0;
        for (int j = 0; j < 256 / b.sub; ++j) {
          isum += b.sc[j] * dot_i8(b.q + j * b.sub, xq + j * b.sub, b.sub);
          const int per16 = b.sub / 16;
          for (int k = 0; k < per16; ++k) msum += b.m[j] * bsums[j * per16 + k];
        }
        acc[n] += (b.d * x.d[i]) * float(isum) - (b.dmin * x.d[i]) * float(msum);
      }
    }
#pragma GCC unroll 8
    for (int n = 0; n < N; ++n) out[n] = acc[n];
  }
};

template <float (*Load)(const uint8_t*), int Bytes>
void float_kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1, float* y) {
  run_rows<kTokenTile>(FloatDot<Load, Bytes>{w, x}, w, n, r0, r1, y);
}

template <DType Type>
void block32_kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1,
                    float* y) {
  const Block32Dot dot{w, x, block32_decoder(Type), traits(Type).block_bytes};
  run_rows<kTokenTile>(dot, w, n, r0, r1, y);
}

template <DType Type>
void block_k_kernel(const WeightRows& w, const Acts& x, int64_t n, int64_t r0, int64_t r1,
                    float* y) {
  const BlockKDot dot{w, x, block_k_decoder(Type), traits(Type).block_bytes};
  run_rows<kTokenTile>(dot, w, n, r0, r1, y);
}

}  // namespace

RowsKernel scalar_kernel(DType type) {
  switch (type) {
    case DType::F32: return float_kernel<load_f32, 4>;
    case DType::F16: return float_kernel<load_f16, 2>;
    case DType::BF16: return float_kernel<load_bf16, 2>;
    case DType::Q8_0: return block32_kernel<DType::Q8_0>;
    case DType::Q4_0: return block32_kernel<DType::Q4_0>;
    case DType::Q4_1: return block32_kernel<DType::Q4_1>;
    case DType::Q5_0: return block32_kernel<DType::Q5_0>;
    case DType::Q5_1: return block32_kernel<DType::Q5_1>;
    case DType::Q4_K: return block_k_kernel<DType::Q4_K>;
    case DType::Q5_K: return block_k_kernel<DType::Q5_K>;
    case DType::Q6_K: return block_k_kernel<DType::Q6_K>;
    case DType::Q2_K: return block_k_kernel<DType::Q2_K>;
    case DType::Q3_K: return block_k_kernel<DType::Q3_K>;
    case DType::IQ4_NL: return block32_kernel<DType::IQ4_NL>;
    case DType::IQ4_XS: return block_k_kernel<DType::IQ4_XS>;
  }
  return nullptr;
}

}  // namespace parley
