#pragma once
// Q8_0, Q4_0 and IQ4_XS weights repacked at load for the int8 GEMM (prefill, batched
// decode) and for decode.
//
// A row-major matrix makes an int8 kernel reduce each row's dot product
// across SIMD lanes and rescale every 32 products. The packed layout instead
// puts 16 rows side by side: one 64-byte vector holds 4 consecutive quants of
// each of 16 rows, so vpdpbusd with a broadcast of 4 activation bytes adds 16
// rows' partial sums at once, and a whole block is rescaled with one
// conversion and two multiplies per 16 rows x 1 token. The result of 16 rows
// lands in one vector, stored as it is.
//
// Group g (rows 16g .. 16g+15; missing rows of the last group are zero),
// blocks in pairs (b, b + 1):
//   scales of b, then of b + 1: [row 0..15] fp16 (one cache line)
//   quants of b, then of b + 1, as unsigned values u = q + offset:
//     Q8_0: [j = 0..7][row 0..15][4 bytes]: u of elements 4j .. 4j+3 (offset 128)
//     Q4_0: [j = 0..3][row 0..15][4 bytes]: the file's bytes qs[4j .. 4j+3],
//           whose low nibbles are elements 4j.. and high nibbles 16+4j.. (offset 8)
// IQ4_XS, in super-blocks of 8 blocks (one of the file's blocks of 256):
//   scales: [row 0..15] fp16 d, then [block 0..7][row 0..15] int8 block scale
//           (ls - 32), padded to 192 bytes; then the 8 blocks' quants as
//           Q4_0's (the file's nibbles, indices into the codebook; the
//           kernels look up codebook + 128, offset 128).
//   Row r's weight: d * scale * codebook[index], exactly the file's.
// Scales first: the kernels read a block's scales after its quants, for the
// rescale, their one loop-carried chain. Stored at the pair's end, that line
// lay 1 KB ahead of the quants being streamed and was waited for from memory
// in every pair of a batched decode (measured with bench_packed_gemm on
// Zen 4; docs/performance.md, "Packed weights").
// The packed matrix has exactly the bytes of the original when the rows are
// whole groups and the blocks come in pairs (otherwise up to one group and
// one block more), so it can replace the file's pages; IQ4_XS's takes 3%
// more (a line of scales per super-block and 16 rows).
#include <cstdint>

#include "kernels/matmul.h"

namespace parley {

constexpr int64_t kPackRows = 16;

// Whether matmul() would use a packed copy of `w` on this CPU: Q8_0, Q4_0 or
// IQ4_XS weights and a SIMD path active (AVX2's kernel reads the same layout
// as 8-row halves; VNNI and AMX have their own), or Q3_K weights, VNNI and GFNI.
bool packing_helps(const MatrixView& w);

// Bytes of the packed copy of `w` (a multiple of 64).
uint64_t packed_bytes(const MatrixView& w);

// Writes the packed copy of the Q8_0, Q4_0 or IQ4_XS matrix `w` to `out` (64-byte
// aligned, packed_bytes(w) bytes; the padding of an odd last block is left as it is).
void pack_matrix(const MatrixView& w, uint8_t* out);

// Whether packed_matmul() of n_tokens rows of `type` runs on AMX bf16 tiles (weights
// dequantized to bf16, activations rounded to bf16: results differ from the
// int8 paths by up to about 2^-7 of sum |w * x|). PARLEY_AMX_BF16_MIN_TOKENS
// sets the threshold (for measuring).
bool packed_bf16_tiles(DType type, int64_t n_tokens);

// matmul_shared() for matrices of one type and width whose `packed` point at
// pack_matrix's output.
void packed_matmul(std::span<const MatmulOutput> outs, const float* x, int64_t n_tokens, ThreadPool& pool);

}  // namespace parley
