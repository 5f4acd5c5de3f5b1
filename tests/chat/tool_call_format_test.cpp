// Tool-call formats: detection, triggers, the GBNF grammar's shape, and a
// table of real-format outputs that the grammar must accept and the parser
// reads as calls only.
#include "chat/tool_call_format.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "chat/output_parser.h"
#include "util/error.h"

namespace parley::chat {
namespace {

struct FormatExample {
  ToolCallFormat format;
  bool parallel;  // needs the grammar with parallel calls
  std::string output;
};

// Outputs as the models write them, for tools get_weather and get_time whose
// arguments rules accept any JSON object. Every one must match
// tool_calls_gbnf(format, {{"get_weather", ARGS}, {"get_time", ARGS}}, parallel).
const std::vector<FormatExample> kGrammarExamples = {
    {ToolCallFormat::Hermes, false,
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
    {ToolCallFormat::Hermes, true,
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
     "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n</tool_call>"},
    {ToolCallFormat::Llama3, false, "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"},
    {ToolCallFormat::Llama3, false, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}"},
    {ToolCallFormat::Mistral, false, "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]"},
    {ToolCallFormat::Mistral, true,
     "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abcdefghi\"}, "
     "{\"name\": \"get_time\", \"arguments\": {}, \"id\": \"a1b2c3d4e\"}]"},
    {ToolCallFormat::Generic, false, "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]}"},
    {ToolCallFormat::Generic, true,
     "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
     "{\"name\": \"get_time\", \"arguments\": {}}]}"},
};

const std::vector<std::pair<std::string, std::string>> kGrammarTools = {{"get_weather", "weather-args"},
                                                                 {"get_time", "time-args"}};

TEST(ToolCallFormat, ExamplesAreReadAsCallsOnly) {
  for (const FormatExample& e : kGrammarExamples) {
    OutputParser::Options o;
    o.format = e.format;
    o.tools = true;
    OutputParser p(o);
    const OutputDelta d = p.feed(e.output);
    const OutputDelta f = p.finish();
    EXPECT_EQ(d.content + f.content, "") << e.output;
    EXPECT_EQ(p.calls().size(), e.parallel ? 2u : 1u) << e.output;
  }
}

// Rule names defined and used in a GBNF text: identifiers outside string
// literals and character classes; those followed by " ::= " are defined.
std::pair<std::set<std::string>, std::set<std::string>> gbnf_rules(const std::string& g) {
  std::set<std::string> defined, used;
  const auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; };
  for (size_t i = 0; i < g.size();) {
    const char c = g[i];
    if (c == '"' || c == '[') {  // a literal or a class: skip to its unescaped end
      const char end = c == '"' ? '"' : ']';
      for (++i; i < g.size() && g[i] != end; ++i)
        if (g[i] == '\\') ++i;
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < g.size() && is_name(g[j])) ++j;
      const std::string name = g.substr(i, j - i);
      if (g.compare(j, 5, " ::= ") == 0) defined.insert(name);
      else used.insert(name);
      i = j;
    } else {
      ++i;
    }
  }
  return {defined, used};
}

TEST(ToolCallFormat, GrammarsDefineRootAndOnlyTcHelpers) {
  for (const ToolCallFormat f :
       {ToolCallFormat::Generic, ToolCallFormat::Hermes, ToolCallFormat::Llama3, ToolCallFormat::Mistral}) {
    for (const bool parallel : {false, true}) {
      const std::string g = tool_calls_gbnf(f, kGrammarTools, parallel);
      const auto [defined, used] = gbnf_rules(g);
      EXPECT_TRUE(defined.count("root")) << g;
      for (const std::string& name : defined) EXPECT_TRUE(name == "root" || name.starts_with("tc-")) << name;
      for (const std::string& name : used)
        EXPECT_TRUE(defined.count(name) || name == "weather-args" || name == "time-args") << name << "\n" << g;
      // The grammar starts with the format's trigger text.
      const ToolSyntax s = tool_syntax(f);
      const std::string& trigger = s.triggers.empty() ? s.start_triggers[0] : s.triggers[0];
      std::string escaped;
      for (const char c : trigger) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
      EXPECT_NE(g.find(escaped), std::string::npos) << g;
    }
  }
  EXPECT_THROW(tool_calls_gbnf(ToolCallFormat::Hermes, {}, false), Error);
}

TEST(ToolCallFormat, HermesGrammarText) {
  EXPECT_EQ(tool_calls_gbnf(ToolCallFormat::Hermes, {{"get_weather", "weather-args"}}, false),
            "root ::= tc-wrapped\n"
            "tc-wrapped ::= \"<tool_call>\" tc-ws tc-call tc-ws \"</tool_call>\"\n"
            "tc-call ::= \"{\\\"name\\\":\" tc-ws tc-function tc-ws \"}\"\n"
            "tc-function ::= \"\\\"get_weather\\\"\" tc-ws \",\" tc-ws \"\\\"arguments\\\":\" tc-ws weather-args\n"
            "tc-ws ::= ([ \\t\\n] [ \\t\\n]?)?\n");
}

TEST(ToolCallFormat, Detection) {
  EXPECT_EQ(detect_tool_call_format("{{ '[TOOL_CALLS] [' }}"), ToolCallFormat::Mistral);
  EXPECT_EQ(detect_tool_call_format("{{ '<tool_call>' }}"), ToolCallFormat::Hermes);
  EXPECT_EQ(detect_tool_call_format("<|start_header_id|>ipython<|end_header_id|>"), ToolCallFormat::Llama3);
  EXPECT_EQ(detect_tool_call_format("<|start_header_id|>user<|end_header_id|>"), ToolCallFormat::Generic);
  EXPECT_EQ(detect_tool_call_format(""), ToolCallFormat::Generic);
  EXPECT_EQ(tool_call_format_name(ToolCallFormat::Llama3), "llama3");
}

}  // namespace
}  // namespace parley::chat
