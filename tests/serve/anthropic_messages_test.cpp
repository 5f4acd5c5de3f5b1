// Anthropic's Messages API: what a request may hold (and the 400 naming what
// it may not), and the shapes of the message, its stream and its errors.
#include "serve/api/anthropic_messages.h"

#include <gtest/gtest.h>

#include "api_shapes.h"

namespace parley::serve {
namespace {

// The param a 400 names, "" when the body is accepted.
const auto refused_message = [](const json& body) { return test::refused_param(parse_anthropic_request, body); };

json message_body(json extra = json::object()) {
  const json user = {{"role", "user"}, {"content", "Hello"}};
  return test::with_fields({{"model", "stories260K"}, {"max_tokens", 32}, {"messages", json::array({user})}}, extra);
}

TEST(AnthropicRequest, SystemMessagesAndParameters) {
  const json body = message_body(
      {{"system", json::array({{{"type", "text"}, {"text", "Be "}}, {{"type", "text"}, {"text", "brief."}}})},
       {"messages",
        json::array({{{"role", "user"}, {"content", "Hi"}},
                     {{"role", "assistant"}, {"content", json::array({{{"type", "text"}, {"text", "Hello!"}}})}},
                     {{"role", "user"}, {"content", "Tell me a story"}}})},
       {"temperature", 0.5},
       {"top_p", 0.9},
       {"top_k", 40},
       {"stop_sequences", {"The end", "\n\n"}},
       {"stream", true},
       {"metadata", {{"user_id", "u-1"}}}});
  const AnthropicRequest r = parse_anthropic_request(body, test::kBundledModel);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, "system");
  EXPECT_EQ(r.messages[0].content, "Be brief.");
  EXPECT_EQ(r.messages[2].role, "assistant");
  EXPECT_EQ(r.messages[2].content, "Hello!");
  EXPECT_EQ(r.messages[3].content, "Tell me a story");
  EXPECT_EQ(r.params.max_tokens, 32);
  EXPECT_FLOAT_EQ(r.params.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.params.sampling.top_p, 0.9f);
  EXPECT_EQ(r.params.sampling.top_k, 40);
  EXPECT_EQ(r.params.stop, (std::vector<std::string>{"The end", "\n\n"}));
  EXPECT_TRUE(r.params.stream);
  EXPECT_EQ(r.params.user, "u-1");
  EXPECT_EQ(r.params.n, 1);
}

TEST(AnthropicRequest, RefusesWhatItCannotHonourNamingTheField) {
  EXPECT_EQ(refused_message(message_body()), "");
  json missing = message_body();
  missing.erase("max_tokens");
  EXPECT_EQ(refused_message(missing), "max_tokens");
  EXPECT_EQ(refused_message(message_body({{"max_tokens", 0}})), "max_tokens");
  EXPECT_EQ(refused_message(message_body({{"max_tokens", 513}})), "max_tokens");  // past the context
  EXPECT_EQ(refused_message(message_body({{"max_tokens", "32"}})), "max_tokens");
  EXPECT_EQ(refused_message(message_body({{"messages", json::array()}})), "messages");
  EXPECT_EQ(refused_message(message_body({{"messages", "Hello"}})), "messages");
  json no_messages = message_body();
  no_messages.erase("messages");
  EXPECT_EQ(refused_message(no_messages), "messages");
  for (const char* field : {"tools", "tool_choice", "thinking", "service_tier", "container", "n", "seed", "stop"})
    EXPECT_EQ(refused_message(message_body({{field, json::array({1})}})), field);
  EXPECT_EQ(refused_message(message_body({{"tools", nullptr}})), "");               // null is the same as absent
  EXPECT_EQ(refused_message(message_body({{"temperature", 1.5}})), "temperature");  // Anthropic's range is [0, 1]
  EXPECT_EQ(refused_message(message_body({{"top_p", 0}})), "top_p");
  EXPECT_EQ(refused_message(message_body({{"stop_sequences", {1}}})), "stop_sequences");
  EXPECT_EQ(refused_message(message_body({{"stream", "yes"}})), "stream");
  EXPECT_EQ(refused_message(message_body({{"metadata", {{"tags", "x"}}}})), "metadata.tags");
  EXPECT_EQ(refused_message(message_body({{"metadata", {{"user_id", 7}}}})), "metadata.user_id");
  EXPECT_EQ(refused_message(message_body({{"system", 3}})), "system");
  EXPECT_EQ(
      refused_message(message_body(
          {{"system", json::array({{{"type", "text"}, {"text", "x"}, {"cache_control", {{"type", "ephemeral"}}}}})}})),
      "system[0].cache_control");
  const auto with_message = [](json m) { return message_body({{"messages", json::array({std::move(m)})}}); };
  EXPECT_EQ(refused_message(with_message({{"role", "tool"}, {"content", "x"}})), "messages[0].role");
  EXPECT_EQ(refused_message(with_message({{"role", "user"}})), "messages[0].content");
  EXPECT_EQ(refused_message(with_message({{"role", "user"}, {"content", "x"}, {"name", "ann"}})), "messages[0].name");
  EXPECT_EQ(refused_message(
                with_message({{"role", "user"}, {"content", json::array({{{"type", "image"}, {"source", {}}}})}})),
            "messages[0].content[0].type");
  EXPECT_EQ(refused_message(with_message({{"role", "user"}, {"content", json::array({{{"type", "text"}}})}})),
            "messages[0].content[0].text");
  EXPECT_EQ(refused_message(with_message({{"role", "user"}, {"content", json::array({"plain"})}})),
            "messages[0].content[0]");
  EXPECT_EQ(refused_message(with_message({{"role", "user"}, {"content", 5}})), "messages[0].content");
  // Continuing an assistant message (prefill) would be answered as a new turn: refused.
  EXPECT_EQ(refused_message(message_body({{"messages", json::array({{{"role", "user"}, {"content", "Hi"}},
                                                                    {{"role", "assistant"}, {"content", "Once"}}})}})),
            "messages[1].role");
}

TEST(AnthropicMessage, ShapeAndStopReasons) {
  const AnthropicMeta meta = anthropic_meta("stories260K", 12);
  EXPECT_EQ(meta.id.rfind("msg_", 0), 0u);
  const json m = anthropic_message(meta, test::finished_choice("Once upon", FinishReason::Stop));
  EXPECT_EQ(m["id"], meta.id);
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["model"], "stories260K");
  EXPECT_EQ(m["content"], json::parse(R"([{"type": "text", "text": "Once upon"}])"));
  EXPECT_EQ(m["stop_reason"], "end_turn");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  EXPECT_EQ(m["usage"], json::parse(R"({"input_tokens": 12, "output_tokens": 5})"));
  const json stopped = anthropic_message(meta, test::finished_choice("Once", FinishReason::Stop, "upon"));
  EXPECT_EQ(stopped["stop_reason"], "stop_sequence");
  EXPECT_EQ(stopped["stop_sequence"], "upon");
  EXPECT_EQ(anthropic_message(meta, test::finished_choice("Once", FinishReason::Length))["stop_reason"], "max_tokens");
}

