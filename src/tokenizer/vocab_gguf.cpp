// load_vocab: a Vocab from GGUF metadata (tokenizer.ggml.*).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/vocab.h"
#include "util/error.h"

namespace parley {
namespace {

bool is_signed(gguf::ValueType t) {
  using T = gguf::ValueType;
  return t == T::INT8 || t == T::INT16 || t == T::INT32 || t == T::INT64;
}

// A token id key; absent -> `dflt`, an id outside the vocabulary (converters
// write 0xFFFFFFFF for "none") -> -1.
int32_t token_id(const gguf::File& f, const std::string& key, int32_t dflt, int32_t n_tokens) {
  const gguf::Value* v = f.find(key);
  if (!v) return dflt < n_tokens ? dflt : -1;
  const int64_t id = is_signed(v->type) ? v->as_int() : int64_t(std::min<uint64_t>(v->as_uint(), INT64_MAX));
  return id >= 0 && id < n_tokens ? int32_t(id) : -1;
}

std::vector<TokenType> token_types(const gguf::File& f, size_t n_tokens) {
  const std::vector<int32_t> raw = f.get_ints("tokenizer.ggml.token_type");
  if (raw.empty()) return std::vector<TokenType>(n_tokens, TokenType::Normal);
  if (raw.size() != n_tokens) {
    throw Error(f.path() + ": tokenizer.ggml.token_type has " + std::to_string(raw.size()) +
                " entries, expected one per token (" + std::to_string(n_tokens) + ")");
  }
  std::vector<TokenType> types(n_tokens);
  for (size_t i = 0; i < n_tokens; ++i) {
    if (raw[i] < 0 || raw[i] > int32_t(TokenType::Byte)) {
      throw Error(f.path() + ": tokenizer.ggml.token_type[" + std::to_string(i) + "] is " +
                  std::to_string(raw[i]) + ", expected 0..6");
    }
    types[i] = TokenType(raw[i]);
  }
  return types;
}

Vocab::Kind vocab_kind(const gguf::File& f) {
  const std::string model = f.get_string("tokenizer.ggml.model");
  if (model == "llama") return Vocab::Kind::Spm;
  if (model == "gpt2") return Vocab::Kind::Bpe;
  throw Error(f.path() + ": tokenizer.ggml.model \"" + model +
              "\" is not supported (expected \"llama\" or \"gpt2\")");
}

}  // namespace

Vocab load_vocab(const gguf::File& f) {
  Vocab v;
  v.kind = vocab_kind(f);
  const bool spm = v.kind == Vocab::Kind::Spm;
  v.tokens = f.get_strings("tokenizer.ggml.tokens");
  if (v.tokens.empty()) throw Error(f.path() + ": tokenizer.ggml.tokens is missing or empty");
  const int32_t n = v.size();
  v.scores = f.get_floats("tokenizer.ggml.scores");
  if (!v.scores.empty() && v.scores.size() != v.tokens.size()) {
    throw Error(f.path() + ": tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
                " entries, expected one per token (" + std::to_string(n) + ")");
  }
  v.types = token_types(f, v.tokens.size());
  v.merges = f.get_strings("tokenizer.ggml.merges");
  if (!spm && v.merges.empty()) throw Error(f.path() + ": tokenizer.ggml.merges is missing (needed for gpt2 BPE)");
  v.pre = f.get_string("tokenizer.ggml.pre", "default");

  // Llama vocabularies conventionally put <unk>, <s>, </s> first.
  v.bos = token_id(f, "tokenizer.ggml.bos_token_id", spm ? 1 : -1, n);
  v.eos = token_id(f, "tokenizer.ggml.eos_token_id", spm ? 2 : -1, n);
  v.unk = token_id(f, "tokenizer.ggml.unknown_token_id", spm ? 0 : -1, n);
  v.eot = token_id(f, "tokenizer.ggml.eot_token_id", -1, n);
  v.pad = token_id(f, "tokenizer.ggml.padding_token_id", -1, n);
  v.add_bos = f.get_bool("tokenizer.ggml.add_bos_token", spm);
  v.add_eos = f.get_bool("tokenizer.ggml.add_eos_token", false);
  v.add_space_prefix = f.get_bool("tokenizer.ggml.add_space_prefix", spm);
  v.chat_template = f.get_string("tokenizer.chat_template", "");
  return v;
}

}  // namespace parley
