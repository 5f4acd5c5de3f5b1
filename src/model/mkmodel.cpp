#include "model/mkmodel.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "gguf/gguf.h"
#include "gguf/writer.h"
#include "kernels/quant.h"
#include "model/model_files.h"
#include "util/error.h"

namespace parley {
namespace {

struct Preset {
  const char* name;
  const char* arch;
  int32_t dim, n_layers, n_heads, n_kv_heads, ffn_dim, vocab_size, context_length;
  int32_t head_dim = 0;                // 0: dim / n_heads
  int32_t n_experts = 0, n_used = 0;   // mixture of experts: the block FFN is n_experts experts of ffn_dim
};

constexpr Preset kPresets[] = {
    {"llama-110m", "llama", 768, 12, 12, 12, 2048, 32000, 2048},
    {"llama-500m", "llama", 1536, 16, 24, 4, 4096, 32000, 2048},
    {"tinyllama-1.1b", "tinyllama", 2048, 22, 32, 4, 5632, 32000, 2048},
    {"llama3-8b", "llama3", 4096, 32, 32, 8, 14336, 128256, 8192},
    {"mistral-7b", "mistral", 4096, 32, 32, 8, 14336, 32000, 32768},
    {"qwen2-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768},
    {"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 151936, 40960},
    {"gemma2-2b", "gemma2", 2304, 26, 8, 4, 9216, 256000, 8192, 256},
    {"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 256},
    {"phi3-mini", "phi3", 3072, 32, 32, 32, 8192, 32064, 131072},
    {"mixtral-8x7b", "mixtral", 4096, 32, 32, 8, 14336, 32000, 32768, 128, 8, 2},
    {"qwen3moe-30b-a3b", "qwen3moe", 2048, 48, 32, 4, 768, 151936, 40960, 128, 128, 8},
    {"olmoe-1b-7b", "olmoe", 2048, 16, 16, 16, 1024, 50304, 4096, 128, 64, 8},
};

bool is_gemma(const std::string& arch) { return arch == "gemma2" || arch == "gemma3"; }

// Gemma 2's soft-caps, as its converter writes them (Gemma 3 has none).
void gemma_metadata(const MkModelSpec& s, gguf::Writer& w) {
  const std::string a = s.arch + ".";
  if (s.arch == "gemma2") {
    w.set(a + "attn_logit_softcapping", gguf::Value::f32(s.attn_softcap));
    w.set(a + "final_logit_softcapping", gguf::Value::f32(s.final_softcap));
  }
}

// Rope scaling keys beyond linear: YaRN's, or Phi-3's LongRoPE (the
// converter's attention factor sqrt(1 + ln(scale) / ln(original context))).
void rope_scaling_metadata(const MkModelSpec& s, const std::string& arch, gguf::Writer& w) {
  const std::string a = arch + ".";
  if (s.yarn_factor > 0.0f) {
    w.set(a + "rope.scaling.type", gguf::Value::str("yarn"));
    w.set(a + "rope.scaling.factor", gguf::Value::f32(s.yarn_factor));
    w.set(a + "rope.scaling.original_context_length", gguf::Value::u32(uint32_t(s.original_context)));
  } else if (arch == "phi3" && s.original_context < s.context_length) {
    const double scale = double(s.context_length) / s.original_context;
    w.set(a + "rope.scaling.attn_factor",
          gguf::Value::f32(float(std::sqrt(1.0 + std::log(scale) / std::log(double(s.original_context))))));
    w.set(a + "rope.scaling.original_context_length", gguf::Value::u32(uint32_t(s.original_context)));
  }
}

// LongRoPE divisors: short ones near 1, long ones rising to the context ratio.
std::vector<float> longrope_factors(const MkModelSpec& s, bool long_context) {
  std::vector<float> f(size_t(s.rope_dim / 2));
  const double top = long_context ? double(s.context_length) / s.original_context : 1.1;
  for (size_t i = 0; i < f.size(); ++i) f[i] = float(1.0 + (top - 1.0) * double(i) / double(f.size()));
  return f;
}

// Seeded values with a portable uniform conversion (identical on every libstdc++).
class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  float uniform(float scale) { return float((double(rng_() >> 11) * 0x1.0p-53 * 2.0 - 1.0) * scale); }

 private:
  std::mt19937_64 rng_;
};

std::vector<uint8_t> quantized(DType type, const std::vector<float>& v, uint64_t cols) {
  const uint64_t rows = v.size() / cols;
  std::vector<uint8_t> out(row_bytes(type, cols) * rows);
  for (uint64_t r = 0; r < rows; ++r)
    quantize_row(type, v.data() + r * cols, out.data() + r * row_bytes(type, cols), int64_t(cols));
  return out;
}

class ModelWriter {
 public:
  ModelWriter(const MkModelSpec& s, gguf::Writer& w) : s_(s), w_(w), rnd_(s.seed) {}

  // `experts` > 0: a 3-D tensor of that many rows x cols matrices.
  void matrix(const std::string& name, uint64_t cols, uint64_t rows, uint64_t experts = 0) {
    const uint64_t block = uint64_t(traits(s_.type).block_elems);
    if (cols % block != 0)
      throw Error("mkmodel: tensor '" + name + "' has " + std::to_string(cols) + " columns, not a multiple of " +
                  std::string(dtype_name(s_.type)) + "'s block size " + std::to_string(block));
    w_.add_tensor(name, s_.type, experts ? std::vector<uint64_t>{cols, rows, experts} : std::vector<uint64_t>{cols, rows},
                  quantized(s_.type, values(cols, rows * std::max<uint64_t>(experts, 1)), cols));
  }

  // The router stays F32, as llama.cpp's converter and quantizer keep it.
  void router(const std::string& name, uint64_t cols, uint64_t rows) {
    w_.add_tensor(name, DType::F32, {cols, rows}, quantized(DType::F32, values(cols, rows), cols));
  }

  void vector(const std::string& name, uint64_t n, float center, float spread) {
    std::vector<float> v(n);
    for (auto& x : v) x = center + rnd_.uniform(spread);
    w_.add_tensor(name, DType::F32, {n}, quantized(DType::F32, v, n));
  }

  void raw_vector(const std::string& name, const std::vector<float>& v) {
    w_.add_tensor(name, DType::F32, {uint64_t(v.size())}, quantized(DType::F32, v, v.size()));
  }

 private:
  std::vector<float> values(uint64_t cols, uint64_t rows) {
    std::vector<float> v(cols * rows);
    const float scale = float(std::sqrt(3.0 / double(cols)));  // unit variance outputs
    for (auto& x : v) x = rnd_.uniform(scale);
    return v;
  }

  const MkModelSpec& s_;
  gguf::Writer& w_;
  Random rnd_;
};

// Llama 3.1 rope scaling (factor 8, low/high frequency factors 1 and 4,
// original context 8192) expressed as per-frequency divisors.
std::vector<float> llama3_rope_freqs(int32_t rope_dim, double base) {
  const double factor = 8, low = 1, high = 4, orig = 8192;
  std::vector<float> f(size_t(rope_dim / 2));
  for (size_t i = 0; i < f.size(); ++i) {
    const double freq = std::pow(base, -2.0 * double(i) / rope_dim);
    const double wavelen = 2 * M_PI / freq;
    if (wavelen < orig / high) f[i] = 1.0f;
    else if (wavelen > orig / low) f[i] = float(factor);
    else {
      const double smooth = (orig / wavelen - low) / (high - low);
      f[i] = float(1.0 / ((1 - smooth) / factor + smooth));
    }
  }
  return f;
}

// Appends unused "<extra_N>" tokens so the vocabulary fills vocab_size rows.
void pad_vocab(gguf::Writer& w, const gguf::File& src, int32_t n_tokens, int32_t vocab_size) {
  auto tokens = src.find("tokenizer.ggml.tokens")->as_array();
  for (int32_t i = n_tokens; i < vocab_size; ++i)
    tokens.items.push_back(gguf::Value::str("<extra_" + std::to_string(i) + ">"));
  w.set("tokenizer.ggml.tokens", {gguf::ValueType::ARRAY, tokens});
  if (const auto* scores = src.find("tokenizer.ggml.scores")) {
    auto a = scores->as_array();
    a.items.resize(size_t(vocab_size), gguf::Value::f32(0.0f));
    w.set("tokenizer.ggml.scores", {gguf::ValueType::ARRAY, a});
  }
  if (const auto* types = src.find("tokenizer.ggml.token_type")) {
    auto a = types->as_array();
    a.items.resize(size_t(vocab_size), gguf::Value::i32(5));  // 5 = unused
    w.set("tokenizer.ggml.token_type", {gguf::ValueType::ARRAY, a});
  }
}

void copy_vocab(const MkModelSpec& s, gguf::Writer& w, int32_t& vocab_size) {
  auto src = gguf::File::open(s.vocab_from);
  int32_t n_tokens = 0;
  for (const auto& key : src->keys()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const gguf::Value& value = *src->find(key);
    if (key == "tokenizer.ggml.tokens") n_tokens = int32_t(value.as_array().items.size());
    w.set(key, value);
  }
  if (n_tokens == 0) throw Error(s.vocab_from + ": no tokenizer.ggml.tokens to copy");
  if (vocab_size == 0) vocab_size = n_tokens;
  if (vocab_size < n_tokens)
    throw Error("mkmodel: vocab size " + std::to_string(vocab_size) + " is smaller than the " +
                std::to_string(n_tokens) + " tokens of " + s.vocab_from);
  if (vocab_size > n_tokens) pad_vocab(w, *src, n_tokens, vocab_size);
}

}  // namespace

bool apply_preset(const std::string& preset, MkModelSpec& s) {
  for (const auto& p : kPresets) {
    if (preset != p.name) continue;
    s.arch = p.arch;
    s.dim = p.dim;
    s.n_layers = p.n_layers;
    s.n_heads = p.n_heads;
    s.n_kv_heads = p.n_kv_heads;
    s.ffn_dim = p.ffn_dim;
    s.vocab_size = p.vocab_size;
    s.context_length = p.context_length;
    s.head_dim = p.head_dim;
    s.n_experts = p.n_experts;
    s.n_experts_used = p.n_used;
    if (s.name.empty()) s.name = p.name;
    return true;
  }
  return false;
}

std::string preset_names() {
  std::string out;
  for (const auto& p : kPresets) out += std::string(out.empty() ? "" : ", ") + p.name;
  return out;
}

void write_random_model(const MkModelSpec& spec, const std::string& out_path) {
  MkModelSpec s = spec;
  const bool llama3 = s.arch == "llama3";
  const bool moe_arch = s.arch == "mixtral" || s.arch == "qwen2moe" || s.arch == "qwen3moe" || s.arch == "olmoe";
  const std::string arch =
      (s.arch == "llama3" || s.arch == "tinyllama" || s.arch == "mistral" || s.arch == "mixtral") ? "llama" : s.arch;
  if (arch != "llama" && arch != "qwen2" && arch != "qwen3" && !is_gemma(arch) && arch != "phi3" && !moe_arch)
    throw Error("mkmodel: unknown architecture '" + s.arch +
                "' (llama, llama3, tinyllama, mistral, qwen2, qwen3, gemma2, gemma3, phi3, mixtral, qwen2moe, "
                "qwen3moe, olmoe)");
  if (moe_arch && s.n_experts == 0) s.n_experts = 8;
  if (s.n_experts > 0 && s.n_experts_used == 0) s.n_experts_used = std::min(2, s.n_experts);
  if (s.n_experts < 0 || s.n_experts_used > s.n_experts)
    throw Error("mkmodel: experts used (" + std::to_string(s.n_experts_used) + ") must be at most the experts (" +
                std::to_string(s.n_experts) + ")");
  if (s.n_kv_heads == 0) s.n_kv_heads = s.n_heads;
  if (s.head_dim == 0) s.head_dim = s.n_heads > 0 ? s.dim / s.n_heads : 0;
  if (s.rope_dim == 0) s.rope_dim = s.head_dim;
  if (s.ffn_dim == 0) s.ffn_dim = (s.dim * 8 / 3 + 31) / 32 * 32;
  if (s.arch == "qwen2moe" && s.shared_expert_ffn == 0) s.shared_expert_ffn = 4 * s.ffn_dim;
  if (s.arch == "mistral" && s.sliding_window == 0) s.sliding_window = 4096;
  if (s.arch == "gemma2" && s.sliding_window == 0) s.sliding_window = 4096;
  if (s.arch == "gemma3" && s.sliding_window == 0) s.sliding_window = 512;
  if (is_gemma(arch)) s.tied_output = true;  // Gemma has no output.weight
  if (s.original_context == 0) s.original_context = std::min(4096, s.context_length);
  if (s.dim <= 0 || s.n_layers <= 0 || s.n_heads <= 0 || s.head_dim <= 0 || s.rope_dim <= 0 ||
      s.n_heads % s.n_kv_heads != 0 || s.head_dim % 2 != 0 || s.rope_dim % 2 != 0 || s.rope_dim > s.head_dim)
    throw Error("mkmodel: inconsistent shape (dim, layers, heads, kv heads, head dim, rope dim)");

  gguf::Writer w;
  const double rope_base =
      llama3 ? 500000.0 : (arch == "llama" || arch == "gemma2" || arch == "phi3" ? 10000.0 : 1000000.0);
  const std::string a = arch + ".";
  w.set("general.architecture", gguf::Value::str(arch));
  w.set("general.name", gguf::Value::str(s.name.empty() ? "parley-mkmodel-" + s.arch : s.name));
  w.set("general.file_type", gguf::Value::u32(file_type_of(QuantRecipe{"", s.type, false})));
  w.set(a + "context_length", gguf::Value::u32(uint32_t(s.context_length)));
  w.set(a + "embedding_length", gguf::Value::u32(uint32_t(s.dim)));
  w.set(a + "block_count", gguf::Value::u32(uint32_t(s.n_layers)));
  w.set(a + "feed_forward_length", gguf::Value::u32(uint32_t(s.ffn_dim)));
  w.set(a + "attention.head_count", gguf::Value::u32(uint32_t(s.n_heads)));
  w.set(a + "attention.head_count_kv", gguf::Value::u32(uint32_t(s.n_kv_heads)));
  w.set(a + "attention.key_length", gguf::Value::u32(uint32_t(s.head_dim)));
  w.set(a + "attention.value_length", gguf::Value::u32(uint32_t(s.head_dim)));
  w.set(a + "attention.layer_norm_rms_epsilon", gguf::Value::f32(arch == "llama" ? 1e-5f : 1e-6f));
  w.set(a + "rope.freq_base", gguf::Value::f32(float(rope_base)));
  w.set(a + "rope.dimension_count", gguf::Value::u32(uint32_t(s.rope_dim)));
  rope_scaling_metadata(s, arch, w);
  if (s.sliding_window > 0) w.set(a + "attention.sliding_window", gguf::Value::u32(uint32_t(s.sliding_window)));
  if (s.n_experts > 0) {
    w.set(a + "expert_count", gguf::Value::u32(uint32_t(s.n_experts)));
    w.set(a + "expert_used_count", gguf::Value::u32(uint32_t(s.n_experts_used)));
    if (arch == "qwen2moe" || arch == "qwen3moe")
      w.set(a + "expert_feed_forward_length", gguf::Value::u32(uint32_t(s.ffn_dim)));
    if (s.shared_expert_ffn > 0)
      w.set(a + "expert_shared_feed_forward_length", gguf::Value::u32(uint32_t(s.shared_expert_ffn)));
  }
  gemma_metadata(s, w);
  int32_t vocab = s.vocab_size;
  copy_vocab(s, w, vocab);
  if (!s.chat_template.empty()) w.set("tokenizer.chat_template", gguf::Value::str(s.chat_template));

  ModelWriter m(s, w);
  const uint64_t dim = uint64_t(s.dim), qd = uint64_t(s.n_heads * s.head_dim),
                 kvd = uint64_t(s.n_kv_heads * s.head_dim), ffn = uint64_t(s.ffn_dim), hd = uint64_t(s.head_dim);
  m.matrix("token_embd.weight", dim, uint64_t(vocab));
  m.vector("output_norm.weight", dim, 1.0f, 0.1f);
  if (!s.tied_output) m.matrix("output.weight", dim, uint64_t(vocab));
  if (llama3) m.raw_vector("rope_freqs.weight", llama3_rope_freqs(s.rope_dim, rope_base));
  if (arch == "phi3" && s.yarn_factor == 0.0f && s.original_context < s.context_length) {
    m.raw_vector("rope_factors_long.weight", longrope_factors(s, true));
    m.raw_vector("rope_factors_short.weight", longrope_factors(s, false));
  }
  for (int32_t l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    m.vector(p + "attn_norm.weight", dim, 1.0f, 0.1f);
    if (arch == "phi3") {
      m.matrix(p + "attn_qkv.weight", dim, qd + 2 * kvd);
    } else {
      m.matrix(p + "attn_q.weight", dim, qd);
      m.matrix(p + "attn_k.weight", dim, kvd);
      m.matrix(p + "attn_v.weight", dim, kvd);
    }
    m.matrix(p + "attn_output.weight", qd, dim);
    if (arch == "qwen2" || arch == "qwen2moe") {
      m.vector(p + "attn_q.bias", qd, 0.0f, 0.1f);
      m.vector(p + "attn_k.bias", kvd, 0.0f, 0.1f);
      m.vector(p + "attn_v.bias", kvd, 0.0f, 0.1f);
    }
    if (arch == "qwen3" || arch == "qwen3moe" || arch == "gemma3") {
      m.vector(p + "attn_q_norm.weight", hd, 1.0f, 0.1f);
      m.vector(p + "attn_k_norm.weight", hd, 1.0f, 0.1f);
    }
    if (arch == "olmoe") {  // over the whole Q and K rows
      m.vector(p + "attn_q_norm.weight", qd, 1.0f, 0.1f);
      m.vector(p + "attn_k_norm.weight", kvd, 1.0f, 0.1f);
    }
    m.vector(p + "ffn_norm.weight", dim, 1.0f, 0.1f);
    if (s.n_experts > 0) {
      const uint64_t n = uint64_t(s.n_experts), shared = uint64_t(s.shared_expert_ffn);
      m.router(p + "ffn_gate_inp.weight", dim, n);
      m.matrix(p + "ffn_gate_exps.weight", dim, ffn, n);
      m.matrix(p + "ffn_up_exps.weight", dim, ffn, n);
      m.matrix(p + "ffn_down_exps.weight", ffn, dim, n);
      if (shared > 0) {
        m.vector(p + "ffn_gate_inp_shexp.weight", dim, 0.0f, 1.0f);
        m.matrix(p + "ffn_gate_shexp.weight", dim, shared);
        m.matrix(p + "ffn_up_shexp.weight", dim, shared);
        m.matrix(p + "ffn_down_shexp.weight", shared, dim);
      }
      continue;
    }
    if (arch == "phi3") {
      m.matrix(p + "ffn_up.weight", dim, 2 * ffn);  // gate rows, then up rows
    } else {
      m.matrix(p + "ffn_gate.weight", dim, ffn);
      m.matrix(p + "ffn_up.weight", dim, ffn);
    }
    m.matrix(p + "ffn_down.weight", ffn, dim);
    if (is_gemma(arch)) {
      m.vector(p + "post_attention_norm.weight", dim, 1.0f, 0.1f);
      m.vector(p + "post_ffw_norm.weight", dim, 1.0f, 0.1f);
    }
  }
  w.write(out_path);
}

}  // namespace parley
