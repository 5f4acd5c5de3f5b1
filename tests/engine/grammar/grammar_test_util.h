#pragma once
// Helpers of the grammar tests: whole-text matches, expected errors, and
// random texts of a grammar (a walk that picks one allowed byte at a time).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "util/error.h"

namespace parley::grammar::grammar_test {

inline bool matches(const std::shared_ptr<const Grammar>& g, std::string_view text) {
  Matcher m(g);
  return m.accept(text) && m.can_end();
}

// The message of the parley::Error that f throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A vocabulary of the 256 single bytes: token i is byte i.
inline const TokenTrie& byte_trie() {
  static const TokenTrie trie = [] {
    std::vector<std::string> pieces;
    for (int b = 0; b < 256; ++b) pieces.emplace_back(1, static_cast<char>(b));
    return TokenTrie(pieces);
  }();
  return trie;
}

// A random text of the grammar, or nullopt when the walk passes max_bytes.
// Bytes of JSON's structure and short words are preferred so that strings
// and numbers end and walks finish; any allowed byte (multi-byte UTF-8
// included) is still picked now and then.
inline std::optional<std::string> random_text(const std::shared_ptr<const Grammar>& g, std::mt19937& rng,
                                              size_t max_bytes = 4000) {
  static const std::string kPreferred = "\"{}[],:-.0123456789aeltrnufsxTZ ";
  Matcher m(g);
  std::string out;
  std::vector<uint8_t> mask;
  while (!m.must_end()) {
    if (m.can_end() && rng() % 3 == 0) return out;
    if (out.size() > max_bytes) return std::nullopt;
    m.allowed_tokens(byte_trie(), mask);
    std::vector<int> allowed, preferred;
    for (int b = 0; b < 256; ++b) {
      if (!mask[static_cast<size_t>(b)]) continue;
      allowed.push_back(b);
      if (kPreferred.find(static_cast<char>(b)) != std::string::npos) preferred.push_back(b);
    }
    if (allowed.empty()) {
      EXPECT_TRUE(m.can_end()) << "dead end after " << out;
      return out;
    }
    const auto& pool = !preferred.empty() && rng() % 8 != 0 ? preferred : allowed;
    const char c = static_cast<char>(pool[rng() % pool.size()]);
    EXPECT_TRUE(m.accept(std::string_view(&c, 1)));
    out += c;
  }
  return out;
}

}  // namespace parley::grammar::grammar_test
