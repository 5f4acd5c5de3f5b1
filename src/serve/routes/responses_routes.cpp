// POST /v1/responses, GET /v1/responses/{id}, DELETE /v1/responses/{id}:
// OpenAI's Responses API on the chat path (the same admission, engine,
// response cache and static answers as /v1/chat/completions). Responses are
// stored (unless `store: false`) in a session store of their own — memory,
// the --state-db file or Redis, shared by replicas — bound to the API key
// that created them, for `previous_response_id` and retrieval.
#include <chrono>
#include <iostream>

#include "serve/routes/responder.h"
#include "serve/api/model_choice.h"
#include "serve/api/responses_api.h"
#include "serve/routes/routes.h"
#include "serve/sessions/session_chat.h"

namespace parley::serve {
namespace {

class ResponsesResponder : public Responder {
 public:
  ResponsesResponder(const ExchangePtr& exchange, ApiContext& ctx, ResponsesMeta meta, const GenerationParams& params,
                     const EngineRequests& requests, AnswerPlan plan, std::vector<chat::ChatMessage> conversation,
                     std::string api_key)
      : Responder(exchange, ctx, params, requests, std::move(plan)), meta_(std::move(meta)),
        conversation_(std::move(conversation)), api_key_(std::move(api_key)) {}

 private:
  HttpResponse error_response(const ApiError& e) const override { return serve::error_response(e); }
  void stream_begin() override { send(events_.start()); }
  void stream_event(size_t, const Event& e) override {
    if (!e.text.empty() && e.finish != FinishReason::Error) send(events_.text_delta(e.text));
  }
  void stream_end() override { send(events_.end(choices_[0])); }
  json complete_body() override { return response_object(meta_, &choices_[0]); }
  void answered() override;

  ResponsesMeta meta_;
  ResponsesStream events_{meta_};
  std::vector<chat::ChatMessage> conversation_;  // what this response continued, and its input
  std::string api_key_;
};

// Before the client sees the end, so that it may continue from this response at once.
void ResponsesResponder::answered() {
  meta_.completed_at =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const Choice& c = choices_[0];
  if (!meta_.store) return;
  if (c.finish != FinishReason::Stop && c.finish != FinishReason::Length) {
    meta_.store = false;  // a cancelled or failed answer is not kept
    return;
  }
  StoredResponse stored{response_object(meta_, &c), conversation_};
  stored.conversation.push_back({"assistant", c.text});
  state::Session record;
  record.id = meta_.id;
  record.api_key = api_key_;
  record.max_turns = 0;
  record.ttl_s = ctx_.services.session_ttl_s;
  record.payload = encode_stored_response(stored);
  try {
    ctx_.services.responses->put(record);
  } catch (const std::exception& e) {
    std::cerr << "parley: storing response " << meta_.id << " failed: " << e.what() << "\n";
    meta_.store = false;  // the client is told it was not kept
  }
}

// The stored response `id` if it exists and belongs to the request's API key.
StoredResponse stored_response(ApiContext& ctx, const std::string& id, const std::string& api_key,
                               const std::string& param) {
  std::optional<state::Session> s = ctx.services.responses ? ctx.services.responses->get(id) : std::nullopt;
  if (!s || s->api_key != api_key || s->payload.empty())
    throw ApiError(404, "No stored response '" + id + "' (unknown, expired, or created with store: false)",
                   "invalid_request_error", param,
                   param.empty() ? "response_not_found" : "previous_response_not_found");
  return decode_stored_response(s->payload);
}

void create_response(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  ResponsesRequest request = parse_responses_request(body, request_limits(ctx, *ex));
  if (ctx.ops.max_messages > 0 && request.input.size() > size_t(ctx.ops.max_messages))
    throw invalid_request("At most " + std::to_string(ctx.ops.max_messages) + " input items are accepted", "input",
                          "too_many_messages");
  select_model(body, ctx, request.params);
  require_ready(ctx);
  const std::string api_key = request_api_key(*ex);
  std::vector<chat::ChatMessage> conversation;
  if (!request.previous_response_id.empty())
    conversation = stored_response(ctx, request.previous_response_id, api_key, "previous_response_id").conversation;
  conversation.insert(conversation.end(), request.input.begin(), request.input.end());
  std::vector<chat::ChatMessage> messages;
  if (request.instructions) messages.push_back({"system", *request.instructions});
  messages.insert(messages.end(), conversation.begin(), conversation.end());
  AnswerPlan plan;
  EngineRequests requests = chat_requests(ctx, body, messages, request.params, api_key, plan);
  ResponsesMeta meta = responses_meta(request, answer_model(request.params, ctx), request.store && ctx.services.responses);
  auto responder = std::make_shared<ResponsesResponder>(ex, ctx, std::move(meta), request.params, requests,
                                                        std::move(plan), std::move(conversation), api_key);
  Responder::run(responder, std::move(requests));
}

// GET takes no query parameters: streaming a stored response again (`stream`) is not supported.
void refuse_query(const HttpRequest& r) {
  const size_t q = r.target.find('?');
  if (q == std::string::npos || q + 1 == r.target.size()) return;
  const std::string name = r.target.substr(q + 1, r.target.find_first_of("=&", q + 1) - q - 1);
  throw invalid_request("The query parameter '" + name + "' is not supported by this server", name,
                        "unsupported_parameter");
}

}  // namespace

void add_responses_routes(Router& router, ApiContext& ctx) {
  router.add("POST", "/v1/responses", Access::Key,
             [&ctx](const ExchangePtr& ex, const PathParams&) { create_response(ex, ctx); });
  router.add("GET", "/v1/responses/{id}", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams& p) {
    refuse_query(ex->request());
    ex->respond(json_response(200, stored_response(ctx, p.at("id"), request_api_key(*ex), "").response));
  });
  router.add("DELETE", "/v1/responses/{id}", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams& p) {
    const std::string& id = p.at("id");
    stored_response(ctx, id, request_api_key(*ex), "");
    ctx.services.responses->remove(id);
    ex->respond(json_response(200, {{"id", id}, {"object", "response"}, {"deleted", true}}));
  });
}

}  // namespace parley::serve
