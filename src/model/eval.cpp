#include "model/eval.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "model/sequence_forward.h"
#include "util/error.h"

namespace parley {
namespace {

// Calls fn(first, n) for each window; windows share their boundary token.
void for_each_window(const std::vector<int32_t>& tokens, int32_t window,
                     const std::function<void(const int32_t*, int32_t)>& fn) {
  if (window < 2) throw Error("eval: the window must hold at least 2 tokens");
  for (size_t start = 0; start + 1 < tokens.size(); start += size_t(window - 1)) {
    const auto n = int32_t(std::min<size_t>(size_t(window), tokens.size() - start));
    fn(tokens.data() + start, n);
  }
}

int32_t resolve_window(const Model& m, int32_t window) {
  const int32_t ctx = m.config().context_length;
  return window <= 0 ? ctx : std::min(window, ctx);
}

// log-softmax of `n` logits into `out`.
void log_softmax(const float* logits, int32_t n, std::vector<double>& out) {
  out.resize(size_t(n));
  const float mx = *std::max_element(logits, logits + n);
  double sum = 0;
  for (int32_t i = 0; i < n; ++i) sum += std::exp(double(logits[i] - mx));
  const double log_sum = std::log(sum) + mx;
  for (int32_t i = 0; i < n; ++i) out[size_t(i)] = double(logits[i]) - log_sum;
}

// All positions' logits of one window (n x vocab).
const std::vector<float>& window_logits(SequenceForward& f, const int32_t* first, int32_t n, int32_t vocab,
                                        std::vector<float>& buf) {
  buf.resize(size_t(n) * size_t(vocab));
  f.reset();
  f.eval(first, n, buf.data());
  return buf;
}

double cosine(const float* a, const float* b, int32_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (int32_t i = 0; i < n; ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0.0;
}

}  // namespace

double PerplexityResult::perplexity() const { return tokens > 0 ? std::exp(nll / double(tokens)) : 0.0; }

PerplexityResult perplexity(const Model& model, const std::vector<int32_t>& tokens, int32_t window,
                            ThreadPool& pool, LoraUse lora) {
  window = resolve_window(model, window);
  const int32_t vocab = model.config().vocab_size;
  SequenceForward f(model, pool, window);
  f.set_lora(lora.adapter, lora.scale);
  std::vector<float> buf;
  std::vector<double> lp;
  PerplexityResult r;
  for_each_window(tokens, window, [&](const int32_t* first, int32_t n) {
    const auto& logits = window_logits(f, first, n, vocab, buf);
    for (int32_t i = 0; i + 1 < n; ++i) {
      log_softmax(logits.data() + size_t(i) * size_t(vocab), vocab, lp);
      r.nll -= lp[size_t(first[i + 1])];
      ++r.tokens;
    }
  });
  return r;
}

CompareResult compare_models(const Model& ref, const Model& test, const std::vector<int32_t>& tokens,
                             int32_t window, ThreadPool& pool) {
  const int32_t vocab = ref.config().vocab_size;
  if (test.config().vocab_size != vocab)
    throw Error("eval --compare: the models' vocabularies differ (" + std::to_string(vocab) + " and " +
                std::to_string(test.config().vocab_size) + " tokens)");
  window = std::min(resolve_window(ref, window), resolve_window(test, window));
  SequenceForward fr(ref, pool, window), ft(test, pool, window);
  std::vector<float> br, bt;
  std::vector<double> lr, lt;
  CompareResult c;
  double kl_sum = 0, cos_sum = 0;
  int64_t agree = 0;
  for_each_window(tokens, window, [&](const int32_t* first, int32_t n) {
    const auto& a = window_logits(fr, first, n, vocab, br);
    const auto& b = window_logits(ft, first, n, vocab, bt);
    for (int32_t i = 0; i + 1 < n; ++i) {
      const float* ra = a.data() + size_t(i) * size_t(vocab);
      const float* tb = b.data() + size_t(i) * size_t(vocab);
      log_softmax(ra, vocab, lr);
      log_softmax(tb, vocab, lt);
      double kl = 0;
      for (int32_t v = 0; v < vocab; ++v) kl += std::exp(lr[size_t(v)]) * (lr[size_t(v)] - lt[size_t(v)]);
      kl_sum += kl;
      c.kl_max = std::max(c.kl_max, kl);
      cos_sum += cosine(ra, tb, vocab);
      agree += std::max_element(ra, ra + vocab) - ra == std::max_element(tb, tb + vocab) - tb;
      const auto next = size_t(first[i + 1]);
      c.ref.nll -= lr[next];
      c.test.nll -= lt[next];
      ++c.tokens;
    }
  });
  c.ref.tokens = c.test.tokens = c.tokens;
  if (c.tokens > 0) {
    c.kl_mean = kl_sum / double(c.tokens);
    c.cosine_mean = cos_sum / double(c.tokens);
    c.top1_agreement = double(agree) / double(c.tokens);
  }
  return c;
}

}  // namespace parley
