// Tools of a chat request: parsing, and the grammar of each call format
// accepting what the format's models write (and what the output parser reads).
#include "serve/api/tool_request.h"

#include <gtest/gtest.h>

#include "engine/grammar/grammar.h"
#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

const std::string kBody = R"({"tools": [
  {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7}}, "required": ["city"],
    "additionalProperties": false}}},
  {"type": "function", "function": {"name": "get_time"}}], "tool_choice": "required"})";

bool grammar_takes(const OutputGrammar& g, const std::string& text) {
  grammar::Matcher m(g.grammar);
  return m.accept(text) && m.can_end();
}

TEST(ToolRequest, EachFormatsGrammarTakesWhatItsModelsWrite) {
  GrammarCache cache;
  const ToolSetup tools = parse_tools(json::parse(kBody), kBody);
  EXPECT_EQ(tools.mode, ToolMode::Required);
  struct Case {
    chat::ToolCallFormat format;
    std::string good, bad;
  };
  const Case cases[] = {
      {chat::ToolCallFormat::Hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3}}\n</tool_call>",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"days\": 3}}\n</tool_call>"},
      {chat::ToolCallFormat::Llama3, "{\"name\": \"get_time\", \"parameters\": {}}",
       "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 9}}"},
      {chat::ToolCallFormat::Mistral, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}]",
       "[TOOL_CALLS][{\"name\": \"get_date\", \"arguments\": {}}]"},
      {chat::ToolCallFormat::Generic, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]}",
       "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\", \"x\": 1}}]}"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(chat::tool_call_format_name(c.format)));
    const OutputGrammar g = tool_grammar(tools, c.format, cache);
    EXPECT_TRUE(grammar_takes(g, c.good));
    EXPECT_FALSE(grammar_takes(g, c.bad));
    EXPECT_TRUE(g.triggers.empty());  // required: constrained from the first token
    chat::OutputParser::Options o;
    o.format = c.format;
    o.tools = true;
    chat::OutputParser parser(o);
    parser.feed(c.good);
    parser.finish();
    EXPECT_EQ(parser.calls().size(), 1u);
  }
  // A named function: only it; auto: the format's opening text starts the grammar.
  const std::string named = R"({"tools": [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}],
      "tool_choice": {"type": "function", "function": {"name": "b"}}})";
  const OutputGrammar only_b = tool_grammar(parse_tools(json::parse(named), named), chat::ToolCallFormat::Hermes, cache);
  EXPECT_TRUE(grammar_takes(only_b, "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(grammar_takes(only_b, "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>"));
  const std::string automatic = R"({"tools": [{"type": "function", "function": {"name": "a"}}]})";
  const OutputGrammar lazy = tool_grammar(parse_tools(json::parse(automatic), automatic), chat::ToolCallFormat::Hermes, cache);
  EXPECT_EQ(lazy.triggers, std::vector<std::string>{"<tool_call>"});
  const std::string none = R"({"tools": [{"type": "function", "function": {"name": "a"}}], "tool_choice": "none"})";
  EXPECT_FALSE(tool_grammar(parse_tools(json::parse(none), none), chat::ToolCallFormat::Hermes, cache).grammar);
}

}  // namespace
}  // namespace parley::serve
