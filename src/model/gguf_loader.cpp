// Model::load_gguf: binds GGUF tensors (llama.cpp naming) to the weights of
// the one forward pass, checking every shape against the configuration.
#include <initializer_list>
#include <string>
#include <utility>

#include "kernels/quant.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

std::string shape_str(const std::vector<uint64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

class Binder {
 public:
  Binder(const gguf::File& f, Weights& w) : f_(f), w_(w) {}

  const gguf::TensorInfo* find(const std::string& name) const { return f_.find_tensor(name); }

  const gguf::TensorInfo& require(const std::string& name, std::vector<uint64_t> shape) const {
    const auto* t = f_.find_tensor(name);
    if (!t) throw Error(f_.path() + ": missing tensor '" + name + "' (expected shape " + shape_str(shape) + ")");
    if (t->dims != shape)
      throw Error(f_.path() + ": tensor '" + name + "' has shape " + shape_str(t->dims) +
                  ", expected " + shape_str(shape));
    return *t;
  }

  MatrixView matrix(const std::string& name, uint64_t cols, uint64_t rows) {
    return view(require(name, {cols, rows}));
  }

  // Expert e's matrix of `stem`: the e-th rows x cols slice of the 3-D
  // [cols, rows, n] tensor STEM_exps, or, in files from llama.cpp's converter
  // before it stacked the experts (early Mixtral downloads), the 2-D tensor
  // STEM.e of each expert.
  std::vector<MatrixView> experts(const std::string& stem, uint64_t cols, uint64_t rows, uint64_t n) {
    std::vector<MatrixView> out;
    if (!find(stem + "_exps.weight") && find(stem + ".0.weight")) {
      for (uint64_t e = 0; e < n; ++e) out.push_back(matrix(stem + "." + std::to_string(e) + ".weight", cols, rows));
      return out;
    }
    const gguf::TensorInfo& t = require(stem + "_exps.weight", {cols, rows, n});
    const uint64_t bytes = row_bytes(t.type, cols) * rows;
    for (uint64_t e = 0; e < n; ++e)
      out.push_back({t.type, int64_t(rows), int64_t(cols), static_cast<const uint8_t*>(t.data) + e * bytes});
    return out;
  }

  // A vector llama.cpp's converter may also write as a [n, 1] matrix.
  const float* vector_or_column(const std::string& name, uint64_t n) {
    const auto* t = f_.find_tensor(name);
    return t && t->dims == std::vector<uint64_t>{n, 1} ? to_floats(*t) : vector(name, n);
  }

  static MatrixView view(const gguf::TensorInfo& t) {
    return MatrixView{t.type, int64_t(t.dims[1]), int64_t(t.dims[0]), t.data};
  }

  // A fused tensor's consecutive row ranges as matrices of their own, in the
  // mapped file (no copy): Phi-3's attn_qkv and gate/up ffn_up.
  void split(const std::string& name, uint64_t cols, std::initializer_list<std::pair<MatrixView*, uint64_t>> parts) {
    uint64_t rows = 0;
    for (const auto& part : parts) rows += part.second;
    const MatrixView whole = matrix(name, cols, rows);
    const uint64_t bytes = row_bytes(whole.type, cols);
    uint64_t first = 0;
    for (const auto& [out, n] : parts) {
      *out = MatrixView{whole.type, int64_t(n), int64_t(cols), static_cast<const uint8_t*>(whole.data) + first * bytes};
      first += n;
    }
  }

  const float* vector(const std::string& name, uint64_t n) { return to_floats(require(name, {n})); }

  const float* optional_vector(const std::string& name, uint64_t n) {
    return find(name) ? vector(name, n) : nullptr;
  }

 private:
  const float* to_floats(const gguf::TensorInfo& t) {
    std::vector<float> v(t.n_elements());
    dequantize_row(t.type, t.data, v.data(), int64_t(v.size()));
    return w_.keep(std::move(v));
  }

  const gguf::File& f_;
  Weights& w_;
};

MoeWeights bind_moe(Binder& b, const ModelConfig& c, const std::string& p) {
  const MoeConfig& m = c.moe;
  const uint64_t dim = uint64_t(c.dim), ffn = uint64_t(m.expert_ffn_dim), n = uint64_t(m.n_experts);
  MoeWeights w;
  w.router = b.matrix(p + "ffn_gate_inp.weight", dim, n);
  w.gate = b.experts(p + "ffn_gate", dim, ffn, n);
  w.up = b.experts(p + "ffn_up", dim, ffn, n);
  w.down = b.experts(p + "ffn_down", ffn, dim, n);
  if (m.shared_ffn_dim > 0) {
    const uint64_t sffn = uint64_t(m.shared_ffn_dim);
    w.shared_gate = b.matrix(p + "ffn_gate_shexp.weight", dim, sffn);
    w.shared_up = b.matrix(p + "ffn_up_shexp.weight", dim, sffn);
    w.shared_down = b.matrix(p + "ffn_down_shexp.weight", sffn, dim);
    w.shared_gate_inp = b.vector_or_column(p + "ffn_gate_inp_shexp.weight", dim);
  }
  return w;
}

}  // namespace

