#include "chat/jinja_strings.h"

#include <algorithm>

#include "chat/jinja_value.h"

namespace parley::chat::jinja {
namespace {

bool is_space(char32_t c) {  // Python's str.isspace()
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

char to_upper(char c) { return c >= 'a' && c <= 'z' ? char(c - 'a' + 'A') : c; }
char to_lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// Positions of the code points of `t` that are in `set` (or whitespace).
struct CharClass {
  const std::string* set;
  std::vector<char32_t> members;

  explicit CharClass(const std::string* s) : set(s) {
    if (!s) return;
    for (size_t i = 0, len; i < s->size(); i += len) {
      char32_t c;
      decode_utf8(*s, i, c, len);
      members.push_back(c);
    }
  }
  bool contains(char32_t c) const {
    return set ? std::find(members.begin(), members.end(), c) != members.end() : is_space(c);
  }
};

char32_t char_at(std::string_view s, size_t i) {
  char32_t c;
  size_t len;
  decode_utf8(s, i, c, len);
  return c;
}

}  // namespace

void decode_utf8(std::string_view s, size_t i, char32_t& cp, size_t& len) {
  const unsigned char c = s[i];
  len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    cp = c;
    len = 1;
    return;
  }
  cp = len == 1 ? c : c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cont = s[i + k];
    if ((cont >> 6) != 0x2) {
      cp = c;
      len = 1;
      return;
    }
    cp = (cp << 6) | (cont & 0x3f);
  }
}

std::vector<size_t> char_offsets(std::string_view s) {
  std::vector<size_t> out;
  for (size_t i = 0, len; i < s.size(); i += len) {
    char32_t c;
    decode_utf8(s, i, c, len);
    out.push_back(i);
  }
  out.push_back(s.size());
  return out;
}

size_t char_count(std::string_view s) { return char_offsets(s).size() - 1; }

std::vector<Text> characters(const Text& t) {
  const std::vector<size_t> at = char_offsets(t.str());
  std::vector<Text> out;
  for (size_t i = 0; i + 1 < at.size(); ++i) out.push_back(t.substr(at[i], at[i + 1] - at[i]));
  return out;
}

std::vector<size_t> slice_indices(size_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                                  std::optional<int64_t> step) {
  const int64_t n = int64_t(size), st = step.value_or(1);
  if (st == 0) fail("slice step cannot be zero");
  // Clamp as Python does: negative bounds count from the end.
  const auto clamp = [n, st](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return st > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t b = clamp(start, st > 0 ? 0 : n - 1), e = clamp(stop, st > 0 ? n : -1);
  std::vector<size_t> out;
  for (int64_t i = b; st > 0 ? i < e : i > e; i += st) out.push_back(size_t(i));
  return out;
}

Text slice(const Text& t, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step) {
  const std::vector<size_t> at = char_offsets(t.str());
  Text out;
  for (size_t i : slice_indices(at.size() - 1, start, stop, step)) out.append(t.substr(at[i], at[i + 1] - at[i]));
  return out;
}

Text strip(const Text& t, bool left, bool right, const std::string* chars) {
  const CharClass cls(chars);
  const std::string& s = t.str();
  const std::vector<size_t> at = char_offsets(s);
  size_t b = 0, e = at.size() - 1;  // code point indices
  while (left && b < e && cls.contains(char_at(s, at[b]))) ++b;
  while (right && e > b && cls.contains(char_at(s, at[e - 1]))) --e;
  return t.substr(at[b], at[e] - at[b]);
}

std::vector<Text> split(const Text& t, const std::string* sep, int64_t maxsplit) {
  const std::string& s = t.str();
  std::vector<Text> out;
  if (sep) {
    if (sep->empty()) fail("empty separator");
    size_t pos = 0;
    for (size_t hit; (maxsplit < 0 || int64_t(out.size()) < maxsplit) && (hit = s.find(*sep, pos)) != std::string::npos;
         pos = hit + sep->size()) {
      out.push_back(t.substr(pos, hit - pos));
    }
    out.push_back(t.substr(pos));
    return out;
  }
  const CharClass space(nullptr);
  const std::vector<size_t> at = char_offsets(s);
  size_t i = 0;
  const size_t n = at.size() - 1;
  while (true) {
    while (i < n && space.contains(char_at(s, at[i]))) ++i;
    if (i == n) break;
    if (maxsplit >= 0 && int64_t(out.size()) == maxsplit) {  // the rest, trailing space kept
      out.push_back(t.substr(at[i]));
      break;
    }
    size_t j = i;
    while (j < n && !space.contains(char_at(s, at[j]))) ++j;
    out.push_back(t.substr(at[i], at[j] - at[i]));
    i = j;
  }
  return out;
}

Text replace(const Text& t, std::string_view old, const Text& with, int64_t count) {
  const std::string& s = t.str();
  Text out;
  int64_t done = 0;
  if (old.empty()) {  // Python inserts `with` around every character
    const std::vector<size_t> at = char_offsets(s);
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      if (count < 0 || done++ < count) out.append(with);
      out.append(t.substr(at[i], at[i + 1] - at[i]));
    }
    if (count < 0 || done < count) out.append(with);
    return out;
  }
  size_t pos = 0;
  for (size_t hit; (count < 0 || done < count) && (hit = s.find(old, pos)) != std::string::npos; ++done) {
    out.append(t.substr(pos, hit - pos));
    out.append(with);
    pos = hit + old.size();
  }
  out.append(t.substr(pos));
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), to_upper);
  return s;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), to_lower);
  return s;
}

std::string title(std::string s) {
  bool in_word = false;
  for (char& c : s) {
    c = in_word ? to_lower(c) : to_upper(c);
    in_word = is_ascii_letter(c) || static_cast<unsigned char>(c) >= 0x80;  // most non-ASCII text is letters
  }
  return s;
}

std::string title_words(std::string s) {
  bool word_start = true;
  for (char& c : s) {
    const bool separator = std::string_view(" \t\n\r\f\v-([{<").find(c) != std::string_view::npos;
    c = word_start ? to_upper(c) : to_lower(c);
    word_start = separator;
  }
  return s;
}

std::string capitalize(std::string s) {
  s = lower(std::move(s));
  if (!s.empty()) s[0] = to_upper(s[0]);
  return s;
}

}  // namespace parley::chat::jinja
