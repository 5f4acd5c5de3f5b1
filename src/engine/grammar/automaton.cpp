#include "engine/grammar/automaton.h"

#include <algorithm>

#include "engine/grammar/utf8_step.h"
#include "util/error.h"

namespace parley::grammar {

namespace {

// Past these an automaton starts over (at the next of()), bounding each
// thread's memory per grammar to tens of MiB.
constexpr size_t kMaxCachedStates = 16384;
constexpr size_t kMaxCachedFrames = size_t{1} << 20;
// Grammars whose automata a thread keeps, most recently used first.
constexpr size_t kAutomataPerThread = 4;

}  // namespace

Automaton::Automaton(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {}

Automaton& Automaton::of(const std::shared_ptr<const Grammar>& grammar) {
  thread_local std::vector<std::unique_ptr<Automaton>> automata;
  auto it = std::find_if(automata.begin(), automata.end(), [&](const auto& a) { return a->grammar_ == grammar; });
  if (it == automata.end()) {
    if (automata.size() == kAutomataPerThread) automata.pop_back();
    automata.insert(automata.begin(), std::make_unique<Automaton>(grammar));
  } else {
    std::rotate(automata.begin(), it, it + 1);
  }
  Automaton& a = *automata.front();
  if (a.states_.size() > kMaxCachedStates || a.frames_.size() > kMaxCachedFrames) a.clear();
  return a;
}

void Automaton::clear() {
  frames_.clear();
  frame_ids_.clear();
  states_.clear();
  state_ids_.clear();
  next_.clear();
  seen_.clear();
  initial_ = kUnknown;
}

int32_t Automaton::frame(int32_t pos, int32_t parent) {
  const uint64_t key = static_cast<uint64_t>(static_cast<uint32_t>(pos)) << 32 | static_cast<uint32_t>(parent + 1);
  auto [it, added] = frame_ids_.emplace(key, static_cast<int32_t>(frames_.size()));
  if (added) {
    frames_.push_back({pos, parent});
    seen_.push_back(0);
  }
  return it->second;
}

void Automaton::next_stamp() {
  if (++stamp_ == 0) {  // wrapped: forget every old mark
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
}

// Expands the frame until every stack's top is a character: a rule element
// becomes one frame per alternative (its caller resuming after it, unless the
// rule was the last element: then the caller's caller, so that repetitions do
// not deepen the stack), an End returns to the caller. Tops go to scratch_;
// complete is set when a stack empties. Frames expanded already in this step
// are skipped (same frame, same result).
void Automaton::expand(int32_t start, bool& complete) {
  const Grammar& g = *grammar_;
  work_.push_back(start);
  while (!work_.empty()) {
    const int32_t id = work_.back();
    work_.pop_back();
    if (seen_[static_cast<size_t>(id)] == stamp_) continue;
    seen_[static_cast<size_t>(id)] = stamp_;
    const Frame f = frames_[static_cast<size_t>(id)];
    const Element e = g.elements[static_cast<size_t>(f.pos)];
    if (e.kind == ElementKind::Char) {
      if (!g.classes[static_cast<size_t>(e.arg)].empty()) scratch_.push_back(id);
    } else if (e.kind == ElementKind::End) {
      if (f.parent < 0) {
        complete = true;
      } else {
        work_.push_back(f.parent);
      }
    } else {
      const bool last = g.elements[static_cast<size_t>(f.pos) + 1].kind == ElementKind::End;
      const int32_t resume = last ? f.parent : frame(f.pos + 1, f.parent);
      const auto rule = static_cast<size_t>(e.arg);
      for (int32_t a = g.rule_alts[rule]; a < g.rule_alts[rule + 1]; ++a) {
        work_.push_back(frame(g.alternatives[static_cast<size_t>(a)], resume));
      }
    }
  }
}

int32_t Automaton::add_state(uint32_t utf8, bool complete) {
  if (scratch_.size() > kMaxStacks) {
    throw Error("grammar too ambiguous: more than " + std::to_string(kMaxStacks) + " parse stacks alive at once");
  }
  key_.assign(reinterpret_cast<const char*>(&utf8), sizeof utf8);
  key_.push_back(complete ? 1 : 0);
  key_.append(reinterpret_cast<const char*>(scratch_.data()), scratch_.size() * sizeof(int32_t));
  auto [it, added] = state_ids_.emplace(key_, static_cast<int32_t>(states_.size()));
  if (added) {
    states_.push_back({scratch_, utf8, complete});
    next_.resize(next_.size() + 256, kUnknown);
  }
  return it->second;
}

int32_t Automaton::initial() {
  if (initial_ != kUnknown) return initial_;
  const Grammar& g = *grammar_;
  next_stamp();
  scratch_.clear();
  bool complete = false;
  const auto root = static_cast<size_t>(g.root);
  for (int32_t a = g.rule_alts[root]; a < g.rule_alts[root + 1]; ++a) {
    expand(frame(g.alternatives[static_cast<size_t>(a)], -1), complete);
  }
  std::sort(scratch_.begin(), scratch_.end());
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  initial_ = add_state(0, complete);
  return initial_;
}

int32_t Automaton::compute(int32_t state, uint8_t byte) {
  const Utf8Step step = utf8_step(states_[static_cast<size_t>(state)].utf8, byte);
  int32_t to = kDead;
  if (step.kind != Utf8Step::Invalid) {
    scratch_.clear();
    bool complete = false;
    const std::vector<int32_t>& tops = states_[static_cast<size_t>(state)].tops;
    if (step.kind == Utf8Step::Partial) {
      // Keep the stacks that some completion of the character could advance.
      for (const int32_t t : tops) {
        if (top_class(t).intersects(step.lo, step.hi)) scratch_.push_back(t);
      }
    } else {
      next_stamp();
      for (const int32_t t : tops) {
        if (!top_class(t).contains(step.lo)) continue;
        const Frame f = frames_[static_cast<size_t>(t)];
        expand(frame(f.pos + 1, f.parent), complete);
      }
      std::sort(scratch_.begin(), scratch_.end());
      scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
    }
    if (!scratch_.empty() || complete) to = add_state(step.kind == Utf8Step::Partial ? step.state : 0, complete);
  }
  next_[static_cast<size_t>(state) << 8 | byte] = to;
  return to;
}

int32_t Automaton::intern(const Matcher::State& state) {
  scratch_.clear();
  const std::vector<int32_t>& s = state.stacks;
  for (size_t i = 0; i < s.size();) {
    const auto depth = static_cast<size_t>(s[i++]);
    int32_t parent = -1;
    for (size_t d = 0; d < depth; ++d) parent = frame(s[i++], parent);
    scratch_.push_back(parent);
  }
  std::sort(scratch_.begin(), scratch_.end());
  return add_state(state.utf8, state.complete);
}

void Automaton::extract(int32_t state, Matcher::State& out) const {
  const StateData& data = states_[static_cast<size_t>(state)];
  out.stacks.clear();
  for (const int32_t top : data.tops) {
    const size_t at = out.stacks.size();
    out.stacks.push_back(0);
    for (int32_t f = top; f >= 0; f = frames_[static_cast<size_t>(f)].parent) {
      out.stacks.push_back(frames_[static_cast<size_t>(f)].pos);
    }
    out.stacks[at] = static_cast<int32_t>(out.stacks.size() - at - 1);
    std::reverse(out.stacks.begin() + static_cast<std::ptrdiff_t>(at) + 1, out.stacks.end());
  }
  out.utf8 = data.utf8;
  out.complete = data.complete;
}

}  // namespace parley::grammar
