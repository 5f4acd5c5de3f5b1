#include <utility>

#include "engine/grammar/automaton.h"
#include "engine/grammar/grammar.h"
#include "util/error.h"

namespace parley::grammar {

Matcher::Matcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  if (!grammar_) throw Error("Matcher needs a grammar");
  Automaton& automaton = Automaton::of(grammar_);
  automaton.extract(automaton.initial(), state_);
}

namespace {

// The automaton state after `bytes` from state `s` (kDead: refused).
int32_t walk_bytes(Automaton& automaton, int32_t s, std::string_view bytes) {
  for (const char b : bytes) {
    s = automaton.next(s, static_cast<uint8_t>(b));
    if (s == Automaton::kDead) break;
  }
  return s;
}

}  // namespace

bool Matcher::accept(std::string_view bytes) {
  if (bytes.empty()) return true;
  Automaton& automaton = Automaton::of(grammar_);
  const int32_t s = walk_bytes(automaton, automaton.intern(state_), bytes);
  if (s == Automaton::kDead) return false;
  automaton.extract(s, state_);
  return true;
}

bool Matcher::allows(std::string_view bytes) const {
  if (bytes.empty()) return true;
  Automaton& automaton = Automaton::of(grammar_);
  return walk_bytes(automaton, automaton.intern(state_), bytes) != Automaton::kDead;
}

bool Matcher::can_end() const { return state_.complete; }

bool Matcher::must_end() const { return state_.complete && state_.stacks.empty(); }

// Depth-first over the trie: a node's state is its parent's advanced by the
// node's byte, and a dead state prunes the whole subtree.
void Matcher::allowed_tokens(const TokenTrie& trie, std::vector<uint8_t>& mask) const {
  mask.assign(static_cast<size_t>(trie.size()), 0);
  Automaton& automaton = Automaton::of(grammar_);
  thread_local std::vector<int32_t> at_depth;
  at_depth.resize(static_cast<size_t>(trie.max_depth()) + 1);
  at_depth[0] = automaton.intern(state_);
  const std::vector<TokenTrie::Node>& nodes = trie.nodes();
  const std::vector<int32_t>& ids = trie.token_ids();
  const size_t count = nodes.size() - 1;  // the last is a sentinel
  for (size_t i = 0; i < count;) {
    const TokenTrie::Node& node = nodes[i];
    const int32_t s = automaton.next(at_depth[node.depth - 1u], node.byte);
    if (s == Automaton::kDead) {
      i = node.skip;
      continue;
    }
    at_depth[node.depth] = s;
    for (uint32_t t = node.tokens; t < nodes[i + 1].tokens; ++t) mask[static_cast<size_t>(ids[t])] = 1;
    ++i;
  }
}

}  // namespace parley::grammar
