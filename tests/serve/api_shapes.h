#pragma once
// What the tests of the other APIs' request parsing and shapes (Anthropic's
// Messages, OpenAI's Responses) share: the field a refusal names, named SSE
// events taken apart, finished choices.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "serve/transport/api_error.h"
#include "serve/api/choice.h"
#include "serve/api/generation_params.h"

namespace parley::serve::test {

// The limits of the bundled model: n up to 8, 512 tokens of vocabulary and of context.
inline const ParamLimits kBundledModel{8, 512, 512};

// The param of the 400 that `parse(body, kBundledModel)` throws ("(none)"
// when it names none), "" when it accepts the body.
template <class Parsed>
std::string refused_param(Parsed (*parse)(const nlohmann::json&, const ParamLimits&), const nlohmann::json& body) {
  try {
    parse(body, kBundledModel);
    return "";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400) << body.dump();
    const nlohmann::json param = e.to_json()["error"]["param"];
    return param.is_string() ? param.get<std::string>() : "(none)";
  }
}

// `event: NAME` + `data: JSON` blocks, in order.
inline std::vector<std::pair<std::string, nlohmann::json>> named_events(const std::string& sse) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (size_t at = 0; at < sse.size();) {
    const size_t end = sse.find("\n\n", at);
    const std::string block = sse.substr(at, end - at);
    at = end + 2;
    const size_t nl = block.find('\n');
    EXPECT_EQ(block.rfind("event: ", 0), 0u) << block;
    EXPECT_EQ(block.compare(nl + 1, 6, "data: "), 0) << block;
    out.emplace_back(block.substr(7, nl - 7), nlohmann::json::parse(block.substr(nl + 7)));
  }
  return out;
}

// `base` with the fields of `extra` set over it.
inline nlohmann::json with_fields(nlohmann::json base, const nlohmann::json& extra) {
  base.update(extra);
  return base;
}

// A choice that ended: 12 prompt tokens (4 from the prefix cache), 5 generated.
inline Choice finished_choice(std::string text, FinishReason why, std::string stop_string = "") {
  Choice c;
  c.text = std::move(text);
  c.finish = why;
  c.stop_string = std::move(stop_string);
  c.prompt_tokens = 12;
  c.completion_tokens = 5;
  c.cached_tokens = 4;
  return c;
}

}  // namespace parley::serve::test
