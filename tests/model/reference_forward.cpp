#include "reference_forward.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "gguf/gguf.h"
#include "kernels/quant.h"

namespace parley::testing {
namespace {

using Vec = std::vector<double>;

struct Ref {
  std::unique_ptr<gguf::File> f;
  std::string arch;
  int dim = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, window = 0;
  int experts = 0, used = 0;  // mixture of experts
  bool norm_top_k = false;
  double eps = 0, base = 0;
  // Gemma: GeGLU, scaled embeddings, soft-caps (0 = none), local layers
  // (window_pattern) with their own rope base.
  bool gemma = false;
  int window_pattern = 1;
  double attn_cap = 0, final_cap = 0, local_base = 0;

  int window_of(int l) const { return window_pattern <= 1 || l % window_pattern < window_pattern - 1 ? window : 0; }
  bool local(int l) const { return local_base > 0 && window_of(l) > 0; }
  // Rope: rotated dims, per-frequency divisors (empty: none), the cos/sin
  // magnitude (LongRoPE), YaRN's factor (0: none) and original context.
  int rope_dim = 0;
  Vec factors;
  double mscale = 1, yarn = 0, orig_ctx = 0;
  static double cap(double x, double c) { return c > 0 ? c * std::tanh(x / c) : x; }

  bool has(const std::string& name) const { return f->find_tensor(name) != nullptr; }

  Vec tensor(const std::string& name) const {
    const auto* t = f->find_tensor(name);
    std::vector<float> tmp(t->n_elements());
    dequantize_row(t->type, t->data, tmp.data(), int64_t(tmp.size()));
    return Vec(tmp.begin(), tmp.end());
  }

  // y = W x, W stored as rows of x.size() elements.
  static Vec matvec(const Vec& w, const Vec& x) {
    Vec y(w.size() / x.size(), 0.0);
    for (size_t r = 0; r < y.size(); ++r)
      for (size_t c = 0; c < x.size(); ++c) y[r] += w[r * x.size() + c] * x[c];
    return y;
  }

  Vec rmsnorm(const Vec& x, const Vec& w, size_t off = 0, size_t n = 0) const {
    if (n == 0) n = x.size();
    double ss = 0;
    for (size_t i = 0; i < n; ++i) ss += x[off + i] * x[off + i];
    const double s = 1.0 / std::sqrt(ss / double(n) + eps);
    Vec y(x);
    for (size_t i = 0; i < n; ++i) y[off + i] = x[off + i] * s * w[i];
    return y;
  }

  static Vec swiglu(const Vec& gate, const Vec& up, const Vec& down, const Vec& x) {
    Vec g = matvec(gate, x);
    const Vec u = matvec(up, x);
    for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
    return matvec(down, g);
  }

  // Expert e of a 3-D tensor stored expert after expert.
  static Vec expert(const Vec& all, int n, int e) {
    const size_t size = all.size() / size_t(n);
    return Vec(all.begin() + long(size_t(e) * size), all.begin() + long(size_t(e + 1) * size));
  }

  // Softmax over the router logits; the top `used` experts, their
  // probabilities renormalised when norm_top_k; plus the sigmoid-gated
  // shared expert when the block has one.
  Vec moe_ffn(const std::map<std::string, Vec>& w, const std::string& p, const Vec& x) const {
    Vec prob = matvec(w.at(p + "ffn_gate_inp.weight"), x);
    const double mx = *std::max_element(prob.begin(), prob.end());
    double total = 0;
    for (double& v : prob) total += (v = std::exp(v - mx));
    for (double& v : prob) v /= total;
    std::vector<int> order(static_cast<size_t>(experts));
    for (int e = 0; e < experts; ++e) order[size_t(e)] = e;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return prob[size_t(a)] > prob[size_t(b)]; });
    double chosen = 0;
    for (int j = 0; j < used; ++j) chosen += prob[size_t(order[size_t(j)])];
    Vec y(x.size(), 0.0);
    for (int j = 0; j < used; ++j) {
      const int e = order[size_t(j)];
      const Vec d = swiglu(expert(w.at(p + "ffn_gate_exps.weight"), experts, e),
                           expert(w.at(p + "ffn_up_exps.weight"), experts, e),
                           expert(w.at(p + "ffn_down_exps.weight"), experts, e), x);
      const double weight = prob[size_t(e)] / (norm_top_k ? chosen : 1.0);
      for (size_t i = 0; i < y.size(); ++i) y[i] += weight * d[i];
    }
    if (w.count(p + "ffn_gate_inp_shexp.weight")) {
      const Vec& gate_inp = w.at(p + "ffn_gate_inp_shexp.weight");
      double g = 0;
      for (size_t i = 0; i < x.size(); ++i) g += gate_inp[i] * x[i];
      const Vec d = swiglu(w.at(p + "ffn_gate_shexp.weight"), w.at(p + "ffn_up_shexp.weight"),
                           w.at(p + "ffn_down_shexp.weight"), x);
      for (size_t i = 0; i < y.size(); ++i) y[i] += d[i] / (1.0 + std::exp(-g));
    }
    return y;
  }

