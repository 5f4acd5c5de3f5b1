// OutputParser: content, reasoning and tool calls split out of real-format
// model output, the same whatever pieces the text arrives in.
#include "chat/output_parser.h"

#include <gtest/gtest.h>

#include <map>

namespace parley::chat {
namespace {

// What a client rebuilds from the deltas, and the parser's final calls.
struct Collected {
  std::string content, reasoning;
  std::map<int, ParsedToolCall> streamed;  // the deltas of each call joined
  std::vector<ParsedToolCall> calls;
  int names_given = 0;                     // deltas that carried a name

  void add(const OutputDelta& d) {
    content += d.content;
    reasoning += d.reasoning;
    for (const ToolCallDelta& t : d.tool_calls) {
      ParsedToolCall& c = streamed[t.index];
      c.id += t.id;
      c.name += t.name;
      c.arguments += t.arguments;
      names_given += !t.name.empty();
    }
  }
};

OutputParser::Options options(ToolCallFormat format, bool tools = true, bool reasoning = false) {
  OutputParser::Options o;
  o.format = format;
  o.tools = tools;
  o.reasoning = reasoning;
  o.make_id = [n = 0]() mutable { return "call_" + std::to_string(++n); };
  return o;
}

Collected parse_pieces(const OutputParser::Options& o, const std::vector<std::string_view>& pieces) {
  OutputParser p(o);
  Collected c;
  for (std::string_view piece : pieces) c.add(p.feed(piece));
  c.add(p.finish());
  c.calls = p.calls();
  return c;
}

Collected parse(const OutputParser::Options& o, std::string_view text) { return parse_pieces(o, {text}); }

void expect_same(const Collected& a, const Collected& b, const std::string& how) {
  EXPECT_EQ(a.content, b.content) << how;
  EXPECT_EQ(a.reasoning, b.reasoning) << how;
  EXPECT_EQ(a.calls, b.calls) << how;
  EXPECT_EQ(a.streamed, b.streamed) << how;
  EXPECT_EQ(a.names_given, b.names_given) << how;
}

// Whole, in two pieces at every byte, and byte by byte: the same result.
Collected parse_every_way(const OutputParser::Options& o, std::string_view text) {
  const Collected whole = parse(o, text);
  for (size_t at = 0; at <= text.size(); ++at)
    expect_same(whole, parse_pieces(o, {text.substr(0, at), text.substr(at)}), "split at " + std::to_string(at));
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
  expect_same(whole, parse_pieces(o, bytes), "byte by byte");
  // The streamed deltas rebuild exactly the calls that completed.
  for (size_t i = 0; i < whole.calls.size(); ++i) {
    EXPECT_EQ(whole.streamed.at(int(i)), whole.calls[i]) << i;
  }
  EXPECT_EQ(size_t(whole.names_given), whole.streamed.size());
  return whole;
}

ParsedToolCall call(std::string id, std::string name, std::string args) { return {id, name, args}; }

TEST(OutputParser, HermesCallAsQwen25WritesIt) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes),
                                 "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\"}"));
}

TEST(OutputParser, HermesContentBeforeParallelCalls) {
  const auto r = parse_every_way(
      options(ToolCallFormat::Hermes),
      "Let me check both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"London, \\\"UK\\\" {x}\"}}\n</tool_call>");
  EXPECT_EQ(r.content, "Let me check both.");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\"}"));
  EXPECT_EQ(r.calls[1], call("call_2", "get_weather", "{\"city\": \"London, \\\"UK\\\" {x}\"}"));
}

TEST(OutputParser, ContentAfterACallIsContent) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes),
                                 "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n\nDone.\n");
  EXPECT_EQ(r.content, "Done.\n");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].arguments, "{}");
}

TEST(OutputParser, Llama31JsonCall) {
  const auto r = parse_every_way(options(ToolCallFormat::Llama3),
                                 "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": [1, 2]}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\", \"days\": [1, 2]}"));
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, Llama31CallAfterPythonTag) {
  const auto r = parse_every_way(options(ToolCallFormat::Llama3),
                                 "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\"}"));
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, Llama31JsonInsideProseIsContent) {
  const std::string text = "Write {\"name\": \"x\", \"parameters\": {}} to call x.";
  const auto r = parse_every_way(options(ToolCallFormat::Llama3), text);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(r.content, text);
}

TEST(OutputParser, MistralCallList) {
  const auto r = parse_every_way(options(ToolCallFormat::Mistral),
                                 "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, "
                                 "\"id\": \"abcdefghi\"},{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}]");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\"}"));
  EXPECT_EQ(r.calls[1], call("call_2", "get_time", "{\"zone\": \"CET\"}"));
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, MistralAsItsTemplateWritesIt) {
  const auto r = parse_every_way(options(ToolCallFormat::Mistral),
                                 " [TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, GenericCalls) {
  const auto r = parse_every_way(options(ToolCallFormat::Generic),
                                 "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
                                 "{\"name\": \"get_time\", \"arguments\": {}}]}");
  ASSERT_EQ(r.calls.size(), 2u);
  EXPECT_EQ(r.calls[0], call("call_1", "get_weather", "{\"city\": \"Paris\"}"));
  EXPECT_EQ(r.calls[1], call("call_2", "get_time", "{}"));
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, MalformedCallsAreContent) {
  for (const std::string text : {
           "<tool_call>\nnot json\n</tool_call>",
           "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"\n</tool_call>",
           "<tool_call>\n{\"name\": 7, \"arguments\": {}}\n</tool_call>",
           "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": tru}}\n</tool_call>",
           "Sure.\n<tool_call>\n{\"name\": \"get_wea",
       }) {
    const auto r = parse_every_way(options(ToolCallFormat::Hermes), text);
    EXPECT_TRUE(r.calls.empty()) << text;
    EXPECT_EQ(r.content, text);
  }
}

