#include "serve/protection/validation.h"

#include <gtest/gtest.h>

#include <chrono>

#include "serve/api/admission.h"
#include "serve/transport/api_error.h"
#include "serve/transport/request_id.h"
#include "util/error.h"

namespace parley::serve {
namespace {

using nlohmann::json;

std::string code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.to_json()["error"]["code"];
  }
  return "";
}

TEST(Validation, ControlCharacters) {
  EXPECT_FALSE(find_control_character("tab\tnewline\ncr\r fine"));
  EXPECT_EQ(find_control_character("ab\x01"), 2u);
  EXPECT_EQ(find_control_character(std::string("a\0b", 3)), 1u);
  EXPECT_EQ(find_control_character("\x1b[31m"), 0u);
  EXPECT_FALSE(find_control_character("\x7f and caf\xC3\xA9"));  // DEL and UTF-8 are not C0
}

TEST(Validation, BlocklistMatchesAnywhereAndRefusesBadPatterns) {
  Blocklist b({"(?i)bad\\s+word", "secret-[0-9]{4}"});
  EXPECT_EQ(b.size(), 2u);
  ASSERT_NE(b.match("a BAD   Word here"), nullptr);
  EXPECT_EQ(*b.match("my secret-1234!"), "secret-[0-9]{4}");
  EXPECT_EQ(b.match("a good word, secret-12"), nullptr);
  EXPECT_THROW(Blocklist({"(unclosed"}), Error);
  EXPECT_THROW(Blocklist({"(a)\\1"}), Error);  // backreferences: not linear time, RE2 refuses them
}

TEST(Validation, RequestJson) {
  Blocklist b({"forbidden"});
  const InputLimits limits{2, &b};
  const json ok = {{"messages", {{{"role", "user"}, {"content", "hi\tthere"}}}}};
  EXPECT_EQ(code_of([&] { validate_request_json(ok, limits); }), "");
  json three = {{"messages", json::array({ok["messages"][0], ok["messages"][0], ok["messages"][0]})}};
  EXPECT_EQ(code_of([&] { validate_request_json(three, limits); }), "too_many_messages");
  const json parts = {{"messages", {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "so forbidden"}}}}}}}};
  EXPECT_EQ(code_of([&] { validate_request_json(parts, limits); }), "content_policy_violation");
  EXPECT_EQ(code_of([&] { validate_request_json({{"prompt", {"ok", "a\x02"}}}, limits); }), "invalid_characters");
  // The model's own answers sent back as history may hold control characters; users' text may not.
  const json history = {{"messages", {{{"role", "assistant"}, {"content", "a\x02b"}}, {{"role", "user"}, {"content", "next"}}}}};
  EXPECT_EQ(code_of([&] { validate_request_json(history, limits); }), "");
  json user_controls = history;
  user_controls["messages"][1]["content"] = "x\x1b[31m";
  EXPECT_EQ(code_of([&] { validate_request_json(user_controls, limits); }), "invalid_characters");
  json assistant_blocked = history;
  assistant_blocked["messages"][0]["content"] = "forbidden";
  EXPECT_EQ(code_of([&] { validate_request_json(assistant_blocked, limits); }), "content_policy_violation");
  json deep = "x";
  for (int i = 0; i < 100; ++i) deep = json::array({deep});
  EXPECT_EQ(code_of([&] { validate_request_json({{"prompt", deep}}, limits); }), "invalid_json");
  EXPECT_EQ(code_of([] { validate_body_bytes("{\"prompt\": \"\xff\"}"); }), "invalid_utf8");
}

TEST(Validation, RequestTimeout) {
  EXPECT_EQ(request_timeout_s(R"({"timeout": 2.5})", 0), 2.5);
  EXPECT_EQ(request_timeout_s(R"({"timeout": 100})", 30), 30);  // capped
  EXPECT_EQ(request_timeout_s(R"({"prompt": "x"})", 30), 30);   // the cap is the default
  EXPECT_EQ(request_timeout_s(R"({"prompt": "x"})", 0), 0);     // none
  EXPECT_EQ(request_timeout_s("not json", 0), 0);
  EXPECT_EQ(code_of([] { request_timeout_s(R"({"timeout": -1})", 0); }), "invalid_value");
  EXPECT_EQ(code_of([] { request_timeout_s(R"({"timeout": "soon"})", 0); }), "invalid_value");
}

TEST(RequestId, KeepsPlainIdsAndReplacesOthers) {
  const std::string plain = "trace-1.2:3/abc=@+_";
  EXPECT_EQ(request_id_for(&plain), plain);
  for (const std::string& bad : {std::string(""), std::string(129, 'a'), std::string("a b"), std::string("x\r\nSet-Cookie: y")})
    EXPECT_NE(request_id_for(&bad), bad);
  const std::string made = request_id_for(nullptr);
  EXPECT_EQ(made.size(), 28u);
  EXPECT_EQ(made.rfind("req_", 0), 0u);
  EXPECT_NE(made, request_id_for(nullptr));
}

}  // namespace
}  // namespace parley::serve
