#pragma once
// Finds the texts of added tokens in input text before it is pre-tokenized, so
// that they are encoded as those tokens (as Hugging Face tokenizers and
// llama.cpp do): user-defined tokens (such as GPT-NeoX's runs of spaces) always,
// control and unknown tokens (such as "<|im_start|>") only when special-token
// parsing is on.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace parley {

class SpecialTokens {
 public:
  explicit SpecialTokens(const Vocab& vocab);

  struct Fragment {
    std::string_view text;  // a view into the split text
    int32_t id;             // the added token, or -1 for plain text
  };
  // Splits `text` at the leftmost-longest occurrences of added token texts:
  // user-defined ones always, control and unknown ones only if `parse_special`.
  std::vector<Fragment> split(std::string_view text, bool parse_special = true) const;

  bool has_user_defined() const { return has_user_defined_; }

 private:
  struct Candidate {
    std::string text;
    int32_t id;
    bool user_defined;  // matched even when special tokens are not parsed
  };
  // The added tokens by their first byte, longest text first.
  std::array<std::vector<Candidate>, 256> by_first_byte_;
  bool has_user_defined_ = false;
};

}  // namespace parley