  // Frequency i of a global layer: divided by the file's factors (Llama 3,
  // LongRoPE) and YaRN-interpolated; local layers (Gemma 3) use none of it.
  double frequency(int i, bool local) const {
    double freq = std::pow(local ? local_base : base, -2.0 * i / rope_dim);
    if (local) return freq;
    if (!factors.empty()) freq /= factors[size_t(i)];
    if (yarn > 0) {
      auto dim_of = [&](double rotations) {
        return rope_dim * std::log(orig_ctx / (rotations * 2 * M_PI)) / (2 * std::log(base));
      };
      const double low = std::max(0.0, std::floor(dim_of(32))), high = std::min(rope_dim - 1.0, std::ceil(dim_of(1)));
      const double ramp = 1 - std::clamp((i - low) / std::max(0.001, high - low), 0.0, 1.0);
      freq *= (1 - ramp) / yarn + ramp;
    }
    return freq;
  }

  void rope(Vec& v, int n_heads, int pos, bool local) const {
    const bool neox = arch != "llama";
    const int half = rope_dim / 2;
    const double m = local ? 1.0 : mscale * (yarn > 0 ? 1 + 0.1 * std::log(yarn) : 1.0);
    for (int h = 0; h < n_heads; ++h) {
      for (int i = 0; i < half; ++i) {
        const double theta = pos * frequency(i, local);
        const size_t a = size_t(h * head_dim + (neox ? i : 2 * i));
        const size_t b = a + size_t(neox ? half : 1);
        const double x0 = v[a], x1 = v[b];
        v[a] = m * (x0 * std::cos(theta) - x1 * std::sin(theta));
        v[b] = m * (x0 * std::sin(theta) + x1 * std::cos(theta));
      }
    }
  }
};

// W += scale * alpha / rank * B A for each lora_a / lora_b pair of the
// adapter file (A: rank rows of in, B: out rows of rank).
void merge_adapter(std::map<std::string, Vec>& w, const std::string& path, double scale) {
  Ref a;
  a.f = gguf::File::open(path);
  const double alpha = a.f->get_float("adapter.lora.alpha", 0.0);
  for (const auto& t : a.f->tensors()) {
    if (!t.name.ends_with(".lora_a")) continue;
    const std::string name = t.name.substr(0, t.name.size() - 7);
    const Vec A = a.tensor(t.name), B = a.tensor(name + ".lora_b");
    const size_t in = t.dims[0], rank = t.dims[1], out = B.size() / rank;
    const double s = scale * (alpha != 0 ? alpha / double(rank) : 1.0);
    Vec& m = w.at(name);
    for (size_t o = 0; o < out; ++o)
      for (size_t k = 0; k < rank; ++k)
        for (size_t i = 0; i < in; ++i) m[o * in + i] += s * B[o * rank + k] * A[k * in + i];
  }
}

}  // namespace

