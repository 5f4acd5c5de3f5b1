#pragma once
// Chat requests that continue a server-side session ("session_id"): the
// client sends only the new user message; the server sends the model the
// session's system prompt, the stored turns that fit and the new message.
#include <cstdint>
#include <string>
#include <vector>

#include "serve/sessions/answer_cache.h"
#include "serve/transport/exchange.h"

namespace parley::serve {

// The name of the API key a request was made with, which sessions are bound
// to ("" while the server checks no keys). The one place that reads it.
std::string request_api_key(const Exchange& exchange);

// The prompt tokens of a chat request (HTTP or WebSocket body) and the user
// text in plan.user_text. With "session_id", `messages` must be one user
// message and n 1; the session's turn lock is taken into plan.session.
// `tools` (null: none) go to the chat template.
std::vector<int32_t> chat_prompt(ApiContext& ctx, const json& body, const GenerationParams& params,
                                 const std::string& api_key, AnswerPlan& plan,
                                 const nlohmann::ordered_json& tools = nullptr);

// A chat request without a session (Anthropic's Messages, OpenAI's
// Responses): its engine request for `messages` in the chat format, and the
// plan (static answer, response cache) for it.
EngineRequests chat_requests(ApiContext& ctx, const json& body, const std::vector<chat::ChatMessage>& messages,
                             const GenerationParams& params, const std::string& api_key, AnswerPlan& plan);

// The session's conversation in the chat format: its system prompt, its last
// max_turns turns, dropping the oldest while the prompt plus `reserve` tokens
// exceeds `context`, then the new user message.
std::vector<int32_t> session_prompt(const Tokenizer& tok, const state::Session& session, const std::string& user_text,
                                    int32_t context, int32_t reserve);

}  // namespace parley::serve
