#pragma once
// Text produced by the Jinja interpreter, remembering which bytes came from
// message data (user text) rather than from the template itself. The chat
// encoder recognises special-token texts such as "<|im_start|>" only in the
// template's bytes, so a user cannot type a control token.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace parley::chat::jinja {

class Text {
 public:
  struct Range {  // [begin, end) byte offsets
    size_t begin, end;
  };

  Text() = default;
  explicit Text(std::string s, bool from_user = false);

  const std::string& str() const { return str_; }
  size_t size() const { return str_.size(); }
  bool empty() const { return str_.empty(); }
  // Sorted, disjoint, non-adjacent ranges of user bytes.
  const std::vector<Range>& user_ranges() const { return user_; }
  bool has_user_bytes() const { return !user_.empty(); }

  void append(const Text& t);
  void append(std::string_view template_text) { str_.append(template_text); }
  Text substr(size_t pos, size_t len = std::string::npos) const;
  // The same marks on a string of equal length (case changes).
  Text with_same_marks(std::string s) const;

 private:
  void mark_user(size_t begin, size_t end);

  std::string str_;
  std::vector<Range> user_;
};

}  // namespace parley::chat::jinja
