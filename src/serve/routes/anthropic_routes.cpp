// POST /v1/messages: Anthropic's Messages API on the chat path (the same
// admission, engine, response cache and static answers as
// /v1/chat/completions), with Anthropic's shapes for answers and errors.
#include "serve/api/anthropic_messages.h"
#include "serve/api/model_choice.h"
#include "serve/routes/responder.h"
#include "serve/routes/routes.h"
#include "serve/sessions/session_chat.h"

namespace parley::serve {
namespace {

class AnthropicResponder : public Responder {
 public:
  AnthropicResponder(const ExchangePtr& exchange, ApiContext& ctx, const GenerationParams& params,
                     const EngineRequests& requests, AnswerPlan plan)
      : Responder(exchange, ctx, params, requests, std::move(plan)),
        meta_(anthropic_meta(answer_model(params, ctx), int64_t(requests.requests.at(0).prompt.size()))) {}

 private:
  HttpResponse error_response(const ApiError& e) const override { return anthropic_error_response(e); }
  void stream_begin() override { send(anthropic_stream_start(meta_)); }
  void stream_event(size_t, const Event& e) override {
    if (failed_) return;
    if (e.final && e.finish == FinishReason::Error) {
      failed_ = true;
      return send(anthropic_stream_error(server_error("Generation failed: " + e.error)));
    }
    if (!e.text.empty()) send(anthropic_text_delta(e.text));
  }
  void stream_end() override {
    if (!failed_) send(anthropic_stream_end(choices_[0]));
  }
  json complete_body() override { return anthropic_message(meta_, choices_[0]); }

  AnthropicMeta meta_;
  bool failed_ = false;  // an error event ended the stream
};

void create_message(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  AnthropicRequest request = parse_anthropic_request(body, request_limits(ctx, *ex));
  select_model(body, ctx, request.params);
  require_ready(ctx);
  AnswerPlan plan;
  EngineRequests requests = chat_requests(ctx, body, request.messages, request.params, request_api_key(*ex), plan);
  auto responder = std::make_shared<AnthropicResponder>(ex, ctx, request.params, requests, std::move(plan));
  Responder::run(responder, std::move(requests));
}

}  // namespace

void add_anthropic_routes(Router& router, ApiContext& ctx) {
  router.add(
      "POST", "/v1/messages", Access::Key,
      [&ctx](const ExchangePtr& ex, const PathParams&) { create_message(ex, ctx); }, anthropic_error_response);
}

}  // namespace parley::serve
