#pragma once
// Token text -> id look-up shared by the encoders.
#include <cstdint>
#include <string>
#include <unordered_map>

#include "tokenizer/vocab.h"

namespace parley {

class TokenIndex {
 public:
  explicit TokenIndex(const Vocab& vocab);
  // The id of the token spelled `text`, or -1; the first one if spelled twice.
  int32_t find(const std::string& text) const;

 private:
  std::unordered_map<std::string, int32_t> ids_;
};

// Tokens that text may be encoded into: merges never produce control, byte,
// unknown or unused tokens.
inline bool is_text_token(TokenType t) {
  return t == TokenType::Normal || t == TokenType::UserDefined || t == TokenType::Undefined;
}

}  // namespace parley
