#include "tokenizer/token_index.h"

namespace parley {

TokenIndex::TokenIndex(const Vocab& vocab) {
  ids_.reserve(vocab.tokens.size());
  for (int32_t i = 0; i < vocab.size(); ++i) ids_.emplace(vocab.tokens[i], i);
}

int32_t TokenIndex::find(const std::string& text) const {
  const auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace parley
