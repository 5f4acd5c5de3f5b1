#pragma once
// The matcher's states as a lazily built deterministic automaton over bytes.
//
// A parse stack is a chain of frames (element position, caller frame), kept
// hash-consed in one arena so that equal stacks are the same node id; a state
// is a sorted set of stack tops plus the UTF-8 character in progress, also
// interned. A transition (state, byte) is computed once, by advancing every
// stack whose top character class admits the byte and expanding rule
// references until every top is a character again, and is then a table
// lookup: inside a JSON string, for instance, every byte leads back to the
// same state, so walking the vocabulary's trie costs one load per node.
//
// The automaton only grows; it is per thread and per grammar (of()), so the
// immutable Grammar needs no lock, and it is dropped and rebuilt when it gets
// large. State ids are valid until the next of() on the same thread.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_rules.h"

namespace parley::grammar {

class Automaton {
 public:
  static constexpr int32_t kDead = -1;

  explicit Automaton(std::shared_ptr<const Grammar> grammar);
  // This thread's automaton for the grammar.
  static Automaton& of(const std::shared_ptr<const Grammar>& grammar);

  int32_t initial();
  int32_t intern(const Matcher::State& state);
  void extract(int32_t state, Matcher::State& out) const;
  // kDead when no stack survives the byte.
  int32_t next(int32_t state, uint8_t byte) {
    const int32_t to = next_[static_cast<size_t>(state) << 8 | byte];
    return to != kUnknown ? to : compute(state, byte);
  }

 private:
  static constexpr int32_t kUnknown = -2;

  struct Frame {
    int32_t pos;     // element position in Grammar::elements
    int32_t parent;  // caller's frame (its pos: where to resume), -1 at the bottom
  };
  struct StateData {
    std::vector<int32_t> tops;  // frames whose element is a character class, sorted
    uint32_t utf8 = 0;
    bool complete = false;
  };

  void clear();
  int32_t frame(int32_t pos, int32_t parent);
  void expand(int32_t start, bool& complete);
  int32_t compute(int32_t state, uint8_t byte);
  int32_t add_state(uint32_t utf8, bool complete);  // of scratch_
  void next_stamp();
  const CharClass& top_class(int32_t frame_id) const {
    const auto pos = static_cast<size_t>(frames_[static_cast<size_t>(frame_id)].pos);
    return grammar_->classes[static_cast<size_t>(grammar_->elements[pos].arg)];
  }

  std::shared_ptr<const Grammar> grammar_;
  std::vector<Frame> frames_;
  std::unordered_map<uint64_t, int32_t> frame_ids_;
  std::vector<StateData> states_;
  std::unordered_map<std::string, int32_t> state_ids_;
  std::vector<int32_t> next_;  // 256 per state
  int32_t initial_ = kUnknown;
  // Scratch of compute(), kept to avoid allocating per transition.
  std::vector<uint32_t> seen_;  // frame expanded in the current step when == stamp_
  uint32_t stamp_ = 0;
  std::vector<int32_t> work_, scratch_;
  std::string key_;
};

}  // namespace parley::grammar
