// The paged attention kernel (kernels/attention.h) against a naive float64
// softmax attention, for every KV type, GQA ratios, lengths crossing block
// boundaries, scattered block tables, and keys rotated at read time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_prefill.h"
#include "kernels/cpu.h"
#include "kernels/quant.h"
#include "model/kv_cache.h"
#include "util/error.h"

namespace parley {
namespace {

struct Shape {
  int32_t kv_heads, group, head_dim, length;
};

class PagedKvFixture {
 public:
  PagedKvFixture(DType type, const Shape& s, int32_t block_size, uint64_t seed)
      : s_(s), cache_(config(s), type, block_size, (s.length + block_size - 1) / block_size + 3) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    // A scattered block table: blocks in reverse, skipping some.
    for (int32_t b = 0; b * block_size < s.length; ++b) blocks_.push_back(int32_t(cache_.n_blocks()) - 1 - b);
    const size_t row = size_t(s.head_dim);
    k_.resize(size_t(s.length) * size_t(s.kv_heads) * row);
    v_.resize(k_.size());
    for (auto& x : k_) x = normal(rng);
    for (auto& x : v_) x = normal(rng);
    q_.resize(size_t(s.kv_heads) * size_t(s.group) * row);
    for (auto& x : q_) x = normal(rng);
    for (int32_t p = 0; p < s.length; ++p)
      for (int32_t h = 0; h < s.kv_heads; ++h) {
        const int32_t block = blocks_[size_t(p / block_size)], in = p % block_size;
        kv_row_from_float(type, kv(k_, p, h), cache_.k_row(block, 0, in, h), s.head_dim);
        kv_row_from_float(type, kv(v_, p, h), cache_.v_row(block, 0, in, h), s.head_dim);
        // The reference sees what the cache holds.
        std::vector<uint8_t> tmp(row_bytes(type, row));
        quantize_row(type, kv(k_, p, h), tmp.data(), s.head_dim);
        dequantize_row(type, tmp.data(), kv(k_, p, h), s.head_dim);
        quantize_row(type, kv(v_, p, h), tmp.data(), s.head_dim);
        dequantize_row(type, tmp.data(), kv(v_, p, h), s.head_dim);
      }
  }

  static ModelConfig config(const Shape& s) {
    ModelConfig c;
    c.n_layers = 1;
    c.n_kv_heads = s.kv_heads;
    c.n_heads = s.kv_heads * s.group;
    c.head_dim = s.head_dim;
    return c;
  }

  float* kv(std::vector<float>& a, int32_t p, int32_t h) {
    return a.data() + (size_t(p) * size_t(s_.kv_heads) + size_t(h)) * size_t(s_.head_dim);
  }
  const float* query(int32_t h) const { return q_.data() + size_t(h) * size_t(s_.group) * size_t(s_.head_dim); }
  PagedKv view() const { return cache_.layer(0, blocks_.data()); }

  // float64 softmax attention of query head g of KV head h over `slots`,
  // each key first transformed by `key_fn`.
  template <class KeyFn>
  std::vector<double> reference(int32_t h, int32_t g, const std::vector<int32_t>& slots, KeyFn key_fn,
                                std::vector<double>* weights = nullptr) {
    const int32_t hd = s_.head_dim;
    const float* q = query(h) + size_t(g) * size_t(hd);
    std::vector<double> scores;
    for (int32_t p : slots) {
      std::vector<float> key(kv(k_, p, h), kv(k_, p, h) + hd);
      key_fn(key.data(), p);
      double d = 0;
      for (int32_t i = 0; i < hd; ++i) d += double(q[i]) * double(key[size_t(i)]);
      scores.push_back(d / std::sqrt(double(hd)));
    }
    const double max = *std::max_element(scores.begin(), scores.end());
    double sum = 0;
    for (auto& x : scores) sum += (x = std::exp(x - max));
    std::vector<double> out(size_t(hd), 0.0);
    for (size_t j = 0; j < slots.size(); ++j) {
      scores[j] /= sum;
      for (int32_t i = 0; i < hd; ++i) out[size_t(i)] += scores[j] * double(kv(v_, slots[j], h)[i]);
    }
    if (weights) *weights = scores;
    return out;
  }

