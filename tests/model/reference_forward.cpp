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

  void rope(Vec& v, int n_heads, int pos) const {
    const bool neox = arch != "llama";
    const int half = head_dim / 2;
    Vec freqs_div(size_t(half), 1.0);
    if (has("rope_freqs.weight")) freqs_div = tensor("rope_freqs.weight");
    for (int h = 0; h < n_heads; ++h) {
      for (int i = 0; i < half; ++i) {
        const double theta = pos * std::pow(base, -2.0 * i / head_dim) / freqs_div[size_t(i)];
        const size_t a = size_t(h * head_dim + (neox ? i : 2 * i));
        const size_t b = a + size_t(neox ? half : 1);
        const double x0 = v[a], x1 = v[b];
        v[a] = x0 * std::cos(theta) - x1 * std::sin(theta);
        v[b] = x0 * std::sin(theta) + x1 * std::cos(theta);
      }
    }
  }
};

}  // namespace

std::vector<std::vector<double>> reference_logits(const std::string& path, const std::vector<int>& tokens) {
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

  const Vec embd = r.tensor("token_embd.weight");
  const Vec out_w = r.has("output.weight") ? r.tensor("output.weight") : embd;
  std::map<std::string, Vec> w;
  for (const auto& t : r.f->tensors()) w[t.name] = r.tensor(t.name);
  auto W = [&](int l, const std::string& n) -> const Vec& { return w.at("blk." + std::to_string(l) + "." + n); };

  const size_t kvd = size_t(r.kv_heads * r.head_dim);
  std::vector<std::vector<Vec>> keys(size_t(r.layers)), values(size_t(r.layers));
  std::vector<std::vector<double>> result;
  for (size_t p = 0; p < tokens.size(); ++p) {
    Vec x(embd.begin() + long(size_t(tokens[p]) * size_t(r.dim)), embd.begin() + long(size_t(tokens[p] + 1) * size_t(r.dim)));
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
      r.rope(q, r.heads, int(p));
      r.rope(k, r.kv_heads, int(p));
      keys[size_t(l)].push_back(k);
      values[size_t(l)].push_back(v);
      Vec att(q.size(), 0.0);
      for (int h = 0; h < r.heads; ++h) {
        const size_t kh = size_t(h / (r.heads / r.kv_heads)) * size_t(r.head_dim);
        const size_t first = r.window > 0 && p + 1 > size_t(r.window) ? p + 1 - size_t(r.window) : 0;
        Vec s;
        double mx = -1e300;
        for (size_t j = first; j <= p; ++j) {
          double d = 0;
          for (int i = 0; i < r.head_dim; ++i) d += q[size_t(h * r.head_dim + i)] * keys[size_t(l)][j][kh + size_t(i)];
          s.push_back(d / std::sqrt(double(r.head_dim)));
          mx = std::max(mx, s.back());
        }
        double sum = 0;
        for (auto& e : s) sum += (e = std::exp(e - mx));
        for (size_t j = first; j <= p; ++j)
          for (int i = 0; i < r.head_dim; ++i)
            att[size_t(h * r.head_dim + i)] += s[j - first] / sum * values[size_t(l)][j][kh + size_t(i)];
      }
      const Vec o = Ref::matvec(W(l, "attn_output.weight"), att);
      for (size_t i = 0; i < x.size(); ++i) x[i] += o[i];
      const Vec xf = r.rmsnorm(x, W(l, "ffn_norm.weight"));
      const Vec d = r.experts > 0 ? r.moe_ffn(w, "blk." + std::to_string(l) + ".", xf)
                                  : Ref::swiglu(W(l, "ffn_gate.weight"), W(l, "ffn_up.weight"), W(l, "ffn_down.weight"), xf);
      for (size_t i = 0; i < x.size(); ++i) x[i] += d[i];
    }
    result.push_back(Ref::matvec(out_w, r.rmsnorm(x, w.at("output_norm.weight"))));
  }
  return result;
}

}  // namespace parley::testing
