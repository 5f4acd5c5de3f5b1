// matmul_shared(): several matrices over the same activations give exactly
// what separate matmul() calls give, packed or not, whatever way the stacked
// rows are split over the threads; mixed types fall back to separate calls.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/quant.h"
#include "util/aligned_bytes.h"

namespace parley {
namespace {

struct Weights {
  std::vector<uint8_t> bytes;
  std::unique_ptr<AlignedBytes> packed;
  MatrixView view;
};

Weights random_matrix(DType type, int64_t rows, int64_t cols, bool pack, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> src(static_cast<size_t>(cols));
  Weights w;
  const uint64_t rb = row_bytes(type, uint64_t(cols));
  w.bytes.resize(rb * uint64_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : src) v = normal(rng);
    quantize_row(type, src.data(), w.bytes.data() + r * rb, cols);
  }
  w.view = MatrixView{type, rows, cols, w.bytes.data()};
  if (pack && packing_helps(w.view)) {
    w.packed = std::make_unique<AlignedBytes>(packed_bytes(w.view));
    pack_matrix(w.view, w.packed->data());
    w.view.packed = w.packed->data();
  }
  return w;
}

void expect_same_as_separate(const std::vector<DType>& types, int64_t cols, int64_t n_tokens, bool pack,
                             ThreadPool& pool) {
  std::mt19937 rng(unsigned(cols * 31 + n_tokens));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t rows[] = {17, 48, 33, 5};
  std::vector<Weights> ws;
  for (size_t i = 0; i < types.size(); ++i) ws.push_back(random_matrix(types[i], rows[i], cols, pack, rng));
  std::vector<float> x(size_t(n_tokens * cols));
  for (auto& v : x) v = normal(rng);
  std::vector<std::vector<float>> want(ws.size()), got(ws.size());
  std::vector<MatmulOutput> outs;
  for (size_t i = 0; i < ws.size(); ++i) {
    want[i].assign(size_t(ws[i].view.rows * n_tokens), 0.0f);
    got[i].assign(want[i].size(), -1.0f);
    matmul(ws[i].view, x.data(), want[i].data(), n_tokens, pool);
    outs.push_back({&ws[i].view, got[i].data()});
  }
  matmul_shared(outs, x.data(), n_tokens, pool);
  for (size_t i = 0; i < ws.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << "matrix " << i << " of " << ws.size() << ", " << cols << " columns, " << n_tokens
                               << " tokens, " << pool.size() << " threads" << (pack ? ", packed" : "");
}

TEST(MatmulShared, GivesWhatSeparateCallsGive) {
  ThreadPool one(1), three(3);
  for (ThreadPool* pool : {&one, &three})
    for (const bool pack : {false, true})
      for (const int64_t n : {1, 2, 7, 40}) {
        expect_same_as_separate({DType::Q8_0, DType::Q8_0, DType::Q8_0}, 96, n, pack, *pool);
        expect_same_as_separate({DType::Q4_0, DType::Q4_0}, 256, n, pack, *pool);
        expect_same_as_separate({DType::F32, DType::F32, DType::F32, DType::F32}, 64, n, pack, *pool);
        expect_same_as_separate({DType::Q4_K, DType::Q4_K}, 256, n, pack, *pool);
        expect_same_as_separate({DType::Q8_0, DType::Q4_0, DType::Q8_0}, 128, n, pack, *pool);  // mixed
        expect_same_as_separate({DType::Q3_K, DType::Q3_K, DType::Q5_K}, 256, n, pack, *pool);  // Q3_K_M's Q, K, V
        expect_same_as_separate({DType::IQ4_NL, DType::IQ4_NL}, 96, n, pack, *pool);
      }
}

TEST(MatmulShared, RefusesMoreThanFourMatrices) {
  ThreadPool pool(1);
  const MatrixView w{DType::F32, 1, 1, nullptr};
  float y[5];
  const float x = 1.0f;
  const MatmulOutput outs[] = {{&w, y}, {&w, y + 1}, {&w, y + 2}, {&w, y + 3}, {&w, y + 4}};
  EXPECT_THROW(matmul_shared(outs, &x, 1, pool), std::exception);
}

}  // namespace
}  // namespace parley
