#include "serve/ws/ws_conversation.h"

#include "serve/api/admission.h"
#include "serve/transport/api_error.h"
#include "serve/transport/detached_exchange.h"
#include "serve/routes/middleware.h"
#include "serve/api/model_choice.h"
#include "serve/api/openai_format.h"
#include "serve/api/prompt_input.h"
#include "serve/api/request_builder.h"
#include "serve/api/request_fields.h"
#include "serve/transport/request_id.h"
#include "serve/sessions/session_chat.h"

namespace parley::serve {
namespace {

json parse_message(std::string_view text, bool binary) {
  if (binary) throw invalid_request("Send JSON requests as text frames", "", "invalid_json");
  json message = json::parse(text, nullptr, false);
  if (message.is_discarded()) throw invalid_request("The message is not valid JSON (or not valid UTF-8)", "", "invalid_json");
  if (!message.is_object()) throw invalid_request("The message must be a JSON object", "", "invalid_json");
  return message;
}

// Every frame that ends a request says so, errors included, with the request's id: a client
// reading "until finished" never waits for more.
json ending(json message, const std::string& request_id) {
  message["finished"] = true;
  message["request_id"] = request_id;
  return message;
}

bool is_chat(const json& message) {
  return get_field(message, "messages") || get_field(message, "session_id");
}

std::vector<int32_t> message_prompt(const json& message, ApiContext& ctx, const GenerationParams& params,
                                    const std::string& api_key, AnswerPlan& plan) {
  if (is_chat(message)) return chat_prompt(ctx, message, params, api_key, plan);
  if (!get_field(message, "prompt"))
    throw invalid_request("A request needs 'prompt' or 'messages'", "prompt", "missing_required_parameter");
  if (get_field(message, "chat_template_kwargs"))  // a plain prompt is not rendered by the template
    throw invalid_request("'chat_template_kwargs' needs 'messages'", "chat_template_kwargs", "invalid_value");
  const auto prompts = parse_prompts(message, ctx.limits.vocab_size);
  if (prompts.size() != 1) throw invalid_request("'prompt' must be one prompt", "prompt", "invalid_type");
  return prompt_tokens(ctx.model.tokenizer(), prompts[0]);
}

}  // namespace

void WsConversation::on_message(std::string_view text, bool binary) {
  json id = nullptr;
  const std::string request_id = new_request_id();
  answer_errors(id, request_id, [&] {
    const json message = parse_message(text, binary);
    id = message.contains("id") ? message["id"] : json(nullptr);
    if (get_bool(message, "cancel").value_or(false)) {
      if (auto g = running_.lock()) g->cancel();
      cancelled_ = loading_;
      return;
    }
    if (busy_)
      throw ApiError(409, "A request is already running on this socket; wait for it or send {\"cancel\": true}",
                     "invalid_request_error", "", "busy");
    // Each message passes the checks an HTTP request passes (key, rate, validation).
    HttpRequest request = upgrade_;
    request.method = "POST";
    request.body = std::string(text);
    auto admission = std::make_shared<DetachedExchange>(std::move(request));
    admission->set_request_id(request_id);
    check_ws_message(*admission, ctx_);
    if (!load_model(message, admission)) start(message, *admission, ctx_, nullptr);
  });
}

void WsConversation::answer_errors(const json& id, const std::string& request_id, const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    send(ending(e.to_json(), request_id), id);
  } catch (const std::exception& e) {
    send(ending(server_error(std::string("Internal error: ") + e.what()).to_json(), request_id), id);
  }
}

// The socket counts as answering while the model loads: no idle timeout, no eviction.
bool WsConversation::load_model(const json& message, std::shared_ptr<Exchange> admission) {
  const auto name = get_string(message, "model");
  auto channel = channel_.lock();
  if (!models_ || !name || !channel) return false;
  const auto ready = [self = shared_from_this(), message, admission](ApiContext* model, std::shared_ptr<const void> hold,
                                                                     const std::string& error) {
    if (auto channel = self->channel_.lock())
      channel->post([self, message, admission, model, hold = std::move(hold), error]() mutable {
        self->on_model(message, *admission, model, std::move(hold), error);
      });
  };
  if (!models_->acquire(*name, ready)) return false;
  // `ready` posts to the strand: it runs after this.
  busy_ = loading_ = true;
  cancelled_ = false;
  channel->answering(true);
  return true;
}

