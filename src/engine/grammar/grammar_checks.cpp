#include "engine/grammar/grammar_checks.h"

#include <string>
#include <utility>
#include <vector>

#include "util/error.h"

namespace parley::grammar {

namespace {

std::string rule_at(const ParsedRule& rule) {
  return "rule '" + rule.name + "' (" + std::to_string(rule.line) + ":" + std::to_string(rule.column) + ")";
}

void check_defined(const ParsedGrammar& grammar) {
  for (const ParsedRule& rule : grammar.rules) {
    if (!rule.defined) {
      throw Error("GBNF " + std::to_string(rule.line) + ":" + std::to_string(rule.column) + ": undefined rule '" +
                  rule.name + "'");
    }
  }
}

// Rules for which some alternative has every symbol `good` (a least fixpoint):
// with good = "nullable rule", the nullable rules; with good = "class not empty
// or productive rule", the productive ones.
template <typename SymbolOk>
std::vector<bool> fixpoint(const ParsedGrammar& grammar, SymbolOk ok) {
  std::vector<bool> in(grammar.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < grammar.rules.size(); ++r) {
      if (in[r]) continue;
      for (const auto& alt : grammar.rules[r].alternatives) {
        bool all = true;
        for (const Symbol& s : alt) all = all && ok(s, in);
        if (all) {
          in[r] = changed = true;
          break;
        }
      }
    }
  }
  return in;
}

// Edges r -> s for each rule s that r can start with: referenced after only
// nullable symbols. A cycle among them is left recursion.
std::vector<std::vector<int32_t>> left_edges(const ParsedGrammar& grammar, const std::vector<bool>& nullable) {
  std::vector<std::vector<int32_t>> edges(grammar.rules.size());
  for (size_t r = 0; r < grammar.rules.size(); ++r) {
    for (const auto& alt : grammar.rules[r].alternatives) {
      for (const Symbol& s : alt) {
        if (!s.is_rule) break;
        edges[r].push_back(s.index);
        if (!nullable[static_cast<size_t>(s.index)]) break;
      }
    }
  }
  return edges;
}

// Iterative depth-first search (grammars may nest deeply): returns a rule on a
// cycle, or -1.
int32_t find_cycle(const std::vector<std::vector<int32_t>>& edges) {
  enum : uint8_t { Unseen, Open, Done };
  std::vector<uint8_t> mark(edges.size(), Unseen);
  std::vector<std::pair<int32_t, size_t>> path;  // rule, next edge to follow
  for (size_t start = 0; start < edges.size(); ++start) {
    if (mark[start] != Unseen) continue;
    path.emplace_back(static_cast<int32_t>(start), 0);
    mark[start] = Open;
    while (!path.empty()) {
      auto& [rule, next] = path.back();
      const auto& out = edges[static_cast<size_t>(rule)];
      if (next == out.size()) {
        mark[static_cast<size_t>(rule)] = Done;
        path.pop_back();
        continue;
      }
      const int32_t to = out[next++];
      if (mark[static_cast<size_t>(to)] == Open) return to;
      if (mark[static_cast<size_t>(to)] == Unseen) {
        mark[static_cast<size_t>(to)] = Open;
        path.emplace_back(to, 0);
      }
    }
  }
  return -1;
}

}  // namespace

void check_grammar(const ParsedGrammar& grammar, int32_t root) {
  check_defined(grammar);
  const auto productive = fixpoint(grammar, [&](const Symbol& s, const std::vector<bool>& in) {
    return s.is_rule ? in[static_cast<size_t>(s.index)] : !grammar.classes[static_cast<size_t>(s.index)].empty();
  });
  const ParsedRule& root_rule = grammar.rules[static_cast<size_t>(root)];
  if (!productive[static_cast<size_t>(root)]) throw Error("GBNF: " + rule_at(root_rule) + " cannot match any text");
  const auto nullable = fixpoint(grammar, [](const Symbol& s, const std::vector<bool>& in) {
    return s.is_rule && in[static_cast<size_t>(s.index)];
  });
  const int32_t cycle = find_cycle(left_edges(grammar, nullable));
  if (cycle >= 0) {
    throw Error("GBNF: left recursion: " + rule_at(grammar.rules[static_cast<size_t>(cycle)]) +
                " can reach itself without consuming input");
  }
}

}  // namespace parley::grammar
