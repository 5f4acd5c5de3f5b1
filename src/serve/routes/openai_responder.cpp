#include "serve/routes/openai_responder.h"

#include "serve/transport/api_error.h"
#include "serve/transport/sse.h"

namespace parley::serve {

OpenAiResponder::OpenAiResponder(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta,
                                 const GenerationParams& params, const EngineRequests& requests,
                                 std::vector<std::string> echo, AnswerPlan plan)
    : Responder(exchange, ctx, params, requests, std::move(plan)), meta_(std::move(meta)),
      include_usage_(params.include_usage), unsent_logprobs_(requests.requests.size()), echo_(std::move(echo)) {
  keep_logprobs_ = meta_.logprobs;
  if (meta_.parsing)
    for (size_t i = 0; i < requests.requests.size(); ++i) parsers_.emplace_back(*meta_.parsing);
}

void OpenAiResponder::start(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta,
                            const GenerationParams& params, EngineRequests requests, std::vector<std::string> echo,
                            AnswerPlan plan) {
  std::shared_ptr<OpenAiResponder> self(
      new OpenAiResponder(exchange, ctx, std::move(meta), params, requests, std::move(echo), std::move(plan)));
  run(self, std::move(requests));
}

HttpResponse OpenAiResponder::error_response(const ApiError& e) const { return serve::error_response(e); }

void OpenAiResponder::stream_event(size_t i, const Event& e) {
  const Choice& c = choices_[i];
  if (meta_.logprobs && e.token >= 0) unsent_logprobs_[i].push_back(e);
  ChunkPiece piece{i, e.text, {}, c.text.size(), !started_[i], std::nullopt};
  if (piece.first && !echo_.empty()) piece.text = echo_[c.prompt_index] + piece.text;
  if (!parsers_.empty()) split(i, e, piece);
  if (e.final && e.finish == FinishReason::Error) {
    send(sse_event(ApiError(500, "Generation failed: " + e.error, "server_error").to_json()));
  } else if (piece.first || !piece.text.empty() || !piece.reasoning.empty() || !piece.tool_calls.empty() ||
             (e.final && !unsent_logprobs_[i].empty())) {
    piece.tokens = std::move(unsent_logprobs_[i]);
    unsent_logprobs_[i].clear();
    send_piece(piece);
  }
  if (e.final) {
    ChunkPiece end{i, "", {}, c.text.size(), false, e.finish};
    end.called = !parsers_.empty() && !parsers_[i].calls().empty();
    send_piece(end);
  }
}

// The event's text as content, reasoning and tool-call deltas.
void OpenAiResponder::split(size_t i, const Event& e, ChunkPiece& piece) {
  chat::OutputDelta d = parsers_[i].feed(e.text);
  if (e.final) {
    chat::OutputDelta rest = parsers_[i].finish();
    d.content += rest.content;
    d.reasoning += rest.reasoning;
    d.tool_calls.insert(d.tool_calls.end(), rest.tool_calls.begin(), rest.tool_calls.end());
  }
  piece.text = std::move(d.content);
  piece.reasoning = std::move(d.reasoning);
  piece.tool_calls = std::move(d.tool_calls);
}

void OpenAiResponder::send_piece(ChunkPiece piece) {
  json chunk = stream_chunk(meta_, piece, ctx_.model.tokenizer());
  if (include_usage_) chunk["usage"] = nullptr;
  plan_.decorate(chunk);
  send(sse_event(chunk));
}

void OpenAiResponder::stream_end() {
  if (include_usage_) {
    json chunk = usage_chunk(meta_, total_usage(choices_));
    plan_.decorate(chunk);
    send(sse_event(chunk));
  }
  send(kSseDone);
}

json OpenAiResponder::complete_body() {
  std::vector<Choice> choices = choices_;
  if (!echo_.empty())
    for (Choice& c : choices) c.text = echo_[c.prompt_index] + c.text;
  json body = full_response(meta_, choices, ctx_.model.tokenizer());
  plan_.decorate(body);
  return body;
}

}  // namespace parley::serve
