#include "serve/api/request_fields.h"

#include <gtest/gtest.h>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

// The param and code of the 400 that check_fields gives, or "" when it passes.
std::string refusal(const char* body, RouteFields route) {
  try {
    check_fields(json::parse(body), route);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.to_json()["error"]["param"].get<std::string>() + " " + e.to_json()["error"]["code"].get<std::string>();
  }
  return "";
}

TEST(RequestFields, EachRouteTakesItsOwnFields) {
  EXPECT_EQ(refusal(R"({"messages": [], "temperature": 0, "session_id": "s", "kv_retention": "full", "cache": false})",
                    RouteFields::Chat), "");
  EXPECT_EQ(refusal(R"({"prompt": "x", "echo": true, "best_of": 1})", RouteFields::Completions), "");
  EXPECT_EQ(refusal(R"({"prompt": "x", "messages": []})", RouteFields::Completions), "messages unknown_parameter");
  EXPECT_EQ(refusal(R"({"messages": [], "prompt": "x"})", RouteFields::Chat), "prompt unknown_parameter");
  EXPECT_EQ(refusal(R"({"prompts": ["a"], "max_tokens": 3})", RouteFields::Batch), "");
  EXPECT_EQ(refusal(R"({"prompt": "x", "id": 7})", RouteFields::WebSocket), "");
  EXPECT_EQ(refusal(R"({"input": "x", "encoding_format": "float"})", RouteFields::Embeddings), "");
  EXPECT_EQ(refusal(R"({"input": "x", "temperature": 0})", RouteFields::Embeddings), "temperature unknown_parameter");
  EXPECT_EQ(refusal(R"({"system_prompt": "x", "ttl_s": 5})", RouteFields::Session), "");
  EXPECT_EQ(refusal(R"({"system_prompt": "x", "max_tokens": 5})", RouteFields::Session), "max_tokens unknown_parameter");
  EXPECT_EQ(refusal(R"({"messages": [], "temprature": 0.5})", RouteFields::Chat), "temprature unknown_parameter");
  EXPECT_EQ(refusal(R"({"system": "x", "stop_sequences": [], "metadata": {}})", RouteFields::Messages), "");
  EXPECT_EQ(refusal(R"({"messages": [], "stop": "x"})", RouteFields::Messages), "stop unknown_parameter");
  EXPECT_EQ(refusal(R"({"thinking": {"type": "enabled"}})", RouteFields::Messages), "thinking unsupported_parameter");
  EXPECT_EQ(refusal(R"({"input": "x", "store": true, "previous_response_id": "r"})", RouteFields::Responses), "");
  EXPECT_EQ(refusal(R"({"input": "x", "reasoning": {}})", RouteFields::Responses), "reasoning unsupported_parameter");
  EXPECT_EQ(refusal(R"({"input": "x", "tools": []})", RouteFields::Responses), "");  // asks for nothing
}

// select_model reads "model" and "lora_scale" on every route that generates.
TEST(RequestFields, EveryGeneratingRouteTakesAModelAndItsLoraScale) {
  for (const RouteFields route : {RouteFields::Chat, RouteFields::Completions, RouteFields::Batch, RouteFields::WebSocket,
                                  RouteFields::Messages, RouteFields::Responses})
    EXPECT_EQ(refusal(R"({"model": "a", "lora_scale": 0.5})", route), "") << int(route);
  EXPECT_EQ(refusal(R"({"model": "a", "lora_scale": 0.5})", RouteFields::Embeddings), "lora_scale unknown_parameter");
  EXPECT_EQ(refusal(R"({"lora_scale": 0.5})", RouteFields::Session), "lora_scale unknown_parameter");
}

TEST(RequestFields, OpenAiFeaturesThatAreNotOfferedAreRefusedByName) {
  for (const char* body : {R"({"audio": {}})", R"({"prediction": {"type": "content"}})",
                           R"({"modalities": ["text", "audio"]})", R"({"store": true})", R"({"reasoning_effort": "low"})"}) {
    const std::string r = refusal(body, RouteFields::Chat);
    EXPECT_NE(r.find("unsupported_parameter"), std::string::npos) << body << ": " << r;
  }
  // Values that ask for nothing pass.
  for (const char* body : {R"({"tools": []})", R"({"tool_choice": "none"})", R"({"response_format": {"type": "text"}})",
                           R"({"modalities": ["text"]})", R"({"store": false})", R"({"service_tier": "auto"})",
                           R"({"parallel_tool_calls": true})", R"({"tools": null})"})
    EXPECT_EQ(refusal(body, RouteFields::Chat), "") << body;
  EXPECT_EQ(refusal(R"({"tools": []})", RouteFields::Completions), "tools unsupported_parameter");
  // Chat takes tools and formats (read by parse_tools, parse_output_format); the WebSocket API formats only.
  EXPECT_EQ(refusal(R"({"tools": [{"type": "function"}], "tool_choice": "auto"})", RouteFields::Chat), "");
  EXPECT_EQ(refusal(R"({"response_format": {"type": "json_object"}})", RouteFields::WebSocket), "");
  EXPECT_EQ(refusal(R"({"tools": [{"type": "function"}]})", RouteFields::WebSocket), "tools unsupported_parameter");
}

}  // namespace
}  // namespace parley::serve