void WsConversation::on_model(const json& message, Exchange& admission, ApiContext* model,
                              std::shared_ptr<const void> hold, const std::string& error) {
  busy_ = loading_ = false;
  answer_errors(message.contains("id") ? message["id"] : json(nullptr), admission.request_id(), [&] {
    if (!model) throw ApiError(503, error, "server_error", "model", "model_unavailable");
    start(message, admission, *model, std::move(hold));
    if (auto g = running_.lock(); g && cancelled_) g->cancel();
  });
  if (auto channel = channel_.lock(); channel && !busy_) channel->answering(false);
}

void WsConversation::start(const json& message, Exchange& admission, ApiContext& model,
                           std::shared_ptr<const void> hold) {
  check_fields(message, RouteFields::WebSocket);
  ParamLimits limits = request_limits(model, admission);
  limits.max_n = 1;
  GenerationParams params = parse_generation_params(message, limits, LogprobsStyle::Chat);
  select_model(message, model, params);
  params.output = parse_output_format(message, admission.request().body, model.grammars);
  admission.set_end_user(params.user);
  require_ready(model);
  AnswerPlan plan;
  EngineRequests requests = build_requests(
      params, {message_prompt(message, model, params, request_api_key(admission), plan)}, model.limits.context_length);
  plan_answer(model, message, params, requests, is_chat(message), request_api_key(admission), plan);
  auto channel = channel_.lock();
  if (!channel) return;
  // Admission may refuse (the plan then releases a session's turn lock); the
  // generation's events run on the strand, so after this function.
  std::shared_ptr<Generation> generation;
  if (!plan.replay)
    generation = start_generation(
        admission, model, std::move(requests.requests), [channel](std::function<void()> f) { channel->post(std::move(f)); },
        [self = shared_from_this()](size_t, const Event& e) { self->on_event(e); });
  id_ = message.contains("id") ? message["id"] : json(nullptr);
  request_id_ = admission.request_id();
  // An answer of the fallback model (degraded mode) says so in its last frame.
  degraded_ = generation && &generation->engine() == model.fallback_engine;
  model_ = &model;
  model_hold_ = std::move(hold);
  choice_ = Choice{};
  plan_ = std::move(plan);
  recorded_ = RecordedAnswer{};
  if (plan_.recording()) recorded_.choices.resize(1);
  busy_ = true;
  ++ctx_.state.busy;
  ++ctx_.state.ws_requests;
  running_ = generation;
  channel->answering(true);
  if (plan_.replay) {
    const RecordedAnswer answer = std::move(*plan_.replay);
    for (const Event& e : answer.choices.at(0)) on_event(e);
  }
}

void WsConversation::on_event(const Event& e) {
  choice_.add(e, false);
  if (plan_.recording()) recorded_.choices[0].push_back(e);
  if (!e.text.empty()) send({{"text", e.text}, {"finished", false}}, id_);
  if (auto channel = channel_.lock(); channel && channel->pending_bytes() > ctx_.max_pending_bytes)
    if (auto g = running_.lock()) g->cancel();  // the client does not keep up
  if (e.final) finish(e);
}

// The session's turn is stored before the end message, so that the client
// may send the next turn as soon as it sees it.
void WsConversation::finish(const Event& e) {
  finish_answer(*model_, plan_, {choice_}, recorded_);
  busy_ = false;
  --ctx_.state.busy;
  json end = end_message(e);
  plan_ = AnswerPlan{};
  send(std::move(end), id_);
  model_hold_.reset();  // the model may be unloaded now
  if (auto channel = channel_.lock()) channel->answering(false);  // after the end message: it may close
}

// An engine refusal before any token ends the answer with an error instead.
json WsConversation::end_message(const Event& e) {
  if (e.finish == FinishReason::Error && e.completion_tokens == 0) return ending(invalid_request(e.error).to_json(), request_id_);
  json end = {{"finish_reason", finish_reason_name(e.finish)}, {"usage", usage_json(total_usage({choice_}))}};
  if (e.finish == FinishReason::Error) end["error"] = server_error(e.error).to_json()["error"];
  if (!plan_.cache_status.empty()) end["cache"] = plan_.cache_status;
  if (plan_.static_answer) end["static"] = true;
  if (degraded_) end["degraded"] = true;
  plan_.decorate(end);
  return ending(std::move(end), request_id_);
}

// `id`: the request's "id", echoed back.
void WsConversation::send(json message, const json& id) {
  auto channel = channel_.lock();
  if (!channel) return;
  if (!id.is_null()) message["id"] = id;
  channel->send(dump_json(message));
}

void WsConversation::on_close() {
  if (auto g = running_.lock()) g->cancel();
  channel_.reset();
}

}  // namespace parley::serve