TEST(AnthropicMessage, StreamEventsInAnthropicsOrder) {
  const AnthropicMeta meta = anthropic_meta("stories260K", 12);
  const std::string sse = anthropic_stream_start(meta) + anthropic_text_delta("Once") + anthropic_text_delta(" upon") +
                          anthropic_stream_end(test::finished_choice("Once upon", FinishReason::Stop, "a time"));
  const auto events = test::named_events(sse);
  std::vector<std::string> names;
  for (const auto& [name, data] : events) {
    names.push_back(name);
    EXPECT_EQ(data["type"], name);  // the data names its event too
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                      "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  const json& start = events[0].second["message"];
  EXPECT_EQ(start["id"], meta.id);
  EXPECT_EQ(start["content"], json::array());
  EXPECT_TRUE(start["stop_reason"].is_null());
  EXPECT_EQ(start["usage"]["input_tokens"], 12);
  EXPECT_EQ(events[1].second["content_block"], json::parse(R"({"type": "text", "text": ""})"));
  EXPECT_EQ(events[4].second["delta"], json::parse(R"({"type": "text_delta", "text": " upon"})"));
  EXPECT_EQ(events[4].second["index"], 0);
  EXPECT_EQ(events[6].second["delta"], json::parse(R"({"stop_reason": "stop_sequence", "stop_sequence": "a time"})"));
  EXPECT_EQ(events[6].second["usage"]["output_tokens"], 5);
}

TEST(AnthropicError, TypeFollowsTheStatus) {
  const std::vector<std::pair<int, std::string>> cases = {{400, "invalid_request_error"}, {401, "authentication_error"},
                                                          {403, "permission_error"},      {404, "not_found_error"},
                                                          {405, "invalid_request_error"}, {413, "request_too_large"},
                                                          {429, "rate_limit_error"},      {500, "api_error"},
                                                          {503, "overloaded_error"}};
  for (const auto& [status, type] : cases) {
    const HttpResponse r = anthropic_error_response(ApiError(status, "what happened", "invalid_request_error"));
    EXPECT_EQ(r.status, status);
    const json body = json::parse(r.body);
    EXPECT_EQ(body["type"], "error");
    EXPECT_EQ(body["error"]["type"], type) << status;
    EXPECT_EQ(body["error"]["message"], "what happened");
  }
  const auto events = test::named_events(anthropic_stream_error(server_error("Generation failed")));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first, "error");
  EXPECT_EQ(events[0].second["error"]["type"], "api_error");
}

}  // namespace
}  // namespace parley::serve
