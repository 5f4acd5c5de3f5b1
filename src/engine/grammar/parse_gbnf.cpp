// parse_gbnf: the GBNF text parsed, checked, and laid out flat for the automaton.
#include <memory>
#include <string>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_checks.h"
#include "engine/grammar/grammar_rules.h"
#include "util/error.h"

namespace parley::grammar {

namespace {

std::shared_ptr<Grammar> lay_out(ParsedGrammar&& parsed, int32_t root) {
  auto grammar = std::make_shared<Grammar>();
  grammar->classes = std::move(parsed.classes);
  grammar->root = root;
  grammar->elements.reserve(static_cast<size_t>(parsed.element_count));
  for (const ParsedRule& rule : parsed.rules) {
    grammar->rule_alts.push_back(static_cast<int32_t>(grammar->alternatives.size()));
    for (const auto& alt : rule.alternatives) {
      grammar->alternatives.push_back(static_cast<int32_t>(grammar->elements.size()));
      for (const Symbol& s : alt) {
        grammar->elements.push_back({s.is_rule ? ElementKind::Rule : ElementKind::Char, s.index});
      }
      grammar->elements.push_back({ElementKind::End, 0});
    }
  }
  grammar->rule_alts.push_back(static_cast<int32_t>(grammar->alternatives.size()));
  return grammar;
}

}  // namespace

std::shared_ptr<const Grammar> parse_gbnf(std::string_view text, std::string_view root) {
  ParsedGrammar parsed = parse_gbnf_text(text);
  int32_t root_id = -1;
  for (size_t r = 0; r < parsed.rules.size(); ++r) {
    if (!parsed.rules[r].generated && parsed.rules[r].name == root) root_id = static_cast<int32_t>(r);
  }
  if (root_id < 0) throw Error("GBNF: no rule named '" + std::string(root) + "' (the root)");
  check_grammar(parsed, root_id);
  return lay_out(std::move(parsed), root_id);
}

}  // namespace parley::grammar
