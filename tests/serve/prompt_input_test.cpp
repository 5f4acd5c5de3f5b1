#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "model/model.h"
#include "serve/transport/api_error.h"
#include "serve/api/prompt_input.h"

namespace parley::serve {
namespace {

std::string param_of_error(const char* body) {
  try {
    const json j = json::parse(body);
    if (j.contains("messages")) parse_messages(j);
    else parse_prompts(j, 512);
  } catch (const ApiError& e) {
    return e.to_json()["error"]["param"].get<std::string>();
  }
  return "";
}

TEST(PromptInput, MessagesWithStringOrTextParts) {
  const auto msgs = parse_messages(json::parse(R"({"messages": [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]},
    {"role": "assistant", "content": null}]})"));
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_EQ(msgs[0].role, "system");
  EXPECT_EQ(msgs[1].content, "Hi there");
  EXPECT_EQ(msgs[2].content, "");
}

TEST(PromptInput, BadMessagesName400Fields) {
  EXPECT_EQ(param_of_error(R"({"messages": []})"), "messages");
  EXPECT_EQ(param_of_error(R"({"messages": "hi"})"), "messages");
  EXPECT_EQ(param_of_error(R"({"messages": [{"role": "tool", "content": "x"}]})"), "messages[0].role");
  EXPECT_EQ(param_of_error(R"({"messages": [{"content": "x"}]})"), "messages[0].role");
  EXPECT_EQ(param_of_error(R"({"messages": [{"role": "user", "content": 5}]})"), "messages[0].content");
  EXPECT_EQ(param_of_error(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})"),
            "messages[0].content");
}

TEST(PromptInput, CompletionPrompts) {
  auto p = parse_prompts(json::parse(R"({"prompt": "Once"})"), 512);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].text, "Once");
  p = parse_prompts(json::parse(R"({"prompt": ["a", "b"]})"), 512);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[1].text, "b");
  p = parse_prompts(json::parse(R"({"prompt": [1, 403, 2]})"), 512);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_TRUE(p[0].is_tokens);
  EXPECT_EQ(p[0].tokens, (std::vector<int32_t>{1, 403, 2}));
  EXPECT_EQ(param_of_error(R"({"prompt": [1, 512]})"), "prompt");
  EXPECT_EQ(param_of_error(R"({"prompt": ["a", 1.5]})"), "prompt");
  EXPECT_EQ(param_of_error(R"({"prompt": 3})"), "prompt");
  EXPECT_EQ(param_of_error(R"({})"), "prompt");
}

TEST(PromptInput, TokenisesWithTheBundledModel) {
  const std::string path = std::string(PARLEY_SOURCE_DIR) + "/models/stories260K.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "bundled model missing: " << path;
  const auto model = Model::load(path);
  const Tokenizer& tok = model->tokenizer();
  const auto ids = prompt_tokens(tok, {"Once upon a time", {}, false});
  ASSERT_GT(ids.size(), 2u);
  EXPECT_EQ(ids[0], tok.vocab().bos);
  EXPECT_EQ(tok.decode(ids), "Once upon a time");
  const auto chat = chat_tokens(tok, {{"user", "Hello"}});
  EXPECT_EQ(chat[0], tok.vocab().bos);
  EXPECT_NE(tok.decode(chat).find("Hello"), std::string::npos);
  // A user typing the EOS text does not produce the EOS token.
  const auto typed = chat_tokens(tok, {{"user", "a </s> b"}});
  EXPECT_EQ(std::count(typed.begin(), typed.end(), tok.vocab().eos), 0);
  EXPECT_NE(tok.decode(typed).find("</s>"), std::string::npos);
}

}  // namespace
}  // namespace parley::serve
