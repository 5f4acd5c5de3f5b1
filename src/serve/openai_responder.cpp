#include "serve/openai_responder.h"

#include "serve/api_error.h"
#include "serve/sse.h"

namespace parley::serve {
namespace {

// An engine error before any token means the engine refused the request.
ApiError engine_error(const Choice& c) {
  if (c.completion_tokens == 0) return invalid_request(c.error.empty() ? "The request was refused" : c.error);
  return server_error("Generation failed: " + c.error);
}

HttpResponse sse_head(const Headers& extra) {
  HttpResponse head;
  head.content_type = "text/event-stream";
  head.headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
  head.headers.insert(head.headers.end(), extra.begin(), extra.end());
  return head;
}

}  // namespace

OpenAiResponder::OpenAiResponder(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta,
                                 const GenerationParams& params, const EngineRequests& requests,
                                 std::vector<std::string> echo, AnswerPlan plan)
    : exchange_(exchange), ctx_(ctx), meta_(std::move(meta)), stream_(params.stream),
      include_usage_(params.include_usage), choices_(requests.requests.size()),
      unsent_logprobs_(requests.requests.size()), started_(requests.requests.size(), false), echo_(std::move(echo)),
      plan_(std::move(plan)) {
  for (size_t i = 0; i < choices_.size(); ++i) choices_[i].prompt_index = requests.prompt_index[i];
  if (plan_.recording()) recorded_.choices.resize(choices_.size());
}

void OpenAiResponder::start(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta,
                            const GenerationParams& params, EngineRequests requests, std::vector<std::string> echo,
                            AnswerPlan plan) {
  std::shared_ptr<OpenAiResponder> self(
      new OpenAiResponder(exchange, ctx, std::move(meta), params, requests, std::move(echo), std::move(plan)));
  if (self->plan_.replay) return self->replay();
  self->generation_ = start_generation(exchange, ctx, std::move(requests.requests),
                                       [self](size_t i, const Event& e) { self->on_event(i, e); });
}

// On the strand already (the route's handler): the events go out at once.
void OpenAiResponder::replay() {
  const RecordedAnswer answer = std::move(*plan_.replay);
  for (size_t i = 0; i < answer.choices.size() && i < choices_.size(); ++i)
    for (const Event& e : answer.choices[i]) on_event(i, e);
}

void OpenAiResponder::on_event(size_t i, const Event& e) {
  if (stream_) on_stream_event(i, e);
  Choice& c = choices_[i];
  if (!stream_ && !started_[i] && !echo_.empty()) c.text = echo_[c.prompt_index];
  started_[i] = true;
  c.add(e, meta_.logprobs && !stream_);
  if (plan_.recording()) recorded_.choices[i].push_back(e);
  if (e.final && ++finished_ == choices_.size()) finish();
}

// The session's turn is stored (and its lock released) before the client
// sees the end, so that it may send the next turn at once.
void OpenAiResponder::finish() {
  finish_answer(ctx_, plan_, choices_, recorded_);
  stream_ ? finish_stream() : respond_complete();
}

void OpenAiResponder::respond_complete() {
  for (const Choice& c : choices_)
    if (c.finish == FinishReason::Error) return exchange_->respond(error_response(engine_error(c)));
  json body = full_response(meta_, choices_, ctx_.model.tokenizer());
  plan_.decorate(body);
  HttpResponse response = json_response(200, body);
  response.headers = plan_.headers();
  exchange_->respond(std::move(response));
}

// Called before the event is folded into choices_[i].
void OpenAiResponder::on_stream_event(size_t i, const Event& e) {
  Choice& c = choices_[i];
  if (refused_) return;
  if (!exchange_->answered()) {
    if (e.final && e.finish == FinishReason::Error && e.completion_tokens == 0) {
      c.error = e.error;
      refused_ = true;
      exchange_->respond(error_response(engine_error(c)));
      if (auto g = generation_.lock()) g->cancel();  // the other choices have nobody to go to
      return;
    }
    exchange_->begin_stream(sse_head(plan_.headers()));
  }
  if (meta_.logprobs && e.token >= 0) unsent_logprobs_[i].push_back(e);
  ChunkPiece piece{i, e.text, {}, c.text.size(), !started_[i], std::nullopt};
  if (piece.first && !echo_.empty()) piece.text = echo_[c.prompt_index] + piece.text;
  if (e.final && e.finish == FinishReason::Error) {
    exchange_->send_chunk(sse_event(ApiError(500, "Generation failed: " + e.error, "server_error").to_json()));
  } else if (piece.first || !piece.text.empty() || (e.final && !unsent_logprobs_[i].empty())) {
    piece.tokens = std::move(unsent_logprobs_[i]);
    unsent_logprobs_[i].clear();
    send_piece(piece);
  }
  if (e.final) send_piece({i, "", {}, c.text.size(), false, e.finish});
  if (exchange_->pending_bytes() > ctx_.max_pending_bytes)
    if (auto g = generation_.lock()) g->cancel();  // the client does not keep up
}

void OpenAiResponder::send_piece(ChunkPiece piece) {
  json chunk = stream_chunk(meta_, piece, ctx_.model.tokenizer());
  if (include_usage_) chunk["usage"] = nullptr;
  plan_.decorate(chunk);
  exchange_->send_chunk(sse_event(chunk));
}

void OpenAiResponder::finish_stream() {
  if (refused_) return;
  if (include_usage_) {
    json chunk = usage_chunk(meta_, total_usage(choices_));
    plan_.decorate(chunk);
    exchange_->send_chunk(sse_event(chunk));
  }
  exchange_->send_chunk(kSseDone);
  exchange_->end_stream();
}

}  // namespace parley::serve
