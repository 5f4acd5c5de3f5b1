#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace parley {

SpecialTokens::SpecialTokens(const Vocab& vocab) {
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const TokenType t = vocab.types[id];
    const std::string& text = vocab.tokens[id];
    if ((t == TokenType::Control || t == TokenType::UserDefined) && !text.empty()) {
      by_first_byte_[uint8_t(text[0])].emplace_back(text, id);
    }
  }
  for (auto& candidates : by_first_byte_) {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  }
}

std::vector<SpecialTokens::Fragment> SpecialTokens::split(std::string_view text) const {
  std::vector<Fragment> out;
  size_t plain = 0;  // start of the plain text not yet emitted
  for (size_t pos = 0; pos < text.size();) {
    const auto& candidates = by_first_byte_[uint8_t(text[pos])];
    const auto hit = std::find_if(candidates.begin(), candidates.end(),
                                  [&](const auto& c) { return text.substr(pos).starts_with(c.first); });
    if (hit == candidates.end()) {
      ++pos;
      continue;
    }
    if (plain < pos) out.push_back({text.substr(plain, pos - plain), -1});
    out.push_back({text.substr(pos, hit->first.size()), hit->second});
    pos += hit->first.size();
    plain = pos;
  }
  if (plain < text.size()) out.push_back({text.substr(plain), -1});
  return out;
}

}  // namespace parley
