#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace parley {

SpecialTokens::SpecialTokens(const Vocab& vocab) {
  for (int32_t id = 0; id < vocab.size(); ++id) {
    const TokenType t = vocab.types[id];
    const std::string& text = vocab.tokens[id];
    const bool user_defined = t == TokenType::UserDefined;
    if (text.empty() || !(user_defined || t == TokenType::Control || t == TokenType::Unknown)) continue;
    by_first_byte_[uint8_t(text[0])].push_back({text, id, user_defined});
    has_user_defined_ = has_user_defined_ || user_defined;
  }
  for (auto& candidates : by_first_byte_) {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.text.size() > b.text.size(); });
  }
}

std::vector<SpecialTokens::Fragment> SpecialTokens::split(std::string_view text, bool parse_special) const {
  std::vector<Fragment> out;
  size_t plain = 0;  // start of the plain text not yet emitted
  for (size_t pos = 0; pos < text.size();) {
    const auto& candidates = by_first_byte_[uint8_t(text[pos])];
    const auto hit = std::find_if(candidates.begin(), candidates.end(), [&](const Candidate& c) {
      return (parse_special || c.user_defined) && text.substr(pos).starts_with(c.text);
    });
    if (hit == candidates.end()) {
      ++pos;
      continue;
    }
    if (plain < pos) out.push_back({text.substr(plain, pos - plain), -1});
    out.push_back({text.substr(pos, hit->text.size()), hit->id});
    pos += hit->text.size();
    plain = pos;
  }
  if (plain < text.size()) out.push_back({text.substr(plain), -1});
  return out;
}

}  // namespace parley
