// Model::load_llama2c: karpathy/llama2.c checkpoints (.bin). A header of seven
// int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
// a negative vocab_size means a separate classifier follows), then F32 arrays.
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

struct Header {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

// Hands out consecutive float arrays of the checkpoint, checking the file size.
class Cursor {
 public:
  Cursor(const MappedFile& f, uint64_t offset) : f_(f), offset_(offset) {}
  const float* take(const char* what, uint64_t n_floats) {
    const uint64_t bytes = n_floats * 4;
    if (n_floats > (uint64_t(1) << 40) || offset_ + bytes > f_.size())
      throw Error(f_.path() + ": truncated llama2.c checkpoint: " + what + " needs " +
                  std::to_string(bytes) + " bytes at offset " + std::to_string(offset_) +
                  ", file has " + std::to_string(f_.size()));
    const float* p = reinterpret_cast<const float*>(f_.data() + offset_);
    offset_ += bytes;
    return p;
  }
  uint64_t offset() const { return offset_; }

 private:
  const MappedFile& f_;
  uint64_t offset_;
};

ModelConfig config_from_header(const Header& h, const std::string& path) {
  ModelConfig c;
  c.arch = "llama";
  c.dim = h.dim;
  c.ffn_dim = h.hidden_dim;
  c.n_layers = h.n_layers;
  c.n_heads = h.n_heads;
  c.n_kv_heads = h.n_kv_heads;
  c.vocab_size = h.vocab_size < 0 ? -h.vocab_size : h.vocab_size;
  c.context_length = h.seq_len;
  c.head_dim = h.n_heads > 0 ? h.dim / h.n_heads : 0;
  c.rope_dim = c.head_dim;
  c.norm_eps = 1e-5f;
  c.tied_output = h.vocab_size > 0;
  if (h.n_heads > 0 && h.dim % h.n_heads != 0)
    throw Error(path + ": dim " + std::to_string(h.dim) + " is not a multiple of n_heads " +
                std::to_string(h.n_heads));
  c.validate(path);
  return c;
}

// `tokenizer_path`, else "tokenizer.bin" or tok<vocab_size>.bin beside the checkpoint.
Tokenizer llama2c_tokenizer(const std::string& model_path, const std::string& tokenizer_path, int32_t vocab_size) {
  std::string path = tokenizer_path;
  if (path.empty()) {
    const auto dir = std::filesystem::path(model_path).parent_path();
    const auto plain = dir / "tokenizer.bin";
    const auto numbered = dir / ("tok" + std::to_string(vocab_size) + ".bin");
    path = (std::filesystem::exists(plain) ? plain : numbered).string();
  }
  return Tokenizer(load_llama2c_vocab(path, vocab_size));
}

MatrixView f32_matrix(const float* p, int64_t rows, int64_t cols) {
  return MatrixView{DType::F32, rows, cols, p};
}

}  // namespace

void Model::load_llama2c(const std::string& path, const std::string& tokenizer_path) {
  map_ = std::make_unique<MappedFile>(path);
  if (map_->size() < sizeof(Header))
    throw Error(path + ": not a GGUF file and too small for a llama2.c checkpoint header (28 bytes)");
  Header h;
  std::memcpy(&h, map_->data(), sizeof(h));
  config_ = config_from_header(h, path);
  const ModelConfig& c = config_;
  const uint64_t dim = uint64_t(c.dim), L = uint64_t(c.n_layers), kvd = uint64_t(c.kv_dim()),
                 ffn = uint64_t(c.ffn_dim), vocab = uint64_t(c.vocab_size);
  Cursor cur(*map_, sizeof(Header));
  const float* embd = cur.take("token_embedding_table", vocab * dim);
  const float* rms_att = cur.take("rms_att_weight", L * dim);
  const float* wq = cur.take("wq", L * dim * dim);
  const float* wk = cur.take("wk", L * dim * kvd);
  const float* wv = cur.take("wv", L * dim * kvd);
  const float* wo = cur.take("wo", L * dim * dim);
  const float* rms_ffn = cur.take("rms_ffn_weight", L * dim);
  const float* w1 = cur.take("w1", L * dim * ffn);
  const float* w2 = cur.take("w2", L * ffn * dim);
  const float* w3 = cur.take("w3", L * dim * ffn);
  const float* rms_final = cur.take("rms_final_weight", dim);
  const uint64_t freq_cis = uint64_t(c.context_length) * uint64_t(c.head_dim) / 2;
  cur.take("freq_cis_real", freq_cis);  // unused: RoPE is computed
  cur.take("freq_cis_imag", freq_cis);
  const float* wcls = c.tied_output ? embd : cur.take("wcls", vocab * dim);
  if (cur.offset() != map_->size())
    throw Error(path + ": llama2.c checkpoint has " + std::to_string(map_->size() - cur.offset()) +
                " unexpected trailing bytes (header or shapes do not match the file)");

  weights_.token_embd = f32_matrix(embd, c.vocab_size, c.dim);
  weights_.output = f32_matrix(wcls, c.vocab_size, c.dim);
  weights_.output_norm = rms_final;
  for (uint64_t l = 0; l < L; ++l) {
    LayerWeights lw;
    lw.attn_norm = rms_att + l * dim;
    lw.wq = f32_matrix(wq + l * dim * dim, c.dim, c.dim);
    lw.wk = f32_matrix(wk + l * dim * kvd, c.kv_dim(), c.dim);
    lw.wv = f32_matrix(wv + l * dim * kvd, c.kv_dim(), c.dim);
    lw.wo = f32_matrix(wo + l * dim * dim, c.dim, c.dim);
    lw.ffn_norm = rms_ffn + l * dim;
    lw.w_gate = f32_matrix(w1 + l * dim * ffn, c.ffn_dim, c.dim);
    lw.w_down = f32_matrix(w2 + l * ffn * dim, c.dim, c.ffn_dim);
    lw.w_up = f32_matrix(w3 + l * dim * ffn, c.ffn_dim, c.dim);
    weights_.layers.push_back(lw);
  }
  weight_bytes_ = map_->size() - sizeof(Header) - 2 * freq_cis * 4;
  n_params_ = weight_bytes_ / 4;
  tokenizer_ = std::make_unique<Tokenizer>(llama2c_tokenizer(path, tokenizer_path, c.vocab_size));
}

Tokenizer Model::load_llama2c_tokenizer(const std::string& path, const std::string& tokenizer_path) {
  std::ifstream in(path, std::ios::binary);
  Header h;
  if (!in.read(reinterpret_cast<char*>(&h), sizeof(h)))
    throw Error(path + ": not a GGUF file and too small for a llama2.c checkpoint header (28 bytes)");
  // A negative vocab_size only says that a separate classifier follows.
  const int32_t vocab_size = h.vocab_size == INT32_MIN ? 0 : (h.vocab_size < 0 ? -h.vocab_size : h.vocab_size);
  return llama2c_tokenizer(path, tokenizer_path, vocab_size);
}

}  // namespace parley
