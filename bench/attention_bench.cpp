// One sequence's attention (paged_attention) on one thread, timed by the
// thread's CPU time (best of 200), for one KV head and its group of query
// heads over LENGTH cached slots in blocks of 16:
//   bench_attention f32|f16|q8_0 GROUP HEAD_DIM LENGTH
// The path is the one paged_attention picks (PARLEY_ISA: avx2 is 8 floats
// wide, avx512 and above 16).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "thread_time.h"
#include "kernels/cpu.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

int main(int argc, char** argv) {
  using namespace parley;
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench_attention f32|f16|q8_0 GROUP HEAD_DIM LENGTH\n");
    return 2;
  }
  const std::string name = argv[1];
  const DType type = name == "f16" ? DType::F16 : name == "q8_0" ? DType::Q8_0 : DType::F32;
  const int32_t group = std::atoi(argv[2]), hd = std::atoi(argv[3]), length = std::atoi(argv[4]);
  constexpr int32_t kBlock = 16;
  const size_t row = row_bytes(type, uint64_t(hd));
  const int32_t n_blocks = (length + kBlock - 1) / kBlock;
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> src(static_cast<size_t>(hd)), q(static_cast<size_t>(group * hd)), out(q.size());
  for (auto& v : q) v = normal(rng);
  AlignedBytes k(size_t(n_blocks * kBlock) * row), v(k.size());  // 64-byte aligned, as the KV pool
  for (size_t r = 0; r < size_t(n_blocks * kBlock); ++r)
    for (AlignedBytes* cache : {&k, &v}) {
      for (auto& x : src) x = normal(rng);
      kv_row_from_float(type, src.data(), cache->data() + r * row, hd);
    }
  std::vector<int32_t> blocks(static_cast<size_t>(n_blocks));
  std::iota(blocks.rbegin(), blocks.rend(), 0);  // blocks in reverse order, as a pool hands them out
  PagedKv kv;
  kv.type = type;
  kv.k = k.data();
  kv.v = v.data();
  kv.block_stride = kBlock * row;
  kv.slot_stride = row;
  kv.block_size = kBlock;
  kv.blocks = blocks.data();
  AttentionQuery a;
  a.q = q.data();
  a.out = out.data();
  a.group = group;
  a.head_dim = hd;
  a.end = length;
  a.scale = 0.125f;
  double best = 1e30;
  for (int rep = 0; rep < 200; ++rep) {
    const double t0 = thread_seconds();
    for (int i = 0; i < 10; ++i) paged_attention(kv, a);
    best = std::min(best, (thread_seconds() - t0) / 10);
  }
  std::printf("%s KV, group %d, head_dim %d, %d slots, isa %s: %.2f us, %.1f GFLOP/s\n", name.c_str(), group, hd,
              length, std::string(isa_name(active_isa())).c_str(), best * 1e6,
              4.0 * group * hd * length / best / 1e9);
}
