// OpenAI's Responses API: what a request may hold (and the 400 naming what
// it may not), the response object, its stream's events, and a stored
// response's record.
#include "serve/api/responses_api.h"

#include <gtest/gtest.h>

#include "api_shapes.h"

namespace parley::serve {
namespace {

// The param a 400 names, "" when the body is accepted.
const auto refused_response = [](const json& body) { return test::refused_param(parse_responses_request, body); };

json response_body(json extra = json::object()) {
  return test::with_fields({{"model", "stories260K"}, {"input", "Tell me a story"}}, extra);
}

TEST(ResponsesRequest, InputInstructionsAndParameters) {
  const ResponsesRequest plain = parse_responses_request(response_body(), test::kBundledModel);
  ASSERT_EQ(plain.input.size(), 1u);
  EXPECT_EQ(plain.input[0].role, "user");
  EXPECT_EQ(plain.input[0].content, "Tell me a story");
  EXPECT_TRUE(plain.store);
  EXPECT_FALSE(plain.instructions);
  EXPECT_EQ(plain.params.max_tokens, 0);
  const json items = json::array(
      {{{"role", "developer"}, {"content", "Be brief."}},
       {{"type", "message"}, {"role", "user"}, {"content", json::array({{{"type", "input_text"}, {"text", "Hi"}}})}},
       // An earlier response's output item, passed back as input.
       {{"type", "message"},
        {"id", "msg_1"},
        {"status", "completed"},
        {"role", "assistant"},
        {"content", json::array({{{"type", "output_text"}, {"text", "Hello!"}, {"annotations", json::array()}}})}},
       {{"role", "user"}, {"content", "A story"}}});
  const ResponsesRequest r = parse_responses_request(response_body({{"input", items},
                                                                    {"instructions", "Talk like a pirate."},
                                                                    {"max_output_tokens", 40},
                                                                    {"temperature", 1.5},
                                                                    {"top_p", 0.5},
                                                                    {"stream", true},
                                                                    {"store", false},
                                                                    {"metadata", {{"topic", "stories"}}},
                                                                    {"text", {{"format", {{"type", "text"}}}}},
                                                                    {"truncation", "disabled"}}),
                                                     test::kBundledModel);
  ASSERT_EQ(r.input.size(), 4u);
  EXPECT_EQ(r.input[0].role, "system");
  EXPECT_EQ(r.input[1].content, "Hi");
  EXPECT_EQ(r.input[2].role, "assistant");
  EXPECT_EQ(r.input[2].content, "Hello!");
  EXPECT_EQ(*r.instructions, "Talk like a pirate.");
  EXPECT_EQ(r.params.max_tokens, 40);
  EXPECT_FLOAT_EQ(r.params.sampling.temperature, 1.5f);
  EXPECT_FLOAT_EQ(r.params.sampling.top_p, 0.5f);
  EXPECT_TRUE(r.params.stream);
  EXPECT_FALSE(r.store);
  EXPECT_EQ(r.metadata["topic"], "stories");
  // With previous_response_id, input may be left out.
  json continues = response_body({{"previous_response_id", "resp_1"}});
  continues.erase("input");
  EXPECT_EQ(parse_responses_request(continues, test::kBundledModel).previous_response_id, "resp_1");
}

TEST(ResponsesRequest, RefusesWhatItCannotHonourNamingTheField) {
  json no_input = response_body();
  no_input.erase("input");
  EXPECT_EQ(refused_response(no_input), "input");
  EXPECT_EQ(refused_response(response_body({{"input", json::array()}})), "input");
  EXPECT_EQ(refused_response(response_body({{"input", 5}})), "input");
  EXPECT_EQ(refused_response(response_body({{"tools", json::array()}, {"tool_choice", "none"}})),
            "");  // ask for nothing
  for (const char* field : {"tools", "tool_choice", "reasoning", "include", "background", "prompt", "max_tokens", "n"})
    EXPECT_EQ(refused_response(response_body({{field, json::array({1})}})), field);
  EXPECT_EQ(refused_response(response_body({{"text", {{"format", {{"type", "json_schema"}}}}}})), "text.format");
  EXPECT_EQ(refused_response(response_body({{"text", {{"verbosity", "low"}}}})), "text.verbosity");
  EXPECT_EQ(refused_response(response_body({{"truncation", "auto"}})), "truncation");
  EXPECT_EQ(refused_response(response_body({{"max_output_tokens", 0}})), "max_output_tokens");
  EXPECT_EQ(refused_response(response_body({{"max_output_tokens", 600}})), "max_output_tokens");
  EXPECT_EQ(refused_response(response_body({{"temperature", 2.5}})), "temperature");
  EXPECT_EQ(refused_response(response_body({{"store", "yes"}})), "store");
  EXPECT_EQ(refused_response(response_body({{"previous_response_id", 3}})), "previous_response_id");
  EXPECT_EQ(refused_response(response_body({{"instructions", json::array()}})), "instructions");
  EXPECT_EQ(refused_response(response_body({{"metadata", {{"k", 1}}}})), "metadata.k");
  EXPECT_EQ(refused_response(response_body({{"metadata", "x"}})), "metadata");
  const auto with_item = [](json item) { return response_body({{"input", json::array({std::move(item)})}}); };
  EXPECT_EQ(refused_response(with_item({{"type", "function_call_output"}, {"call_id", "c"}, {"output", "x"}})),
            "input[0].type");
  EXPECT_EQ(refused_response(with_item({{"role", "tool"}, {"content", "x"}})), "input[0].role");
  EXPECT_EQ(refused_response(with_item({{"role", "user"}})), "input[0].content");
  EXPECT_EQ(refused_response(with_item({{"role", "user"}, {"content", "x"}, {"name", "ann"}})), "input[0].name");
  EXPECT_EQ(refused_response(with_item(
                {{"role", "user"}, {"content", json::array({{{"type", "input_image"}, {"image_url", "u"}}})}})),
            "input[0].content[0].type");
  EXPECT_EQ(refused_response(with_item("just text")), "input[0]");
}

TEST(ResponseObject, InProgressCompletedAndIncomplete) {
  const ResponsesRequest req = parse_responses_request(
      response_body({{"instructions", "Be brief."}, {"max_output_tokens", 5}, {"metadata", {{"a", "b"}}}}),
      test::kBundledModel);
  ResponsesMeta meta = responses_meta(req, "stories260K", true);
  meta.completed_at = meta.created_at + 1;
  EXPECT_EQ(meta.id.rfind("resp_", 0), 0u);
  EXPECT_EQ(meta.id.size(), 5u + 32u);
  EXPECT_EQ(meta.item_id.rfind("msg_", 0), 0u);
  const json pending = response_object(meta, nullptr);
  EXPECT_EQ(pending["object"], "response");
  EXPECT_EQ(pending["status"], "in_progress");
  EXPECT_EQ(pending["output"], json::array());
  EXPECT_TRUE(pending["usage"].is_null());
  const Choice complete = test::finished_choice("Once upon", FinishReason::Stop);
  const json done = response_object(meta, &complete);
  EXPECT_EQ(done["id"], meta.id);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_TRUE(done["incomplete_details"].is_null());
  EXPECT_TRUE(done["error"].is_null());
  EXPECT_EQ(done["instructions"], "Be brief.");
  EXPECT_EQ(done["max_output_tokens"], 5);
  EXPECT_EQ(done["model"], "stories260K");
  EXPECT_EQ(done["metadata"], json::parse(R"({"a": "b"})"));
  EXPECT_TRUE(done["previous_response_id"].is_null());
  EXPECT_EQ(done["store"], true);
  EXPECT_EQ(done["completed_at"], meta.completed_at);
  ASSERT_EQ(done["output"].size(), 1u);
  const json& item = done["output"][0];
  EXPECT_EQ(item["type"], "message");
  EXPECT_EQ(item["id"], meta.item_id);
  EXPECT_EQ(item["status"], "completed");
  EXPECT_EQ(item["role"], "assistant");
  EXPECT_EQ(item["content"], json::parse(R"([{"type": "output_text", "text": "Once upon", "annotations": []}])"));
  EXPECT_EQ(done["usage"], json::parse(R"({"input_tokens": 12, "input_tokens_details": {"cached_tokens": 4},
      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 17})"));
  const Choice length = test::finished_choice("Once", FinishReason::Length);
  const json cut = response_object(meta, &length);
  EXPECT_EQ(cut["status"], "incomplete");
  EXPECT_EQ(cut["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(cut["output"][0]["status"], "incomplete");
  Choice failed = test::finished_choice("", FinishReason::Error);
  failed.error = "boom";
  const json bad = response_object(meta, &failed);
  EXPECT_EQ(bad["status"], "failed");
  EXPECT_EQ(bad["error"]["code"], "server_error");
}

TEST(ResponseObject, StreamEventsInOrderWithSequenceNumbers) {
  ResponsesMeta meta =
      responses_meta(parse_responses_request(response_body(), test::kBundledModel), "stories260K", true);
  ResponsesStream stream(meta);
  std::string sse = stream.start();
  sse += stream.text_delta("Once");
  sse += stream.text_delta(" upon");
  sse += stream.end(test::finished_choice("Once upon", FinishReason::Stop));
  const auto events = test::named_events(sse);
  std::vector<std::string> names;
  for (size_t i = 0; i < events.size(); ++i) {
    names.push_back(events[i].first);
    EXPECT_EQ(events[i].second["type"], events[i].first);
    EXPECT_EQ(events[i].second["sequence_number"], i);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.completed"}));
  EXPECT_EQ(events[0].second["response"]["status"], "in_progress");
  EXPECT_EQ(events[2].second["item"]["status"], "in_progress");
  EXPECT_EQ(events[4].second["delta"], "Once");
  EXPECT_EQ(events[4].second["item_id"], meta.item_id);
  EXPECT_EQ(events[6].second["text"], "Once upon");
  EXPECT_EQ(events[7].second["part"]["text"], "Once upon");
  EXPECT_EQ(events[8].second["item"]["status"], "completed");
  EXPECT_EQ(events[9].second["response"]["output"][0]["content"][0]["text"], "Once upon");
  ResponsesStream cut(meta);
  std::string cut_sse = cut.start();
  cut_sse += cut.end(test::finished_choice("Once", FinishReason::Length));
  const auto cut_events = test::named_events(cut_sse);
  EXPECT_EQ(cut_events.back().first, "response.incomplete");
  ResponsesStream failing(meta);
  std::string failed_sse = failing.start();
  failed_sse += failing.end(test::finished_choice("", FinishReason::Error));
  const auto failed_events = test::named_events(failed_sse);
  EXPECT_EQ(failed_events.back().first, "response.failed");
  EXPECT_EQ(failed_events.size(), 5u);
}

TEST(StoredResponse, RoundTrips) {
  const StoredResponse r{json{{"id", "resp_1"}, {"output_text", "é"}},
                         {{"user", "Hi"}, {"assistant", "Hello \xf0\x9f\x98\x80"}, {"user", "More"}}};
  const StoredResponse back = decode_stored_response(encode_stored_response(r));
  EXPECT_EQ(back.response, r.response);
  ASSERT_EQ(back.conversation.size(), 3u);
  EXPECT_EQ(back.conversation[1].role, "assistant");
  EXPECT_EQ(back.conversation[1].content, "Hello \xf0\x9f\x98\x80");
  EXPECT_ANY_THROW(decode_stored_response("{}"));
}

}  // namespace
}  // namespace parley::serve
