// Rendering conversations with tools: the bundled templates, tool-call
// arguments as objects, chat_template_kwargs, and the generic fallback for
// templates that take no tools.
#include <gtest/gtest.h>

#include <map>

#include "../tokenizer/test_data.h"
#include "chat/chat_template.h"
#include "chat/named_templates.h"
#include "chat/output_parser.h"
#include "chat/tool_call_format.h"
#include "util/error.h"

namespace parley::chat {
namespace {

using ojson = nlohmann::ordered_json;
using test::contains;

const ojson kTools = ojson::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "description": "The weather in a city", "parameters": {"type": "object",
  "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");

// system, user, an assistant tool call (arguments as OpenAI sends them: JSON
// text), its result, and the generation prompt.
ChatInput weather_conversation() {
  ChatInput in;
  in.messages = ojson::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"role": "assistant", "content": null, "tool_calls": [{"id": "abcdefghi", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "abcdefghi", "name": "get_weather", "content": "18 C, sunny"}])");
  in.tools = kTools;
  return in;
}

Vocab vocab_with(std::string_view tmpl) {
  Vocab v = test::make_spm_vocab({{"<unk>", 0, TokenType::Unknown}, {"</s>", 0, TokenType::Control}});
  v.eos = 1;
  v.chat_template = std::string(tmpl);
  return v;
}

std::string named(std::string_view name) {
  const auto t = named_chat_template(name);
  EXPECT_TRUE(t.has_value()) << name;
  return t ? std::string(*t) : "";
}

// The text of the assistant turn a template renders for the tool call, read
// back by the parser of the template's format.
ParsedToolCall parse_rendered_call(ToolCallFormat format, std::string_view call_text) {
  OutputParser::Options o;
  o.format = format;
  o.tools = true;
  OutputParser p(o);
  p.feed(call_text);
  p.finish();
  EXPECT_EQ(p.calls().size(), 1u) << call_text;
  return p.calls().empty() ? ParsedToolCall{} : p.calls()[0];
}

TEST(ToolTemplates, Hermes) {
  const std::string out = render_chat(vocab_with(named("hermes")), weather_conversation(), true);
  EXPECT_TRUE(contains(out, "<|im_start|>system\nBe brief.\n\n# Tools\n")) << out;
  EXPECT_TRUE(contains(out, "<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"")) << out;
  const std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  EXPECT_TRUE(contains(out, "<|im_start|>assistant\n" + call + "<|im_end|>")) << out;
  EXPECT_TRUE(contains(out, "<|im_start|>user\n<tool_response>\n18 C, sunny\n</tool_response><|im_end|>\n")) << out;
  EXPECT_TRUE(out.ends_with("<|im_start|>assistant\n"));
  EXPECT_EQ(parse_rendered_call(ToolCallFormat::Hermes, call).arguments, "{\"city\": \"Paris\"}");
}

TEST(ToolTemplates, Qwen3) {
  const Vocab v = vocab_with(named("qwen3"));
  ChatInput in = weather_conversation();
  const std::string out = render_chat(v, in, true);
  EXPECT_TRUE(contains(out, "<|im_start|>system\nBe brief.\n\n# Tools\n")) << out;
  EXPECT_TRUE(contains(out, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"))
      << out;
  EXPECT_TRUE(contains(out, "<tool_response>\n18 C, sunny\n</tool_response>")) << out;
  EXPECT_TRUE(out.ends_with("<|im_start|>assistant\n")) << out;
  in.kwargs = {{"enable_thinking", false}};
  EXPECT_TRUE(render_chat(v, in, true).ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
}

TEST(ToolTemplates, Llama31) {
  const std::string out = render_chat(vocab_with(named("llama3.1")), weather_conversation(), true);
  EXPECT_TRUE(contains(out, "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n")) << out;
  EXPECT_TRUE(contains(out, "Given the following functions")) << out;
  const std::string call = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
  EXPECT_TRUE(contains(out, "<|start_header_id|>assistant<|end_header_id|>\n\n" + call + "<|eot_id|>")) << out;
  EXPECT_TRUE(contains(out, "<|start_header_id|>ipython<|end_header_id|>\n\n\"18 C, sunny\"<|eot_id|>")) << out;
  EXPECT_EQ(parse_rendered_call(ToolCallFormat::Llama3, call).arguments, "{\"city\": \"Paris\"}");
}

TEST(ToolTemplates, Mistral) {
  const std::string out = render_chat(vocab_with(named("mistral")), weather_conversation(), true);
  EXPECT_TRUE(contains(out, "[AVAILABLE_TOOLS] [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"")) << out;
  const std::string call =
      "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abcdefghi\"}]";
  EXPECT_TRUE(contains(out, call + "</s>")) << out;
  EXPECT_TRUE(contains(out, "[TOOL_RESULTS] {\"content\": 18 C, sunny, \"call_id\": \"abcdefghi\"}[/TOOL_RESULTS]")) << out;
  EXPECT_EQ(parse_rendered_call(ToolCallFormat::Mistral, call).name, "get_weather");
}

TEST(ToolTemplates, ChatMlWithoutToolSupportGetsTheGenericFormat) {
  const std::string out = render_chat(vocab_with(named("chatml")), weather_conversation(), true);
  EXPECT_TRUE(contains(out, "<|im_start|>system\nBe brief.\n\n" + generic_tool_instructions(kTools) + "<|im_end|>"))
      << out;
  const std::string call = "{\"tool_calls\":[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}]}";
  EXPECT_TRUE(contains(out, "<|im_start|>assistant\n" + call + "<|im_end|>")) << out;
  EXPECT_TRUE(contains(out, "<|im_start|>user\n{\"tool_response\":{\"name\":\"get_weather\",\"tool_call_id\":"
                            "\"abcdefghi\",\"content\":\"18 C, sunny\"}}<|im_end|>"))
      << out;
  EXPECT_EQ(parse_rendered_call(ToolCallFormat::Generic, call).arguments, "{\"city\":\"Paris\"}");
}

TEST(ToolTemplates, GenericInstructionsDescribeTheToolsAndTheFormat) {
  const std::string text = generic_tool_instructions(kTools);
  EXPECT_TRUE(contains(text, "\"name\": \"get_weather\"")) << text;
  EXPECT_TRUE(contains(text, "\"description\": \"The weather in a city\"")) << text;
  EXPECT_TRUE(contains(text, "{\"tool_calls\": [{\"name\": ")) << text;
}

TEST(ToolTemplates, NoTemplateUsesTheGenericFormatToo) {
  const std::string out = render_chat(Vocab{}, weather_conversation(), true);
  EXPECT_TRUE(out.starts_with("System: Be brief.\n\nYou can call the following tools:")) << out;
  EXPECT_TRUE(contains(out, "Assistant: {\"tool_calls\":[")) << out;
  EXPECT_TRUE(out.ends_with("}}\nAssistant:")) << out;
}

TEST(ToolTemplates, TemplatesThatTakeNoSystemStillGetTheTools) {
  const std::string gemma = "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}"
                            "{% endif %}<{{ m.role }}>{{ m.content }}{% endfor %}";
  const std::string out = render_chat(vocab_with(gemma), weather_conversation(), false);
  EXPECT_TRUE(out.starts_with("<user>Be brief.\n\nYou can call the following tools:")) << out;
}

TEST(ToolTemplates, ArgumentsReachTheTemplateAsAnObject) {
  ChatInput in = weather_conversation();
  const Vocab v = vocab_with("{{ tools | length }}{% for m in messages %}{% for c in m.tool_calls or [] %}"
                             "{{ c.function.arguments.city }}{% endfor %}{% endfor %}");
  EXPECT_EQ(render_chat(v, in, false), "1Paris");
}

TEST(ToolTemplates, KwargsAreVariablesButCannotReplaceTheInputs) {
  const Vocab v = vocab_with("{{ greeting }} {{ messages | length }}");
  ChatInput in;
  in.messages = ojson::parse(R"([{"role": "user", "content": "Hi"}])");
  in.kwargs = {{"greeting", "hello"}};
  EXPECT_EQ(render_chat(v, in, false), "hello 1");
  in.kwargs = {{"messages", ojson::array()}};
  EXPECT_THROW(render_chat(v, in, false), Error);
  in.kwargs = ojson::array();
  EXPECT_THROW(render_chat(v, in, false), Error);
}

TEST(ToolTemplates, TakesToolsOnlyWhenTheTemplateReadsThem) {
  EXPECT_TRUE(template_takes_tools(named("hermes")));
  EXPECT_TRUE(template_takes_tools(named("mistral")));
  EXPECT_FALSE(template_takes_tools(named("chatml")));
  EXPECT_TRUE(template_takes_tools("{% if tools %}{% endif %}"));
  EXPECT_FALSE(template_takes_tools("{{ my_tools }}{{ tools_x }}"));
}

TEST(NamedTemplates, AreTheModelsOwn) {
  const std::map<std::string, std::string> files = {{"hermes", "qwen2.5-7b-instruct"},
                                                    {"llama3.1", "llama-3.1-8b-instruct"},
                                                    {"mistral", "mistral-7b-instruct-v0.3"},
                                                    {"qwen3", "qwen3"}};
  for (const auto& [name, file] : files) {
    std::string text = test::read_file(std::string(PARLEY_SOURCE_DIR) + "/tests/chat/data/templates/" + file + ".jinja");
    if (text.ends_with("\n")) text.pop_back();  // Jinja drops a template's final newline
    EXPECT_EQ(named(name), text) << name;
  }
  EXPECT_EQ(named_chat_template_names(),
            (std::vector<std::string>{"chatml", "hermes", "llama3.1", "mistral", "qwen3"}));
  EXPECT_FALSE(named_chat_template("nonesuch").has_value());
}

TEST(NamedTemplates, FamiliesAndFormatsAreRecognised) {
  EXPECT_EQ(detect_chat_family(named("chatml")), ChatFamily::ChatMl);
  EXPECT_EQ(detect_chat_family(named("hermes")), ChatFamily::ChatMl);
  EXPECT_EQ(detect_chat_family(named("qwen3")), ChatFamily::ChatMl);
  EXPECT_EQ(detect_chat_family(named("llama3.1")), ChatFamily::Llama3);
  EXPECT_EQ(detect_chat_family(named("mistral")), ChatFamily::Mistral);
  EXPECT_EQ(detect_tool_call_format(named("chatml")), ToolCallFormat::Generic);
  EXPECT_EQ(detect_tool_call_format(named("hermes")), ToolCallFormat::Hermes);
  EXPECT_EQ(detect_tool_call_format(named("qwen3")), ToolCallFormat::Hermes);
  EXPECT_EQ(detect_tool_call_format(named("llama3.1")), ToolCallFormat::Llama3);
  EXPECT_EQ(detect_tool_call_format(named("mistral")), ToolCallFormat::Mistral);
  EXPECT_TRUE(template_has_reasoning(named("qwen3")));
  EXPECT_FALSE(template_has_reasoning(named("hermes")));
}

TEST(NamedTemplates, RenderPlainConversations) {
  const std::vector<ChatMessage> msgs = {{"system", "Be brief."}, {"user", "Hi!"}};
  for (const std::string& name : named_chat_template_names()) {
    const std::string out = render_chat(vocab_with(named(name)), msgs, true);
    EXPECT_TRUE(contains(out, "Be brief.")) << name << ": " << out;
    EXPECT_TRUE(contains(out, "Hi!")) << name << ": " << out;
  }
}

}  // namespace
}  // namespace parley::chat
