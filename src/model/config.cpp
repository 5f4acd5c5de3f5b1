#include "model/config.h"

#include <cmath>

#include "gguf/gguf.h"
#include "model/arch.h"
#include "model/rope_scaling.h"
#include "util/error.h"

namespace parley {
namespace {

void require_positive(const std::string& source, const char* field, int64_t v) {
  if (v <= 0)
    throw Error(source + ": " + field + " must be positive, found " + std::to_string(v));
}

int32_t checked_i32(const std::string& source, const std::string& key, uint64_t v) {
  if (v > (1u << 30)) throw Error(source + ": " + key + " = " + std::to_string(v) + " is out of range");
  return int32_t(v);
}

double require_float(const gguf::File& f, const std::string& key) {
  if (!f.find(key)) throw Error(f.path() + ": missing metadata key '" + key + "'");
  return f.get_float(key, 0.0);
}

// Gemma's attention multiplies q.k by 1/sqrt(query_pre_attn_scalar), which
// the converter does not store: it is the head dim, except for the 27B
// models (46 layers of Gemma 2, 62 of Gemma 3) whose scalar is dim / heads.
float gemma_attn_scale(const ModelConfig& c) {
  const bool big = (c.arch == "gemma2" && c.n_layers == 46) || (c.arch == "gemma3" && c.n_layers == 62);
  return 1.0f / std::sqrt(float(big ? c.dim / c.n_heads : c.head_dim));
}

// {arch}.attention.sliding_window_pattern: a period (every layer but each
// period's last is windowed) or, as newer converters write it, one bool per
// layer (true: windowed); absent, the family's period.
void read_window_pattern(const gguf::File& f, const std::string& key, int32_t period, ModelConfig& c) {
  const gguf::Value* v = f.find(key);
  if (v && v->type == gguf::ValueType::ARRAY) {
    for (const gguf::Value& flag : v->as_array().items) c.swa_layers.push_back(flag.as_bool());
    if (c.swa_layers.size() != size_t(c.n_layers))
      throw Error(f.path() + ": " + key + " has " + std::to_string(c.swa_layers.size()) + " flags for " +
                  std::to_string(c.n_layers) + " layers");
    return;
  }
  c.sliding_window_pattern = checked_i32(f.path(), key, f.get_uint(key, uint64_t(period)));
}

// A family's row of traits, with the keys they need (Gemma 2's soft-caps).
void apply_traits(const gguf::File& f, const ArchTraits& t, ModelConfig& c) {
  const std::string a = c.arch + ".";
  c.rope_style = t.rope_style;
  c.qk_norm = t.qk_norm;
  c.ffn_act = t.ffn_act;
  c.post_norms = t.post_norms;
  c.fused = t.fused;
  if (t.scale_embd) c.embd_scale = std::sqrt(float(c.dim));
  if (t.softcap) {
    c.attn_softcap = float(require_float(f, a + "attn_logit_softcapping"));
    c.final_softcap = float(require_float(f, a + "final_logit_softcapping"));
    if (!(c.attn_softcap > 0.0f) || !(c.final_softcap > 0.0f))
      throw Error(f.path() + ": " + a + "attn_logit_softcapping and final_logit_softcapping must be positive");
  }
  read_window_pattern(f, a + "attention.sliding_window_pattern", t.sliding_window_pattern, c);
  c.rope_base_swa = float(f.get_float(a + "rope.freq_base_swa", double(t.rope_base_swa)));
  if ((c.arch == "gemma2" || c.arch == "gemma3") && c.n_heads > 0 && c.head_dim > 0) c.attn_scale = gemma_attn_scale(c);
}

}  // namespace

void ModelConfig::validate(const std::string& source) const {
  require_positive(source, "embedding length", dim);
  require_positive(source, "block count", n_layers);
  require_positive(source, "head count", n_heads);
  require_positive(source, "head count kv", n_kv_heads);
  require_positive(source, "head dim", head_dim);
  require_positive(source, "feed forward length", ffn_dim);
  require_positive(source, "vocabulary size", vocab_size);
  require_positive(source, "context length", context_length);
  if (n_heads % n_kv_heads != 0)
    throw Error(source + ": head count " + std::to_string(n_heads) +
                " is not a multiple of head count kv " + std::to_string(n_kv_heads));
  if (rope_dim <= 0 || rope_dim > head_dim || rope_dim % 2 != 0)
    throw Error(source + ": rope dimension count " + std::to_string(rope_dim) +
                " must be even and at most the head dim " + std::to_string(head_dim));
  if (!(norm_eps > 0.0f) || !(rope_base > 0.0f) || !(rope_scale > 0.0f))
    throw Error(source + ": norm epsilon, rope base and rope scale must be positive");
}

ModelConfig config_from_gguf(const gguf::File& f) {
  ModelConfig c;
  const std::string& src = f.path();
  c.arch = f.get_string("general.architecture");
  const ArchTraits* traits = find_arch(c.arch);
  if (!traits)
    throw Error(src + ": general.architecture '" + c.arch + "' is not supported (expected " +
                supported_arch_names() + ")");
  const std::string a = c.arch + ".";
  auto get = [&](const std::string& key) { return checked_i32(src, a + key, f.get_uint(a + key)); };
  auto get_or = [&](const std::string& key, uint64_t d) {
    return checked_i32(src, a + key, f.get_uint(a + key, d));
  };
  c.dim = get("embedding_length");
  c.n_layers = get("block_count");
  c.n_heads = get("attention.head_count");
  c.n_kv_heads = get_or("attention.head_count_kv", uint64_t(c.n_heads));
  c.ffn_dim = get("feed_forward_length");
  c.context_length = get("context_length");
  c.head_dim = c.n_heads > 0 ? get_or("attention.key_length", uint64_t(c.dim / c.n_heads)) : 0;
  c.rope_dim = get_or("rope.dimension_count", uint64_t(c.head_dim));
  c.norm_eps = float(f.get_float(a + "attention.layer_norm_rms_epsilon", 1e-5));
  c.rope_base = float(f.get_float(a + "rope.freq_base", 10000.0));
  read_rope_scaling(f, c);
  c.sliding_window = get_or("attention.sliding_window", uint64_t(traits->sliding_window));
  const int32_t pooling = get_or("pooling_type", 0);
  if (pooling < 0 || pooling > int32_t(Pooling::Last))
    throw Error(src + ": " + a + "pooling_type " + std::to_string(pooling) +
                " is not supported (expected 0 none, 1 mean, 2 cls or 3 last)");
  c.pooling = Pooling(pooling);
  apply_traits(f, *traits, c);
  c.moe = moe_config_from_gguf(f, c.arch, traits->moe_norm_top_k, c.ffn_dim);
  c.vocab_size = int32_t(f.get_strings("tokenizer.ggml.tokens").size());
  if (c.vocab_size == 0) c.vocab_size = get_or("vocab_size", 0);
  return c;
}

}  // namespace parley
