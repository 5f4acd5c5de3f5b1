#include "engine/token_constraint.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace parley {
namespace {

constexpr float kBanned = -std::numeric_limits<float>::infinity();

std::vector<std::string> grammar_pieces(const Tokenizer& tok, int32_t vocab_size) {
  std::vector<std::string> pieces(static_cast<size_t>(vocab_size));
  const int32_t known = std::min(vocab_size, tok.vocab().size());  // rows past the vocabulary pad the model
  for (int32_t id = 0; id < known; ++id)
    if (!tok.is_eog(id)) pieces[size_t(id)] = tok.token_to_piece(id);
  return pieces;
}

std::vector<uint8_t> eog_flags(const Tokenizer& tok, int32_t vocab_size) {
  std::vector<uint8_t> ends(static_cast<size_t>(vocab_size), 0);
  const int32_t known = std::min(vocab_size, tok.vocab().size());
  for (int32_t id = 0; id < known; ++id) ends[size_t(id)] = tok.is_eog(id) ? 1 : 0;
  return ends;
}

}  // namespace

GrammarVocab::GrammarVocab(const Tokenizer& tok, int32_t vocab_size)
    : pieces(grammar_pieces(tok, vocab_size)), ends(eog_flags(tok, vocab_size)), trie(pieces) {}

TokenConstraint::TokenConstraint(std::shared_ptr<const grammar::Grammar> g, std::vector<std::string> triggers,
                                 std::shared_ptr<const GrammarVocab> vocab, const Tokenizer& tok, int32_t prev_token,
                                 std::vector<int32_t> stop_ids, bool ignore_eos)
    : matcher_(std::move(g)),
      triggers_(std::move(triggers)),
      vocab_(std::move(vocab)),
      tok_(&tok),
      prev_(prev_token),
      stop_ids_(std::move(stop_ids)),
      ignore_eos_(ignore_eos),
      active_(triggers_.empty()) {}

bool TokenConstraint::ends_generation(int32_t token) const {
  return (!ignore_eos_ && vocab_->ends[size_t(token)]) ||
         std::find(stop_ids_.begin(), stop_ids_.end(), token) != stop_ids_.end();
}

// The bytes the token adds to the output: as the detokenizer renders it
// after `prev_`. That is the vocabulary's piece except right after BOS
// (a SentencePiece space prefix is dropped there), where it is made anew.
std::string_view TokenConstraint::piece(int32_t token) {
  const std::string& plain = vocab_->pieces[size_t(token)];
  if (plain.empty() || !after_bos()) return plain;
  after_bos_ = tok_->token_to_piece_in_text(token, false, prev_);
  return after_bos_;
}

bool TokenConstraint::allows(int32_t token) {
  if (ends_generation(token)) return matcher_.can_end();
  const std::string_view bytes = piece(token);
  return !bytes.empty() && matcher_.allows(bytes);
}

void TokenConstraint::mask(float* logits) {
  if (!active_) return;
  const auto vocab = int32_t(vocab_->pieces.size());
  if (after_bos()) {
    // Pieces differ from the trie's here (no space prefix): token by token, once.
    for (int32_t t = 0; t < vocab; ++t)
      if (!allows(t)) logits[t] = kBanned;
    return;
  }
  matcher_.allowed_tokens(vocab_->trie, allowed_);
  const bool can_end = matcher_.can_end();
  for (int32_t t = 0; t < vocab; ++t) {
    const bool ok = ends_generation(t) ? can_end : allowed_[size_t(t)] != 0;
    if (!ok) logits[t] = kBanned;
  }
}

int32_t TokenConstraint::sample(Sampler& sampler, float* logits) {
  if (!active_) return sampler.sample(logits);
  sampler.apply_penalties(logits);
  if (!sampler.truncates()) {
    const int32_t token = sampler.sample_penalised(logits);
    if (allows(token)) return token;
  }
  mask(logits);
  return sampler.sample_penalised(logits);
}

void TokenConstraint::accept(int32_t token) {
  const std::string_view bytes = ends_generation(token) ? std::string_view() : piece(token);
  if (!bytes.empty()) {
    if (!active_) look_for_trigger(bytes);
    else matcher_.accept(bytes);
  }
  prev_ = token;
}

// A trigger may arrive split over tokens, and the token that completes it may
// carry the call's first bytes: the grammar is fed from the trigger's start
// (grammars that begin with it), else from its end.
void TokenConstraint::look_for_trigger(std::string_view text) {
  recent_ += text;
  for (const std::string& trigger : triggers_) {
    const size_t at = recent_.find(trigger);
    if (at == std::string::npos) continue;
    active_ = true;
    grammar::Matcher from_start = matcher_;
    if (from_start.accept(std::string_view(recent_).substr(at))) matcher_ = std::move(from_start);
    else if (!matcher_.accept(std::string_view(recent_).substr(at + trigger.size()))) active_ = false;
    recent_.clear();
    if (active_) return;
  }
  size_t longest = 0;
  for (const std::string& trigger : triggers_) longest = std::max(longest, trigger.size());
  if (recent_.size() > longest) recent_.erase(0, recent_.size() - longest);
}

bool TokenConstraint::must_end() const {
  return active_ && matcher_.must_end();
}

}  // namespace parley
