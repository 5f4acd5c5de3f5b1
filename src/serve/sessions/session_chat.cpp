#include "serve/sessions/session_chat.h"

#include <algorithm>

#include "serve/transport/api_error.h"
#include "serve/api/prompt_input.h"

namespace parley::serve {
namespace {

std::vector<chat::ChatMessage> conversation(const state::Session& s, size_t first_turn, const std::string& user_text) {
  std::vector<chat::ChatMessage> messages;
  if (!s.system_prompt.empty()) messages.push_back({"system", s.system_prompt});
  for (size_t i = first_turn; i < s.turns.size(); ++i) {
    messages.push_back({"user", s.turns[i].user});
    messages.push_back({"assistant", s.turns[i].assistant});
  }
  messages.push_back({"user", user_text});
  return messages;
}

std::string new_user_message(const std::vector<chat::ChatMessage>& messages) {
  if (messages.size() != 1 || messages[0].role != "user")
    throw invalid_request("With 'session_id', 'messages' must hold only the new user message (the session keeps the history)",
                          "messages", "invalid_session_messages");
  return messages[0].content;
}

}  // namespace

std::string request_api_key(const Exchange& exchange) { return exchange.api_key_name(); }

std::vector<int32_t> session_prompt(const Tokenizer& tok, const state::Session& session, const std::string& user_text,
                                    int32_t context, int32_t reserve) {
  const size_t kept = std::min(session.turns.size(), size_t(std::max(session.max_turns, 0)));
  size_t first = session.turns.size() - kept;
  std::vector<int32_t> tokens = chat_tokens(tok, conversation(session, first, user_text));
  while (int64_t(tokens.size()) + reserve > context && first < session.turns.size())
    tokens = chat_tokens(tok, conversation(session, ++first, user_text));
  return tokens;
}

EngineRequests chat_requests(ApiContext& ctx, const json& body, const std::vector<chat::ChatMessage>& messages,
                             const GenerationParams& params, const std::string& api_key, AnswerPlan& plan) {
  plan.user_text = last_user_text(messages);
  EngineRequests requests =
      build_requests(params, {chat_tokens(ctx.model.tokenizer(), messages)}, ctx.limits.context_length);
  plan_answer(ctx, body, params, requests, true, api_key, plan);
  return requests;
}

std::vector<int32_t> chat_prompt(ApiContext& ctx, const json& body, const GenerationParams& params,
                                 const std::string& api_key, AnswerPlan& plan, const nlohmann::ordered_json& tools) {
  const auto session_id = get_string(body, "session_id");
  if (!session_id) {
    const chat::ChatInput input = parse_chat_input(body, tools);
    for (const auto& m : input.messages)
      if (m["role"] == "user" && m["content"].is_string()) plan.user_text = m["content"].get<std::string>();
    return chat_tokens(ctx.model.tokenizer(), input);
  }
  const std::vector<chat::ChatMessage> messages = parse_messages(body);
  if (!ctx.services.sessions) throw invalid_request("Sessions are not enabled on this server", "session_id");
  for (const char* field : {"tools", "chat_template_kwargs"})
    if (get_field(body, field))
      throw invalid_request(std::string("A session turn cannot take '") + field + "'", field, "unsupported_parameter");
  plan.user_text = new_user_message(messages);
  if (params.n != 1) throw invalid_request("A session turn has one choice: 'n' must be 1", "n");
  plan.session = SessionTurn::begin(*ctx.services.turn_leases, *session_id, api_key);
  if (const std::string& model = plan.session->session().model; model != params.model_name)
    throw invalid_request("The session '" + *session_id + "' runs with '" + (model.empty() ? ctx.model_id : model) +
                              "'; name that model or none",
                          "model");
  const int32_t context = ctx.limits.context_length;
  const int32_t reserve = params.max_tokens > 0 ? params.max_tokens : context / 4;
  return session_prompt(ctx.model.tokenizer(), plan.session->session(), plan.user_text, context, reserve);
}

}  // namespace parley::serve
