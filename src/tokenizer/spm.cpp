#include "tokenizer/spm.h"

#include <cstdio>
#include <string>

#include "tokenizer/merge.h"
#include "tokenizer/unicode.h"

namespace parley {

namespace {
constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581
}

SpmEncoder::SpmEncoder(const Vocab& vocab, const TokenIndex& index) : vocab_(&vocab), index_(&index) {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    const int32_t id = index.find(name);
    byte_tokens_[b] = id >= 0 && vocab.types[id] == TokenType::Byte ? id : -1;
    has_byte_tokens_ |= byte_tokens_[b] >= 0;
  }
}

int32_t SpmEncoder::text_token(const std::string& text) const {
  const int32_t id = index_->find(text);
  return id >= 0 && is_text_token(vocab_->types[id]) ? id : -1;
}

void SpmEncoder::encode(std::string_view text, std::vector<int32_t>& out) const {
  std::vector<detail::Symbol> chars;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = unicode::decode_utf8(text, pos).len;
    chars.push_back({text_token(std::string(text.substr(pos, len))), uint32_t(pos), uint32_t(pos + len)});
    pos += len;
  }
  auto pair = [&](int32_t l, int32_t r) -> std::optional<detail::Merge> {
    const int32_t id = text_token(vocab_->tokens[l] + vocab_->tokens[r]);
    if (id < 0) return std::nullopt;
    return detail::Merge{vocab_->scores.empty() ? 0.0 : double(vocab_->scores[id]), id};
  };
  for (const detail::Symbol& s : detail::merge_symbols(chars, pair)) {
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {
      encode_unknown(text.substr(s.begin, s.end - s.begin), out);
    }
  }
}

void SpmEncoder::encode_unknown(std::string_view chars, std::vector<int32_t>& out) const {
  if (!has_byte_tokens_) {
    if (vocab_->unk >= 0) out.push_back(vocab_->unk);
    return;
  }
  for (char c : chars) {
    const int32_t id = byte_tokens_[uint8_t(c)];
    if (id >= 0) {
      out.push_back(id);
    } else if (vocab_->unk >= 0) {
      out.push_back(vocab_->unk);
    }
  }
}

std::optional<uint8_t> parse_byte_token(std::string_view t) {
  if (t.size() != 6 || !t.starts_with("<0x") || t[5] != '>') return std::nullopt;
  uint8_t value = 0;
  for (char c : t.substr(3, 2)) {
    const bool digit = c >= '0' && c <= '9', upper = c >= 'A' && c <= 'F', lower = c >= 'a' && c <= 'f';
    if (!digit && !upper && !lower) return std::nullopt;
    value = uint8_t(value * 16 + (digit ? c - '0' : (upper ? c - 'A' : c - 'a') + 10));
  }
  return value;
}

std::string escape_spm_spaces(std::string_view text, bool space_prefix) {
  std::string out;
  out.reserve(text.size() + 8);
  if (space_prefix) out += kSpmSpace;
  for (char c : text) {
    if (c == ' ') {
      out += kSpmSpace;
    } else {
      out += c;
    }
  }
  return out;
}

std::string unescape_spm_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with(kSpmSpace)) {
      out += ' ';
      i += kSpmSpace.size() - 1;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace parley