std::vector<std::vector<double>> reference_logits(const std::string& path, const std::vector<int>& tokens,
                                                  int context, const std::string& adapter, double adapter_scale) {
  Ref r;
  r.f = gguf::File::open(path);
  r.arch = r.f->get_string("general.architecture");
  const std::string a = r.arch + ".";
  r.dim = int(r.f->get_uint(a + "embedding_length"));
  r.layers = int(r.f->get_uint(a + "block_count"));
  r.heads = int(r.f->get_uint(a + "attention.head_count"));
  r.kv_heads = int(r.f->get_uint(a + "attention.head_count_kv"));
  r.head_dim = int(r.f->get_uint(a + "attention.key_length", uint64_t(r.dim / r.heads)));
  r.window = int(r.f->get_uint(a + "attention.sliding_window", 0));
  r.eps = r.f->get_float(a + "attention.layer_norm_rms_epsilon", 1e-5);
  r.base = r.f->get_float(a + "rope.freq_base", 10000.0);
  r.experts = int(r.f->get_uint(a + "expert_count", 0));
  r.used = int(r.f->get_uint(a + "expert_used_count", 0));
  // Mixtral ("llama") and Qwen3-MoE renormalise the top-k weights; Qwen2-MoE and OLMoE do not.
  r.norm_top_k = r.f->get_bool(a + "expert_weights_norm", r.arch == "llama" || r.arch == "qwen3moe");
  r.gemma = r.arch == "gemma2" || r.arch == "gemma3";
  r.window_pattern = int(r.f->get_uint(a + "attention.sliding_window_pattern",
                                       r.arch == "gemma2" ? 2 : r.arch == "gemma3" ? 6 : 1));
  r.local_base = r.arch == "gemma3" ? 10000.0 : 0.0;
  r.attn_cap = r.f->get_float(a + "attn_logit_softcapping", 0.0);
  r.final_cap = r.f->get_float(a + "final_logit_softcapping", 0.0);
  r.rope_dim = int(r.f->get_uint(a + "rope.dimension_count", uint64_t(r.head_dim)));
  const double train_ctx = double(r.f->get_uint(a + "context_length"));
  r.orig_ctx = double(r.f->get_uint(a + "rope.scaling.original_context_length", uint64_t(train_ctx)));
  r.mscale = r.f->get_float(a + "rope.scaling.attn_factor", 1.0);
  if (r.f->get_string(a + "rope.scaling.type", "none") == "yarn")
    r.yarn = r.f->get_float(a + "rope.scaling.factor", 1.0);
  const double ctx = context > 0 ? context : train_ctx;
  if (r.has("rope_freqs.weight")) r.factors = r.tensor("rope_freqs.weight");
  if (r.has("rope_factors_long.weight"))
    r.factors = r.tensor(ctx > r.orig_ctx ? "rope_factors_long.weight" : "rope_factors_short.weight");

  const Vec embd = r.tensor("token_embd.weight");
  std::map<std::string, Vec> w;
  for (const auto& t : r.f->tensors()) w[t.name] = r.tensor(t.name);
  if (!adapter.empty()) merge_adapter(w, adapter, adapter_scale);
  const Vec out_w = r.has("output.weight") ? w.at("output.weight") : embd;
  // Phi-3's fused tensors, as the separate matrices: rows of Q, K, V; of gate, up.
  const size_t qd = size_t(r.heads * r.head_dim), kd = size_t(r.kv_heads * r.head_dim), dim = size_t(r.dim);
  for (int l = 0; l < r.layers && r.has("blk.0.attn_qkv.weight"); ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    const Vec qkv = w.at(p + "attn_qkv.weight"), up = w.at(p + "ffn_up.weight");
    auto rows = [&](const Vec& m, size_t first, size_t n) {
      return Vec(m.begin() + long(first * dim), m.begin() + long((first + n) * dim));
    };
    w[p + "attn_q.weight"] = rows(qkv, 0, qd);
    w[p + "attn_k.weight"] = rows(qkv, qd, kd);
    w[p + "attn_v.weight"] = rows(qkv, qd + kd, kd);
    w[p + "ffn_gate.weight"] = rows(up, 0, up.size() / dim / 2);
    w[p + "ffn_up.weight"] = rows(up, up.size() / dim / 2, up.size() / dim / 2);
  }
  auto W = [&](int l, const std::string& n) -> const Vec& { return w.at("blk." + std::to_string(l) + "." + n); };

  const size_t kvd = size_t(r.kv_heads * r.head_dim);
  std::vector<std::vector<Vec>> keys(size_t(r.layers)), values(size_t(r.layers));
  std::vector<std::vector<double>> result;
  for (size_t p = 0; p < tokens.size(); ++p) {
    Vec x(embd.begin() + long(size_t(tokens[p]) * size_t(r.dim)), embd.begin() + long(size_t(tokens[p] + 1) * size_t(r.dim)));
    if (r.gemma)
      for (auto& e : x) e *= std::sqrt(double(r.dim));
    for (int l = 0; l < r.layers; ++l) {
      const Vec xn = r.rmsnorm(x, W(l, "attn_norm.weight"));
      Vec q = Ref::matvec(W(l, "attn_q.weight"), xn), k = Ref::matvec(W(l, "attn_k.weight"), xn),
          v = Ref::matvec(W(l, "attn_v.weight"), xn);
      if (r.has("blk.0.attn_q.bias")) {
        for (size_t i = 0; i < q.size(); ++i) q[i] += W(l, "attn_q.bias")[i];
        for (size_t i = 0; i < kvd; ++i) k[i] += W(l, "attn_k.bias")[i], v[i] += W(l, "attn_v.bias")[i];
      }
      if (r.has("blk.0.attn_q_norm.weight")) {
        // Per head (Qwen3), or over the whole row when the norm is that wide (OLMoE).
        const size_t qw = W(l, "attn_q_norm.weight").size(), kw = W(l, "attn_k_norm.weight").size();
        for (size_t o = 0; o < q.size(); o += qw) q = r.rmsnorm(q, W(l, "attn_q_norm.weight"), o, qw);
        for (size_t o = 0; o < k.size(); o += kw) k = r.rmsnorm(k, W(l, "attn_k_norm.weight"), o, kw);
      }
      r.rope(q, r.heads, int(p), r.local(l));
      r.rope(k, r.kv_heads, int(p), r.local(l));
      keys[size_t(l)].push_back(k);
      values[size_t(l)].push_back(v);
      Vec att(q.size(), 0.0);
      for (int h = 0; h < r.heads; ++h) {
        const size_t kh = size_t(h / (r.heads / r.kv_heads)) * size_t(r.head_dim);
        const size_t window = size_t(r.window_of(l));
        const size_t first = window > 0 && p + 1 > window ? p + 1 - window : 0;
        Vec s;
        double mx = -1e300;
        for (size_t j = first; j <= p; ++j) {
          double d = 0;
          for (int i = 0; i < r.head_dim; ++i) d += q[size_t(h * r.head_dim + i)] * keys[size_t(l)][j][kh + size_t(i)];
          s.push_back(Ref::cap(d / std::sqrt(double(r.head_dim)), r.attn_cap));
          mx = std::max(mx, s.back());
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (size_t j = first; j <= p; ++j)
          for (int i = 0; i < r.head_dim; ++i)
            att[size_t(h * r.head_dim + i)] += s[j - first] / sum * values[size_t(l)][j][kh + size_t(i)];
      }
      Vec o = Ref::matvec(W(l, "attn_output.weight"), att);
      if (r.has("blk.0.post_attention_norm.weight")) o = r.rmsnorm(o, W(l, "post_attention_norm.weight"));
      for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      const Vec xf = r.rmsnorm(x, W(l, "ffn_norm.weight"));
      Vec d;
      if (r.experts > 0) {
        d = r.moe_ffn(w, "blk." + std::to_string(l) + ".", xf);
      } else {
        Vec g = Ref::matvec(W(l, "ffn_gate.weight"), xf);
        const Vec u = Ref::matvec(W(l, "ffn_up.weight"), xf);
        for (size_t i = 0; i < g.size(); ++i) {
          const double inner = std::sqrt(2.0 / M_PI) * (g[i] + 0.044715 * std::pow(g[i], 3));
          const double gelu = 0.5 * g[i] * (1.0 + std::tanh(inner));
          g[i] = (r.gemma ? gelu : g[i] / (1.0 + std::exp(-g[i]))) * u[i];
        }
        d = Ref::matvec(W(l, "ffn_down.weight"), g);
      }
      if (r.has("blk.0.post_ffw_norm.weight")) d = r.rmsnorm(d, W(l, "post_ffw_norm.weight"));
      for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
    }
    Vec logits = Ref::matvec(out_w, r.rmsnorm(x, w.at("output_norm.weight")));
    for (auto& e : logits) e = Ref::cap(e, r.final_cap);
    result.push_back(logits);
  }
  return result;
}

}  // namespace parley::testing
