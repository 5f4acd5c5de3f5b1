#include "chat/jinja_text.h"

#include <algorithm>

namespace parley::chat::jinja {

Text::Text(std::string s, bool from_user) : str_(std::move(s)) {
  if (from_user) mark_user(0, str_.size());
}

void Text::mark_user(size_t begin, size_t end) {
  if (begin >= end) return;
  if (!user_.empty() && user_.back().end == begin) {
    user_.back().end = end;  // ranges arrive in order; merge touching ones
  } else {
    user_.push_back({begin, end});
  }
}

void Text::append(const Text& t) {
  const size_t offset = str_.size();
  str_ += t.str_;
  for (const Range& r : t.user_) mark_user(offset + r.begin, offset + r.end);
}

Text Text::substr(size_t pos, size_t len) const {
  pos = std::min(pos, str_.size());
  len = std::min(len, str_.size() - pos);
  Text out(str_.substr(pos, len));
  for (const Range& r : user_) {
    const size_t b = std::max(r.begin, pos), e = std::min(r.end, pos + len);
    if (b < e) out.mark_user(b - pos, e - pos);
  }
  return out;
}

Text Text::with_same_marks(std::string s) const {
  Text out(std::move(s));
  out.user_ = user_;
  return out;
}

}  // namespace parley::chat::jinja