 private:
  Shape s_;
  KvCache cache_;
  std::vector<int32_t> blocks_;
  std::vector<float> k_, v_, q_;
};

double max_error(const float* got, const std::vector<double>& want) {
  double e = 0;
  for (size_t i = 0; i < want.size(); ++i) e = std::max(e, std::abs(double(got[i]) - want[i]));
  return e;
}

AttentionQuery make_query(const PagedKvFixture& f, const Shape& s, int32_t h, float* out) {
  AttentionQuery a;
  a.q = f.query(h);
  a.out = out;
  a.group = s.group;
  a.head_dim = s.head_dim;
  a.kv_head = h;
  a.scale = 1.0f / std::sqrt(float(s.head_dim));
  return a;
}

void no_rotation(float*, int32_t) {}

void check_all_types(Isa isa) {
  if (!isa_supported(isa)) GTEST_SKIP() << "this CPU lacks " << isa_name(isa);
  const Isa saved = active_isa();
  set_active_isa(isa);
  // head_dim 128 and 160 take the 8-vector loop of the 16-float path (160 with a tail).
  const Shape shapes[] = {{1, 1, 32, 1},   {2, 2, 64, 16},  {2, 4, 32, 17}, {1, 8, 64, 50},
                          {4, 1, 96, 100}, {2, 3, 12, 45},  {1, 1, 128, 70}, {1, 2, 160, 40}};
  for (DType type : {DType::F32, DType::F16, DType::Q8_0}) {
    for (const Shape& s : shapes) {
      if (type == DType::Q8_0 && s.head_dim % 32 != 0) continue;
      SCOPED_TRACE(std::string(dtype_name(type)) + " length " + std::to_string(s.length) + " group " +
                   std::to_string(s.group));
      PagedKvFixture f(type, s, 16, uint64_t(s.length));
      // The SIMD paths score Q8_0 keys against the query rounded to int16 (one
      // scale per head): up to 2.3e-5 of error in these outputs of unit scale.
      const double tol = type == DType::Q8_0 && isa >= Isa::Avx2 ? 1e-4 : 2e-5;
      std::vector<float> out(size_t(s.group) * size_t(s.head_dim));
      for (int32_t h = 0; h < s.kv_heads; ++h)
        for (int32_t first : {0, s.length / 3}) {
          AttentionQuery a = make_query(f, s, h, out.data());
          a.first = first;
          a.end = s.length;
          paged_attention(f.view(), a);
          std::vector<int32_t> slots(size_t(s.length - first));
          std::iota(slots.begin(), slots.end(), first);
          for (int32_t g = 0; g < s.group; ++g)
            EXPECT_LT(max_error(out.data() + size_t(g) * size_t(s.head_dim), f.reference(h, g, slots, no_rotation)),
                      tol);
        }
      // Every KV head in one pass (AttentionQuery::kv_heads), from slot 1.
      std::vector<float> all(size_t(s.kv_heads) * out.size());
      AttentionQuery a = make_query(f, s, 0, all.data());
      a.kv_heads = s.kv_heads;
      a.first = 1 % s.length;
      a.end = s.length;
      paged_attention(f.view(), a);
      std::vector<int32_t> slots(size_t(s.length - a.first));
      std::iota(slots.begin(), slots.end(), a.first);
      for (int32_t h = 0; h < s.kv_heads; ++h)
        for (int32_t g = 0; g < s.group; ++g)
          EXPECT_LT(max_error(all.data() + size_t(h * s.group + g) * size_t(s.head_dim),
                              f.reference(h, g, slots, no_rotation)),
                    tol)
              << "KV head " << h << " of " << s.kv_heads << " in one pass";
    }
  }
  set_active_isa(saved);
}

// Attention weights are kept for one KV head at a time.
TEST(PagedAttention, RefusesWeightsForSeveralKvHeads) {
  const Shape s{2, 1, 32, 8};
  PagedKvFixture f(DType::F32, s, 16, 1);
  std::vector<float> out(2 * 32), weights(8);
  AttentionQuery a = make_query(f, s, 0, out.data());
  a.kv_heads = 2;
  a.end = s.length;
  a.weights = weights.data();
  EXPECT_THROW(paged_attention(f.view(), a), Error);
}

TEST(PagedAttention, MatchesReferenceScalar) { check_all_types(Isa::Scalar); }
TEST(PagedAttention, MatchesReferenceAvx2) { check_all_types(Isa::Avx2); }
TEST(PagedAttention, MatchesReferenceAvx512) { check_all_types(Isa::Avx512); }

// A toy rotation: multiplies the key by (1 + pos / 10).
void scale_by_pos(const void*, float* key, int32_t pos) {
  for (int32_t i = 0; i < 32; ++i) key[i] *= 1.0f + float(pos) / 10.0f;
}

TEST(PagedAttention, RotatedKeysByPositionWithHolesAndWeights) {
  const Shape s{2, 2, 32, 40};
  PagedKvFixture f(DType::F16, s, 8, 3);
  // Slots hold positions in scrambled order; some are empty or beyond the query.
  std::vector<int32_t> slot_pos(size_t(s.length));
  std::iota(slot_pos.begin(), slot_pos.end(), 0);
  std::mt19937 rng(5);
  std::shuffle(slot_pos.begin(), slot_pos.end(), rng);
  for (int32_t i = 0; i < s.length; i += 7) slot_pos[size_t(i)] = -1;
  const int32_t min_pos = 3, max_pos = 30;
  KeyRotation rot{slot_pos.data(), scale_by_pos, nullptr};
  std::vector<float> out(size_t(s.group) * size_t(s.head_dim));
  std::vector<float> weights(size_t(s.group) * size_t(s.length));
  std::vector<int32_t> attended;
  for (int32_t slot = 0; slot < s.length; ++slot)
    if (slot_pos[size_t(slot)] >= min_pos && slot_pos[size_t(slot)] <= max_pos) attended.push_back(slot);
  for (int32_t h = 0; h < s.kv_heads; ++h) {
    AttentionQuery a = make_query(f, s, h, out.data());
    a.first = 0;
    a.end = s.length;
    a.rotation = &rot;
    a.min_pos = min_pos;
    a.max_pos = max_pos;
    a.weights = weights.data();
    paged_attention(f.view(), a);
    for (int32_t g = 0; g < s.group; ++g) {
      std::vector<double> want_w;
      const auto want = f.reference(h, g, attended, [&](float* key, int32_t slot) {
        scale_by_pos(nullptr, key, slot_pos[size_t(slot)]);
      }, &want_w);
      EXPECT_LT(max_error(out.data() + size_t(g) * size_t(s.head_dim), want), 2e-5);
      const float* w = weights.data() + size_t(g) * size_t(s.length);
      double total = 0;
      for (size_t j = 0; j < attended.size(); ++j) EXPECT_NEAR(w[attended[j]], want_w[j], 1e-6);
      for (int32_t slot = 0; slot < s.length; ++slot) total += w[slot];
      EXPECT_NEAR(total, 1.0, 1e-5);  // empty and out-of-range slots get nothing
    }
  }
}

// The bf16 prefill kernel, on AMX tiles and on AVX512-BF16 vectors, against
// the one-token kernel, token by token: every
// KV type, grouped heads, head dims with one to eight 32-dim chunks (96: a
// pass of P V with two dim tiles left), query tiles that split a token's
// heads, and a chunk after earlier tokens (first_pos > 0). bf16 operands:
// outputs (weighted means of N(0, 1) values) agree to 2e-2.
// Forces one kernel path for a test's duration.
struct ScopedIsa {
  Isa saved = active_isa();
  explicit ScopedIsa(Isa isa) { set_active_isa(isa); }
  ~ScopedIsa() { set_active_isa(saved); }
};

void expect_prefill_matches_one_token_kernel() {
  struct Case {
    DType type;
    int32_t kv_heads, group, head_dim, first_pos, n_tokens;
  };
  const Case cases[] = {{DType::F32, 2, 1, 64, 0, 70},  {DType::F16, 1, 6, 64, 0, 45},  {DType::Q8_0, 2, 3, 32, 37, 20},
                        {DType::F16, 1, 2, 96, 5, 33},  {DType::F32, 1, 4, 128, 0, 9},  {DType::F16, 1, 1, 256, 60, 3},
                        {DType::F32, 1, 6, 64, 100, 1}};
  for (const Case& c : cases) {
    const Shape shape{c.kv_heads, c.group, c.head_dim, c.first_pos + c.n_tokens};
    SCOPED_TRACE(std::string(dtype_name(c.type)) + " group " + std::to_string(c.group) + " head_dim " +
                 std::to_string(c.head_dim) + " tokens " + std::to_string(c.first_pos) + "+" + std::to_string(c.n_tokens));
    PagedKvFixture f(c.type, shape, 16, 7);
    const int64_t stride = int64_t(c.kv_heads) * c.group * c.head_dim;
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> q(size_t(stride * c.n_tokens)), want(q.size()), got(q.size(), NAN);
    for (auto& x : q) x = normal(rng);
    const float scale = 1.0f / std::sqrt(float(c.head_dim));
    for (int32_t h = 0; h < c.kv_heads; ++h) {
      for (int32_t t = 0; t < c.n_tokens; ++t) {
        AttentionQuery a;
        a.q = q.data() + t * stride + h * c.group * c.head_dim;
        a.out = want.data() + t * stride + h * c.group * c.head_dim;
        a.group = c.group;
        a.head_dim = c.head_dim;
        a.kv_head = h;
        a.end = c.first_pos + t + 1;
        a.scale = scale;
        paged_attention(f.view(), a);
      }
      PrefillAttention p;
      p.q = q.data();
      p.out = got.data();
      p.q_stride = stride;
      p.n_tokens = c.n_tokens;
      p.first_pos = c.first_pos;
      p.group = c.group;
      p.head_dim = c.head_dim;
      p.kv_head = h;
      p.scale = scale;
      ASSERT_TRUE(prefill_attention_fits(c.head_dim));
      prefill_attention(f.view(), p);
    }
    for (size_t i = 0; i < q.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-2) << "element " << i;
  }
}

TEST(PagedAttention, PrefillOnAmxTilesMatchesOneTokenKernel) {
  if (!isa_supported(Isa::Amx)) GTEST_SKIP() << "this CPU lacks amx";
  ScopedIsa isa(Isa::Amx);
  expect_prefill_matches_one_token_kernel();
}

TEST(PagedAttention, PrefillOnBf16VectorsMatchesOneTokenKernel) {
  if (!isa_supported(Isa::Avx512) || !has_avx512_bf16()) GTEST_SKIP() << "this CPU lacks avx512bf16";
  ScopedIsa isa(Isa::Avx512);
  expect_prefill_matches_one_token_kernel();
}

TEST(PagedAttention, ConversionsMatchReferenceBitForBit) {
  if (!isa_supported(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks avx2";
  std::mt19937_64 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> x(96), a(96), b(96);
  for (auto& v : x) v = normal(rng);
  x[5] = 1e-6f;  // an F16 subnormal
  x[6] = 70000.0f;  // overflows F16
  // A Q8_0 block whose scale is 1: halves are ties, which round away from zero.
  for (int i = 32; i < 64; ++i) x[size_t(i)] = float(i - 48) + 0.5f;
  x[33] = 127.0f;
  const Isa saved = active_isa();
  for (DType type : {DType::F16, DType::Q8_0}) {
    std::vector<uint8_t> fast(row_bytes(type, 96)), ref(fast.size());
    set_active_isa(Isa::Avx2);
    kv_row_from_float(type, x.data(), fast.data(), 96);
    kv_row_to_float(type, fast.data(), a.data(), 96);
    quantize_row(type, x.data(), ref.data(), 96);
    dequantize_row(type, ref.data(), b.data(), 96);
    EXPECT_EQ(fast, ref) << dtype_name(type);
    EXPECT_EQ(a, b) << dtype_name(type);
  }
  set_active_isa(saved);
}

}  // namespace
}  // namespace parley
