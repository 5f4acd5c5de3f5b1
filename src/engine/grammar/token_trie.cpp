#include <algorithm>

#include "engine/grammar/grammar.h"
#include "util/error.h"

namespace parley::grammar {

// Sorting the pieces makes the trie's depth-first order the order in which
// their nodes first appear: each piece adds nodes for the bytes past what it
// shares with the previous one. A node's subtree ends where the next node of
// its depth or less begins.
TokenTrie::TokenTrie(const std::vector<std::string>& pieces) : size_(static_cast<int32_t>(pieces.size())) {
  std::vector<int32_t> order;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].size() > UINT16_MAX) throw Error("token " + std::to_string(i) + " is longer than 65535 bytes");
    if (!pieces[i].empty()) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return pieces[a] < pieces[b]; });
  std::vector<uint32_t> open;  // open[d]: the node of depth d + 1 on the current path
  const std::string* previous = nullptr;
  for (const int32_t id : order) {
    const std::string& piece = pieces[static_cast<size_t>(id)];
    size_t shared = 0;
    if (previous != nullptr) {
      shared = static_cast<size_t>(std::mismatch(piece.begin(), piece.end(), previous->begin(), previous->end()).first -
                                   piece.begin());
    }
    for (size_t d = shared; d < open.size(); ++d) nodes_[open[d]].skip = static_cast<uint32_t>(nodes_.size());
    open.resize(shared);
    for (size_t d = shared; d < piece.size(); ++d) {
      open.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back({0, static_cast<uint32_t>(token_ids_.size()), static_cast<uint16_t>(d + 1),
                        static_cast<uint8_t>(piece[d])});
    }
    token_ids_.push_back(id);
    max_depth_ = std::max(max_depth_, static_cast<int32_t>(piece.size()));
    previous = &piece;
  }
  for (const uint32_t n : open) nodes_[n].skip = static_cast<uint32_t>(nodes_.size());
  nodes_.push_back({static_cast<uint32_t>(nodes_.size()), static_cast<uint32_t>(token_ids_.size()), 0, 0});
}

}  // namespace parley::grammar
