#pragma once
// A grammar applied to one sequence's sampling: which tokens may come next so
// that the output stays a match of the grammar (docs/api.md, "Structured
// output"). With triggers the grammar waits, unconstrained, until one of
// them appears in the output (a tool call starting in `tool_choice: auto`),
// and from there constrains the text that begins with it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/sampler.h"
#include "tokenizer/tokenizer.h"

namespace parley {

// The vocabulary as a grammar sees it, built once per model on first use:
// each token's bytes in a trie, end-of-generation tokens marked apart.
struct GrammarVocab {
  explicit GrammarVocab(const Tokenizer& tok, int32_t vocab_size);
  std::vector<std::string> pieces;  // "" for tokens a grammar never produces
  std::vector<uint8_t> ends;        // end-of-generation tokens
  grammar::TokenTrie trie;
};

class TokenConstraint {
 public:
  // `stop_ids`, like end-of-generation tokens, may be drawn once the grammar can end.
  TokenConstraint(std::shared_ptr<const grammar::Grammar> g, std::vector<std::string> triggers,
                  std::shared_ptr<const GrammarVocab> vocab, const Tokenizer& tok, int32_t prev_token,
                  std::vector<int32_t> stop_ids, bool ignore_eos);

  // The next token: drawn from the distribution restricted to the tokens the
  // grammar allows (`logits` may be modified). A draw from the unrestricted
  // distribution is kept when the grammar allows it, which is exact when
  // the sampler does not truncate (greedy or temperature only) and costs one
  // token's check instead of a mask over the vocabulary.
  int32_t sample(Sampler& sampler, float* logits);
  // Sets the logits of the tokens the grammar forbids to -inf (logprobs
  // then describe the distribution the token is drawn from).
  void mask(float* logits);
  void accept(int32_t token);  // the token was chosen
  bool must_end() const;       // complete, and nothing may follow
  bool active() const { return active_; }

 private:
  bool allows(int32_t token);
  bool ends_generation(int32_t token) const;
  bool after_bos() const { return prev_ >= 0 && prev_ == tok_->vocab().bos; }
  std::string_view piece(int32_t token);
  void look_for_trigger(std::string_view text);

  grammar::Matcher matcher_;
  std::vector<std::string> triggers_;
  std::shared_ptr<const GrammarVocab> vocab_;
  const Tokenizer* tok_;
  int32_t prev_;
  std::vector<int32_t> stop_ids_;
  bool ignore_eos_;
  bool active_;
  std::string recent_;     // output not yet constrained, searched for a trigger
  std::string after_bos_;  // piece()'s bytes right after BOS
  std::vector<uint8_t> allowed_;
};

}  // namespace parley
