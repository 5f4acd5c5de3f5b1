#pragma once
// Software read-ahead of a packed GEMM tile's weight streams. A tile's first
// token tile reads its row groups from memory at the pace of its int8 work,
// and the hardware prefetcher alone stays too little ahead of such streams:
// the reads and the work take turns. Requesting each stream's lines
// kReadAheadBytes ahead into L2 overlaps them (past a group's end this is
// the next group, which the kernels take next). Cold weights, one thread
// (bench_overlap 1536 2048 N 64 1 TYPE, docs/performance.md): AVX512-VNNI
// Q4_0, IQ4_XS and Q3_K 7-18% faster at 4-16 tokens, Q8_0 (twice the bytes a
// multiply) 5-13% slower; AVX2 Q4_0 13-18% faster at 8-16 tokens, Q8_0 slower
// and IQ4_XS no faster. So each kernel's block type says whether its tiles
// read ahead (kReadAhead).
// Internal linkage: the includers are compiled with different target flags,
// and one copy must not stand in for another's.
#include <cstdint>

#include "kernels/packed_gemm_kernels.h"

namespace parley {
namespace {

constexpr int64_t kReadAheadBytes = 2048;

// RG streams starting at group[i], read block by block; with On false,
// request() does nothing (a tile compiled without read-ahead).
template <int RG, bool On>
class ReadAhead {
 public:
  ReadAhead(const PackedMatrix& w, const uint8_t* const (&group)[RG])
      : group_(group), block_bytes_(w.group_stride() / w.blocks) {}
  // Before block b: each stream's lines up to kReadAheadBytes past its end.
  void request(int64_t b) {
    if constexpr (On)
      for (const int64_t upto = ((b + 1) * block_bytes_ + kReadAheadBytes + 63) / 64; line_ < upto; ++line_)
#pragma GCC unroll 16
        for (int i = 0; i < RG; ++i) __builtin_prefetch(group_[i] + line_ * 64, 0, 2);  // into L2
  }

 private:
  const uint8_t* const (&group_)[RG];
  int64_t block_bytes_, line_ = kReadAheadBytes / 64;
};

}  // namespace
}  // namespace parley
