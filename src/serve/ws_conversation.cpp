#include "serve/ws_conversation.h"

#include "serve/api_error.h"
#include "serve/openai_format.h"
#include "serve/prompt_input.h"
#include "serve/request_builder.h"

namespace parley::serve {
namespace {

json parse_message(std::string_view text, bool binary) {
  if (binary) throw invalid_request("Send JSON requests as text frames", "", "invalid_json");
  json message = json::parse(text, nullptr, false);
  if (message.is_discarded()) throw invalid_request("The message is not valid JSON (or not valid UTF-8)", "", "invalid_json");
  if (!message.is_object()) throw invalid_request("The message must be a JSON object", "", "invalid_json");
  return message;
}

std::vector<int32_t> message_prompt(const json& message, const ApiContext& ctx) {
  const Tokenizer& tok = ctx.model.tokenizer();
  if (get_field(message, "messages")) return chat_tokens(tok, parse_messages(message));
  if (!get_field(message, "prompt"))
    throw invalid_request("A request needs 'prompt' or 'messages'", "prompt", "missing_required_parameter");
  const auto prompts = parse_prompts(message, ctx.limits.vocab_size);
  if (prompts.size() != 1) throw invalid_request("'prompt' must be one prompt", "prompt", "invalid_type");
  return prompt_tokens(tok, prompts[0]);
}

}  // namespace

void WsConversation::on_message(std::string_view text, bool binary) {
  json id = nullptr;
  try {
    const json message = parse_message(text, binary);
    id = message.contains("id") ? message["id"] : json(nullptr);
    if (get_bool(message, "cancel").value_or(false)) {
      if (auto g = running_.lock()) g->cancel();
      return;
    }
    if (busy_)
      throw ApiError(409, "A request is already running on this socket; wait for it or send {\"cancel\": true}",
                     "invalid_request_error", "", "busy");
    start(message);
  } catch (const ApiError& e) {
    send(e.to_json(), id);
  } catch (const std::exception& e) {
    send(server_error(std::string("Internal error: ") + e.what()).to_json(), id);
  }
}

void WsConversation::start(const json& message) {
  check_model(message, ctx_);
  get_string(message, "session_id");  // accepted for forward compatibility: sessions come later
  ParamLimits limits = ctx_.limits;
  limits.max_n = 1;
  const GenerationParams params = parse_generation_params(message, limits, LogprobsStyle::Chat);
  EngineRequests requests = build_requests(params, {message_prompt(message, ctx_)}, ctx_.limits.context_length);
  require_ready(ctx_);
  id_ = message.contains("id") ? message["id"] : json(nullptr);
  choice_ = Choice{};
  busy_ = true;
  ++ctx_.state.busy;
  ++ctx_.state.ws_requests;
  auto channel = channel_.lock();
  if (!channel) return;
  running_ = Generation::start(
      ctx_.engine, ctx_.generations, std::move(requests.requests),
      [channel](std::function<void()> f) { channel->post(std::move(f)); },
      [self = shared_from_this()](size_t, const Event& e) { self->on_event(e); });
}

void WsConversation::on_event(const Event& e) {
  choice_.add(e, false);
  if (!e.text.empty()) send({{"text", e.text}, {"finished", false}}, id_);
  if (auto channel = channel_.lock(); channel && channel->pending_bytes() > ctx_.max_pending_bytes)
    if (auto g = running_.lock()) g->cancel();  // the client does not keep up
  if (!e.final) return;
  busy_ = false;
  --ctx_.state.busy;
  if (e.finish == FinishReason::Error && e.completion_tokens == 0) return send(invalid_request(e.error).to_json(), id_);
  json end = {{"finished", true}, {"finish_reason", finish_reason_name(e.finish)}, {"usage", usage_json(total_usage({choice_}))}};
  if (e.finish == FinishReason::Error) end["error"] = server_error(e.error).to_json()["error"];
  send(std::move(end), id_);
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
