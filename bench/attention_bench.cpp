// Decode attention (paged_attention) on one thread, timed by the thread's CPU
// time, over LENGTH cached slots in blocks of 16:
//   bench_attention f32|f16|q8_0 GROUP HEAD_DIM LENGTH
//     one KV head and its GROUP query heads, cache-warm (best of 2000 rounds of 10 calls)
//   bench_attention f32|f16|q8_0 GROUP HEAD_DIM LENGTH KV_HEADS LAYERS SEQUENCES
//     a serving step's decode attention: SEQUENCES sequences' caches in one
//     pool laid out as the engine's (kv_cache.h: per block, layer, K|V, head,
//     slot), blocks shuffled, every layer of every sequence attended with all
//     KV_HEADS in one call; cache-cold once the caches exceed the L3 (best of
//     50 steps, per KV head and token)
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

namespace {

using namespace parley;

constexpr int32_t kBlock = 16;

struct Shape {
  DType type;
  int32_t group, hd, length, kv_heads = 1, layers = 1, seqs = 1;
  size_t row() const { return row_bytes(type, uint64_t(hd)); }
  size_t head_bytes() const { return row() * kBlock; }
  size_t layer_bytes() const { return 2 * head_bytes() * size_t(kv_heads); }
  size_t block_bytes() const { return layer_bytes() * size_t(layers); }
  int32_t blocks_per_seq() const { return (length + kBlock - 1) / kBlock; }
};

// A pool of random K and V rows, in the engine's block layout.
AlignedBytes random_pool(const Shape& s, int32_t n_blocks, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> src(size_t(s.hd));
  AlignedBytes pool(s.block_bytes() * size_t(n_blocks));  // 64-byte aligned, as the KV pool
  for (size_t r = 0; r < pool.size() / s.row(); ++r) {
    for (auto& x : src) x = normal(rng);
    kv_row_from_float(s.type, src.data(), pool.data() + r * s.row(), s.hd);
  }
  return pool;
}

PagedKv layer_view(const Shape& s, const AlignedBytes& pool, int32_t layer, const int32_t* blocks) {
  PagedKv kv;
  kv.type = s.type;
  kv.k = pool.data() + size_t(layer) * s.layer_bytes();
  kv.v = kv.k + s.head_bytes() * size_t(s.kv_heads);
  kv.block_stride = s.block_bytes();
  kv.slot_stride = s.row();
  kv.head_stride = s.head_bytes();
  kv.block_size = kBlock;
  kv.blocks = blocks;
  return kv;
}

AttentionQuery query(const Shape& s, const float* q, float* out) {
  AttentionQuery a;
  a.q = q;
  a.out = out;
  a.group = s.group;
  a.head_dim = s.hd;
  a.kv_heads = s.kv_heads;
  a.end = s.length;
  a.scale = 0.125f;
  return a;
}

// Seconds per call, cache-warm.
double warm(const Shape& s, std::mt19937& rng) {
  const AlignedBytes pool = random_pool(s, s.blocks_per_seq(), rng);
  std::vector<int32_t> blocks(size_t(s.blocks_per_seq()));
  std::iota(blocks.rbegin(), blocks.rend(), 0);  // blocks in reverse order, as a pool hands them out
  std::normal_distribution<float> normal;
  std::vector<float> q(size_t(s.group * s.hd)), out(q.size());
  for (auto& v : q) v = normal(rng);
  const PagedKv kv = layer_view(s, pool, 0, blocks.data());
  const AttentionQuery a = query(s, q.data(), out.data());
  double best = 1e30;
  for (int rep = 0; rep < 2000; ++rep) {
    const double t0 = thread_seconds();
    for (int i = 0; i < 10; ++i) paged_attention(kv, a);
    best = std::min(best, (thread_seconds() - t0) / 10);
  }
  return best;
}

// Seconds per step (every layer of every sequence).
double step(const Shape& s, std::mt19937& rng) {
  const int32_t n_blocks = s.blocks_per_seq() * s.seqs;
  const AlignedBytes pool = random_pool(s, n_blocks, rng);
  std::vector<int32_t> blocks(static_cast<size_t>(n_blocks));
  std::iota(blocks.begin(), blocks.end(), 0);
  std::shuffle(blocks.begin(), blocks.end(), rng);
  std::normal_distribution<float> normal;
  const size_t q_floats = size_t(s.kv_heads * s.group * s.hd);
  std::vector<float> q(q_floats * size_t(s.seqs)), out(q.size());
  for (auto& v : q) v = normal(rng);
  double best = 1e30;
  for (int rep = 0; rep < 50; ++rep) {
    const double t0 = thread_seconds();
    for (int32_t l = 0; l < s.layers; ++l)
      for (int32_t i = 0; i < s.seqs; ++i) {
        const int32_t* table = blocks.data() + size_t(i) * size_t(s.blocks_per_seq());
        paged_attention(layer_view(s, pool, l, table),
                        query(s, q.data() + size_t(i) * q_floats, out.data() + size_t(i) * q_floats));
      }
    best = std::min(best, thread_seconds() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 8) {
    std::fprintf(stderr,
                 "usage: bench_attention f32|f16|q8_0 GROUP HEAD_DIM LENGTH [KV_HEADS LAYERS SEQUENCES]\n");
    return 2;
  }
  const std::string name = argv[1];
  Shape s{name == "f16" ? DType::F16 : name == "q8_0" ? DType::Q8_0 : DType::F32, std::atoi(argv[2]),
          std::atoi(argv[3]), std::atoi(argv[4])};
  std::mt19937 rng(1);
  const std::string isa(isa_name(active_isa()));
  if (argc == 5) {
    const double t = warm(s, rng);
    std::printf("%s KV, group %d, head_dim %d, %d slots, isa %s: %.2f us, %.1f GFLOP/s\n", name.c_str(), s.group,
                s.hd, s.length, isa.c_str(), t * 1e6, 4.0 * s.group * s.hd * s.length / t / 1e9);
    return 0;
  }
  s.kv_heads = std::atoi(argv[5]);
  s.layers = std::atoi(argv[6]);
  s.seqs = std::atoi(argv[7]);
  const double t = step(s, rng);
  const double heads = double(s.layers) * s.seqs * s.kv_heads;
  const double bytes = double(s.block_bytes()) * s.blocks_per_seq() * s.seqs;
  std::printf("%s KV, group %d, head_dim %d, %d slots, %d KV heads, %d layers, %d sequences (%.1f MB), isa %s: "
              "step %.3f ms, %.2f us per KV head, %.1f GFLOP/s, %.1f GB/s\n",
              name.c_str(), s.group, s.hd, s.length, s.kv_heads, s.layers, s.seqs, bytes / 1e6, isa.c_str(),
              t * 1e3, t / heads * 1e6, 4.0 * heads * s.group * s.hd * s.length / t / 1e9, bytes / t / 1e9);
}