void Model::load_gguf(const std::string& path) {
  gguf_ = gguf::File::open(path);
  const gguf::File& f = *gguf_;
  config_ = config_from_gguf(f);
  ModelConfig& c = config_;
  Binder b(f, weights_);

  const auto* embd = f.find_tensor("token_embd.weight");
  if (!embd || embd->dims.size() != 2 || embd->dims[0] != uint64_t(c.dim))
    throw Error(path + ": tensor 'token_embd.weight' missing or not of shape [" + std::to_string(c.dim) + ", vocab]");
  c.vocab_size = int32_t(embd->dims[1]);
  c.validate(path);
  weights_.token_embd = Binder::view(*embd);
  weights_.output_norm = b.vector("output_norm.weight", uint64_t(c.dim));
  c.tied_output = b.find("output.weight") == nullptr;
  weights_.output = c.tied_output ? weights_.token_embd : b.matrix("output.weight", uint64_t(c.dim), uint64_t(c.vocab_size));
  weights_.rope_freqs = b.optional_vector("rope_freqs.weight", uint64_t(c.rope_dim / 2));
  weights_.rope_long = b.optional_vector("rope_factors_long.weight", uint64_t(c.rope_dim / 2));
  weights_.rope_short = b.optional_vector("rope_factors_short.weight", uint64_t(c.rope_dim / 2));

  c.qkv_bias = b.find("blk.0.attn_q.bias") != nullptr;
  const uint64_t dim = uint64_t(c.dim), qd = uint64_t(c.q_dim()), kvd = uint64_t(c.kv_dim()),
                 ffn = uint64_t(c.ffn_dim), hd = uint64_t(c.head_dim);
  const auto* q_norm = b.find("blk.0.attn_q_norm.weight");
  c.qk_norm_whole = c.qk_norm && q_norm && q_norm->dims == std::vector<uint64_t>{qd} && qd != hd;
  for (int32_t l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights L;
    L.attn_norm = b.vector(p + "attn_norm.weight", dim);
    if (c.fused) {
      b.split(p + "attn_qkv.weight", dim, {{&L.wq, qd}, {&L.wk, kvd}, {&L.wv, kvd}});
    } else {
      L.wq = b.matrix(p + "attn_q.weight", dim, qd);
      L.wk = b.matrix(p + "attn_k.weight", dim, kvd);
      L.wv = b.matrix(p + "attn_v.weight", dim, kvd);
    }
    L.wo = b.matrix(p + "attn_output.weight", qd, dim);
    if (c.qkv_bias) {
      L.bq = b.vector(p + "attn_q.bias", qd);
      L.bk = b.vector(p + "attn_k.bias", kvd);
      L.bv = b.vector(p + "attn_v.bias", kvd);
    }
    if (c.qk_norm) {
      L.q_norm = b.vector(p + "attn_q_norm.weight", c.qk_norm_whole ? qd : hd);
      L.k_norm = b.vector(p + "attn_k_norm.weight", c.qk_norm_whole ? kvd : hd);
    }
    L.ffn_norm = b.vector(p + "ffn_norm.weight", dim);
    if (c.moe.enabled()) {
      L.moe = bind_moe(b, c, p);
    } else {
      if (c.fused) {
        b.split(p + "ffn_up.weight", dim, {{&L.w_gate, ffn}, {&L.w_up, ffn}});
      } else {
        L.w_gate = b.matrix(p + "ffn_gate.weight", dim, ffn);
        L.w_up = b.matrix(p + "ffn_up.weight", dim, ffn);
      }
      L.w_down = b.matrix(p + "ffn_down.weight", ffn, dim);
    }
    if (c.post_norms) {
      L.post_attn_norm = b.vector(p + "post_attention_norm.weight", dim);
      L.post_ffn_norm = b.vector(p + "post_ffw_norm.weight", dim);
    }
    weights_.layers.push_back(std::move(L));
  }
  for (const auto& t : f.tensors()) {
    weight_bytes_ += t.n_bytes();
    n_params_ += t.n_elements();
  }
  tokenizer_ = std::make_unique<Tokenizer>(Tokenizer::from_gguf(f));
  if (tokenizer_->vocab().size() > c.vocab_size)
    throw Error(path + ": tokenizer has " + std::to_string(tokenizer_->vocab().size()) +
                " tokens but token_embd.weight only " + std::to_string(c.vocab_size) + " rows");
}

}  // namespace parley
