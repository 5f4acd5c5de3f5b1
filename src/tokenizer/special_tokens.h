#pragma once
// Finds the texts of control and user-defined tokens (such as "<|im_start|>")
// in input text, so that they can be encoded as those tokens.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley {

class SpecialTokens {
 public:
  explicit SpecialTokens(const Vocab& vocab);

  struct Fragment {
    std::string_view text;  // a view into the split text
    int32_t id;             // the special token, or -1 for plain text
  };
  // Splits `text` at the leftmost-longest occurrences of special token texts.
  std::vector<Fragment> split(std::string_view text) const;

 private:
  // The special tokens by their first byte, longest text first.
  std::array<std::vector<std::pair<std::string, int32_t>>, 256> by_first_byte_;
};

}  // namespace parley
