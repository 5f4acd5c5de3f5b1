#pragma once
// The merge loop shared by SentencePiece (by score) and byte-level BPE (by
// merge rank): starting from one symbol per character, repeatedly merge the
// adjacent pair with the highest priority (ties: the leftmost) until no pair
// can merge. A priority queue with lazily discarded stale entries over a
// linked list of symbols keeps it O(n log n).
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

namespace parley::detail {

struct Symbol {
  int32_t id;            // token id, -1 when the text is no token (it never merges)
  uint32_t begin, end;   // the bytes of the input it covers
};

struct Merge {
  double priority;  // higher merges first
  int32_t merged;   // the token id of the pair's concatenation
};

// `pair(left_id, right_id)` -> std::optional<Merge> says whether and how two
// adjacent tokens merge.
template <class PairFn>
std::vector<Symbol> merge_symbols(const std::vector<Symbol>& initial, PairFn pair) {
  struct Node {
    Symbol sym;
    int32_t prev, next;  // -1 at the ends
  };
  struct Candidate {
    Merge merge;
    int32_t left, left_id, right_id;
    bool operator<(const Candidate& o) const {  // max-heap order: best on top
      if (merge.priority != o.merge.priority) return merge.priority < o.merge.priority;
      return left > o.left;
    }
  };

  const int32_t n = int32_t(initial.size());
  std::vector<Node> nodes(n);
  for (int32_t i = 0; i < n; ++i) nodes[i] = {initial[i], i - 1, i + 1 < n ? i + 1 : -1};

  std::priority_queue<Candidate> queue;
  auto consider = [&](int32_t left) {
    if (left < 0 || nodes[left].next < 0) return;
    const int32_t l = nodes[left].sym.id, r = nodes[nodes[left].next].sym.id;
    if (l < 0 || r < 0) return;
    if (std::optional<Merge> m = pair(l, r)) queue.push({*m, left, l, r});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Node& left = nodes[c.left];
    // Stale: the left symbol was merged away or into something else since.
    if (left.sym.id != c.left_id || left.next < 0 || nodes[left.next].sym.id != c.right_id) continue;
    Node& right = nodes[left.next];
    left.sym = {c.merge.merged, left.sym.begin, right.sym.end};
    right.sym.id = -2;  // dead: no candidate can match it again
    left.next = right.next;
    if (right.next >= 0) nodes[right.next].prev = c.left;
    consider(left.prev);
    consider(c.left);
  }

  std::vector<Symbol> out;
  for (int32_t i = n > 0 ? 0 : -1; i >= 0; i = nodes[i].next) out.push_back(nodes[i].sym);
  return out;
}

}  // namespace parley::detail
