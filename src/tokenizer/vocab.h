#pragma once
// A model's vocabulary, as read from GGUF metadata (tokenizer.ggml.*) or from a
// llama2.c tokenizer.bin.
#include <cstdint>
#include <string>
#include <vector>

namespace parley {
namespace gguf { class File; }

enum class TokenType : int32_t {  // tokenizer.ggml.token_type values
  Undefined = 0, Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6,
};

struct Vocab {
  enum class Kind { Spm, Bpe } kind = Kind::Spm;
  std::vector<std::string> tokens;
  std::vector<float> scores;           // SPM merge priorities (may be empty for BPE)
  std::vector<TokenType> types;        // same length as tokens
  std::vector<std::string> merges;     // BPE: "a b" pairs, highest priority first
  std::string pre = "default";         // tokenizer.ggml.pre (BPE pre-tokenizer)
  int32_t bos = -1, eos = -1, eot = -1, unk = -1, pad = -1;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = true;        // SPM: prepend " " to the text
  std::string chat_template;           // tokenizer.chat_template (may be empty)

  int32_t size() const { return int32_t(tokens.size()); }
};

Vocab load_vocab(const gguf::File& file);                              // throws parley::Error
Vocab load_llama2c_vocab(const std::string& path, int32_t vocab_size);  // tokenizer.bin

}  // namespace parley
