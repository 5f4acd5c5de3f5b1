#pragma once
// Python's str operations on UTF-8 Text, counting code points as Python does
// (len, indexing, slicing) and keeping the marks of message bytes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/jinja_text.h"

namespace parley::chat::jinja {

// The code point at s[i] and its byte length; an invalid byte decodes as itself.
void decode_utf8(std::string_view s, size_t i, char32_t& cp, size_t& len);
// The byte offset of every code point, then s.size().
std::vector<size_t> char_offsets(std::string_view s);
size_t char_count(std::string_view s);
std::vector<Text> characters(const Text& t);

// Python's slice semantics: the indices a[start:stop:step] selects from `size` items.
std::vector<size_t> slice_indices(size_t size, std::optional<int64_t> start, std::optional<int64_t> stop,
                                  std::optional<int64_t> step);
Text slice(const Text& t, std::optional<int64_t> start, std::optional<int64_t> stop, std::optional<int64_t> step);

// str.strip / lstrip / rstrip: Unicode whitespace, or the code points of `chars`.
Text strip(const Text& t, bool left, bool right, const std::string* chars = nullptr);
// str.split(sep, maxsplit); no `sep`: runs of whitespace. maxsplit < 0: no limit.
std::vector<Text> split(const Text& t, const std::string* sep, int64_t maxsplit);
// str.replace(old, new, count); count < 0: all.
Text replace(const Text& t, std::string_view old, const Text& with, int64_t count);

// ASCII case mappings (non-ASCII bytes are kept as they are).
std::string upper(std::string s);
std::string lower(std::string s);
std::string title(std::string s);        // str.title(): each run of letters capitalised
std::string title_words(std::string s);  // Jinja's |title: words split at spaces, - ( [ { <
std::string capitalize(std::string s);   // str.capitalize()

}  // namespace parley::chat::jinja