TEST(OutputParser, WithoutToolsCallsAreContent) {
  const std::string text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  const auto r = parse_every_way(options(ToolCallFormat::Hermes, false), text);
  EXPECT_EQ(r.content, text);
  EXPECT_TRUE(r.streamed.empty());
}

TEST(OutputParser, NoHalfMarkerIsEverContent) {
  OutputParser p(options(ToolCallFormat::Hermes));
  EXPECT_EQ(p.feed("Checking <tool").content, "Checking");
  EXPECT_EQ(p.feed("_ca").content, "");
  const OutputDelta d = p.feed("ll>\n{\"name\": \"f\", \"arguments\": {\"x\"");
  EXPECT_EQ(d.content, "");
  ASSERT_EQ(d.tool_calls.size(), 1u);
  EXPECT_EQ(d.tool_calls[0].name, "f");
  EXPECT_EQ(d.tool_calls[0].arguments, "{\"x\"");
  const OutputDelta e = p.feed(": 1}}\n</tool_call>");
  ASSERT_EQ(e.tool_calls.size(), 1u);
  EXPECT_EQ(e.tool_calls[0].name, "");  // only the first piece names the call
  EXPECT_EQ(e.tool_calls[0].arguments, ": 1}");
  EXPECT_EQ(p.calls().size(), 1u);
}

TEST(OutputParser, Qwen3Thinking) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes, true, true),
                                 "<think>\nThe user greets me.\nI answer.\n</think>\n\nHello!");
  EXPECT_EQ(r.reasoning, "The user greets me.\nI answer.");
  EXPECT_EQ(r.content, "Hello!");
}

TEST(OutputParser, ThinkingThenCall) {
  const auto r = parse_every_way(
      options(ToolCallFormat::Hermes, true, true),
      "<think>\nI need the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"}}\n</tool_call>");
  EXPECT_EQ(r.reasoning, "I need the weather.");
  EXPECT_EQ(r.content, "");
  ASSERT_EQ(r.calls.size(), 1u);
}

TEST(OutputParser, CallsInsideThinkingAreReasoning) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes, true, true),
                                 "<think>Maybe <tool_call>{}</tool_call>?</think>No.");
  EXPECT_EQ(r.reasoning, "Maybe <tool_call>{}</tool_call>?");
  EXPECT_EQ(r.content, "No.");
  EXPECT_TRUE(r.calls.empty());
}

TEST(OutputParser, StartsInReasoning) {
  auto o = options(ToolCallFormat::Generic, false, true);
  o.starts_in_reasoning = true;
  const auto r = parse_every_way(o, "Okay, 2 + 2.\n</think>\n\n4");
  EXPECT_EQ(r.reasoning, "Okay, 2 + 2.");
  EXPECT_EQ(r.content, "4");
}

TEST(OutputParser, UnterminatedThinkingIsReasoning) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes, true, true), "<think>\nStill thinking </thi");
  EXPECT_EQ(r.reasoning, "Still thinking </thi");
  EXPECT_EQ(r.content, "");
}

TEST(OutputParser, ThinkMarkerLaterIsContent) {
  const auto r = parse_every_way(options(ToolCallFormat::Hermes, true, true), "Use <think> tags.");
  EXPECT_EQ(r.content, "Use <think> tags.");
  EXPECT_EQ(r.reasoning, "");
}

TEST(OutputParser, PlainTextPassesThrough) {
  const std::string text = "  Once upon a time,\n there was {a \"name\"} [TOOL_CALLS <tool\n";
  EXPECT_EQ(parse_every_way(options(ToolCallFormat::Hermes), text).content, text);
  EXPECT_EQ(parse_every_way(options(ToolCallFormat::Mistral), text).content, text);
  EXPECT_EQ(parse_every_way(options(ToolCallFormat::Generic, true, true), text).content, text);
}

TEST(OutputParser, DefaultIdsFitTheFormat) {
  OutputParser::Options o;
  o.format = ToolCallFormat::Mistral;
  o.tools = true;
  OutputParser p(o);
  p.feed("[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {}}]");
  p.finish();
  ASSERT_EQ(p.calls().size(), 1u);
  EXPECT_EQ(p.calls()[0].id.size(), 9u);
  EXPECT_EQ(new_tool_call_id(ToolCallFormat::Hermes).rfind("call_", 0), 0u);
}

TEST(Reasoning, TemplateAndPrompt) {
  EXPECT_TRUE(template_has_reasoning("{{ '<think>\\n' }}"));
  EXPECT_FALSE(template_has_reasoning("{{ messages }}"));
  EXPECT_TRUE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(prompt_opens_reasoning(""));
}

}  // namespace
}  // namespace parley::chat
