#include "tokenizer/tokenizer.h"

#include <optional>
#include <string>

#include "gguf/gguf.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/pretokenize.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm.h"
#include "tokenizer/token_index.h"
#include "util/error.h"

namespace parley {
namespace {

void check_vocab(const Vocab& v) {
  if (v.tokens.empty()) throw Error("vocabulary has no tokens");
  if (v.types.size() != v.tokens.size()) {
    throw Error("vocabulary has " + std::to_string(v.types.size()) + " token types for " +
                std::to_string(v.tokens.size()) + " tokens");
  }
  if (!v.scores.empty() && v.scores.size() != v.tokens.size()) {
    throw Error("vocabulary has " + std::to_string(v.scores.size()) + " scores for " +
                std::to_string(v.tokens.size()) + " tokens");
  }
  for (int32_t id : {v.bos, v.eos, v.eot, v.unk, v.pad}) {
    if (id < -1 || id >= v.size()) {
      throw Error("special token id " + std::to_string(id) + " is outside the vocabulary of " +
                  std::to_string(v.size()));
    }
  }
}

// Token texts that end a turn in common chat formats.
bool is_end_of_turn_text(const std::string& t) {
  for (const char* s : {"</s>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>",
                        "<end_of_turn>", "<|end_of_text|>", "<EOT>"}) {
    if (t == s) return true;
  }
  return false;
}

std::vector<bool> end_of_generation_ids(const Vocab& v) {
  std::vector<bool> eog(v.tokens.size(), false);
  for (int32_t id = 0; id < v.size(); ++id) {
    const bool special = v.types[id] == TokenType::Control || v.types[id] == TokenType::UserDefined;
    eog[id] = id == v.eos || id == v.eot || (special && is_end_of_turn_text(v.tokens[id]));
  }
  return eog;
}

}  // namespace

struct Tokenizer::Impl {
  explicit Impl(Vocab v)
      : vocab((check_vocab(v), std::move(v))), index(vocab), specials(vocab), eog(end_of_generation_ids(vocab)) {
    if (vocab.kind == Vocab::Kind::Spm) {
      spm.emplace(vocab, index);
    } else {
      bpe.emplace(vocab, index);
      pre = pre_tokenizer_for(vocab.pre);
    }
  }

  // Plain text (no special tokens); `after_special`: at the start of the text
  // or after a special token, where SPM adds its space prefix.
  void encode_plain(std::string_view text, bool after_special, std::vector<int32_t>& out) const {
    if (spm) {
      spm->encode(escape_spm_spaces(text, vocab.add_space_prefix && after_special), out);
      return;
    }
    for (std::string_view word : pretokenize(pre.family, text)) bpe->encode_word(word, pre.ignore_merges, out);
  }

  Vocab vocab;
  TokenIndex index;
  SpecialTokens specials;
  std::vector<bool> eog;
  std::optional<SpmEncoder> spm;  // one of these two, by vocab.kind
  std::optional<BpeEncoder> bpe;
  PreTokenizerSpec pre;
};

Tokenizer::Tokenizer(Vocab vocab) : impl_(std::make_unique<Impl>(std::move(vocab))) {}

Tokenizer Tokenizer::from_gguf(const gguf::File& file) {
  Vocab vocab = load_vocab(file);  // its errors name the file
  try {
    return Tokenizer(std::move(vocab));
  } catch (const Error& e) {
    throw Error(file.path() + ": " + e.what());
  }
}

Tokenizer Tokenizer::from_gguf(const std::string& path) { return from_gguf(*gguf::File::open(path)); }

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

const Vocab& Tokenizer::vocab() const { return impl_->vocab; }
void Tokenizer::set_chat_template(std::string chat_template) { impl_->vocab.chat_template = std::move(chat_template); }

bool Tokenizer::is_eog(int32_t id) const { return id >= 0 && id < vocab().size() && impl_->eog[id]; }

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  const Vocab& v = vocab();
  std::vector<int32_t> out;
  if (add_special && v.add_bos && v.bos >= 0) out.push_back(v.bos);
  // Added tokens are found in the raw text first: user-defined ones always,
  // control and unknown ones only when parsing special tokens.
  std::vector<SpecialTokens::Fragment> fragments;
  if (parse_special || impl_->specials.has_user_defined()) {
    fragments = impl_->specials.split(text, parse_special);
  } else if (!text.empty()) {
    fragments.push_back({text, -1});
  }
  bool after_special = true;
  for (const SpecialTokens::Fragment& f : fragments) {
    if (f.id >= 0) {
      out.push_back(f.id);
    } else {
      impl_->encode_plain(f.text, after_special, out);
    }
    after_special = f.id >= 0;
  }
  if (add_special && v.add_eos && v.eos >= 0) out.push_back(v.eos);
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool special) const {
  const Vocab& v = vocab();
  if (id < 0 || id >= v.size()) {
    throw Error("token id " + std::to_string(id) + " is outside the vocabulary of " + std::to_string(v.size()));
  }
  const std::string& text = v.tokens[id];
  switch (v.types[id]) {
    case TokenType::Control:
    case TokenType::Unknown:
    case TokenType::Unused:
      return special ? text : std::string();
    case TokenType::UserDefined:
      return text;
    case TokenType::Byte:
      if (std::optional<uint8_t> b = parse_byte_token(text)) return std::string(1, char(*b));
      return text;
    default:
      return v.kind == Vocab::Kind::Spm ? unescape_spm_spaces(text) : alphabet_to_bytes(text);
  }
}

std::string Tokenizer::token_to_piece_in_text(int32_t id, bool text_start, int32_t prev, bool special) const {
  std::string piece = token_to_piece(id, special);
  const Vocab& v = vocab();
  const bool prefixed = v.kind == Vocab::Kind::Spm && v.add_space_prefix;
  if (prefixed && (text_start || (prev >= 0 && prev == v.bos)) && piece.starts_with(' ')) piece.erase(0, 1);
  return piece;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool special) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    out += token_to_piece_in_text(ids[i], i == 0, i > 0 ? ids[i - 1] : -1, special);
  }
  return out;
}

}  // namespace parley
