#pragma once
// SentencePiece-style (Llama) encoding of one piece of text: merge characters
// into the adjacent pair whose concatenation is the token with the highest
// score; characters no token covers fall back to byte tokens "<0xNN>" (or
// <unk> when the vocabulary has none).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/vocab.h"

namespace parley {

class SpmEncoder {
 public:
  SpmEncoder(const Vocab& vocab, const TokenIndex& index);  // both must outlive this
  // `text` is already escaped: spaces are "▁" and any space prefix is added.
  void encode(std::string_view text, std::vector<int32_t>& out) const;

 private:
  int32_t text_token(const std::string& text) const;  // -1 unless a text token
  // Bytes as byte tokens, or <unk> for a character no token covers.
  void encode_unknown(std::string_view chars, std::vector<int32_t>& out) const;

  const Vocab* vocab_;
  const TokenIndex* index_;
  std::array<int32_t, 256> byte_tokens_{};  // -1 where there is none
  bool has_byte_tokens_ = false;
};

// The byte a byte token "<0xNN>" stands for.
std::optional<uint8_t> parse_byte_token(std::string_view text);

// Replaces every ' ' with "▁" (U+2581), after a leading ' ' if `space_prefix`.
std::string escape_spm_spaces(std::string_view text, bool space_prefix);
// Replaces every "▁" with ' '.
std::string unescape_spm_spaces(std::string_view text);

}  // namespace parley
