#pragma once
// The prompts a load test sends. Synthetic prompts are made of common English
// words, each one token in SentencePiece (Llama) vocabularies, so that N words
// are about N prompt tokens; or they come from a file (one prompt per line, or
// JSONL lines holding {"prompt": "..."} or {"messages": [...]}).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parley::loadtest {

// "N" (fixed) or "A:B" (uniform in [A, B]).
struct LengthRange {
  int32_t lo = 0, hi = 0;
  static LengthRange parse(const std::string& text, const std::string& flag);
  int32_t sample(std::mt19937_64& rng) const;
};

// `n` words drawn from the vocabulary with `rng`, separated by spaces.
std::string random_words(int32_t n, std::mt19937_64& rng);

// Prompts files: each entry becomes a chat message array.
std::vector<nlohmann::json> load_prompts_file(const std::string& path);

// Chat messages as one completion prompt: the contents joined by newlines.
std::string messages_text(const nlohmann::json& messages);

class PromptSource {
 public:
  PromptSource(LengthRange tokens, int32_t shared_prefix_tokens, uint64_t seed, std::vector<nlohmann::json> file = {});

  // The messages that open conversation `index`: the shared prefix (the
  // same on every prompt) and then text of its own.
  nlohmann::json opening(uint64_t index, std::mt19937_64& rng) const;
  // A later user turn of a conversation.
  std::string follow_up(uint64_t index, std::mt19937_64& rng) const;
  const std::string& prefix() const { return prefix_; }

 private:
  LengthRange tokens_;
  std::string prefix_;
  std::vector<nlohmann::json> file_;
};

}  // namespace parley::loadtest
