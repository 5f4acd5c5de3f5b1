#include "serve/routes/responder.h"

#include "serve/api/admission.h"
#include "serve/transport/api_error.h"

namespace parley::serve {

Responder::Responder(const ExchangePtr& exchange, ApiContext& ctx, const GenerationParams& params,
                     const EngineRequests& requests, AnswerPlan plan)
    : exchange_(exchange), ctx_(ctx), stream_(params.stream), choices_(requests.requests.size()),
      started_(requests.requests.size(), false), plan_(std::move(plan)) {
  exchange_->set_end_user(params.user);
  for (size_t i = 0; i < choices_.size(); ++i) choices_[i].prompt_index = requests.prompt_index[i];
  if (plan_.recording()) recorded_.choices.resize(choices_.size());
}

void Responder::run(const std::shared_ptr<Responder>& self, EngineRequests requests) {
  if (self->plan_.replay) return self->replay();
  self->generation_ = start_generation(self->exchange_, self->ctx_, std::move(requests.requests),
                                       [self](size_t i, const Event& e) { self->on_event(i, e); });
}

ApiError Responder::engine_error(const Choice& c) {
  if (c.completion_tokens == 0) return invalid_request(c.error.empty() ? "The request was refused" : c.error);
  return server_error("Generation failed: " + c.error);
}

// On the strand already (the route's handler): the events go out at once.
void Responder::replay() {
  const RecordedAnswer answer = std::move(*plan_.replay);
  for (size_t i = 0; i < answer.choices.size() && i < choices_.size(); ++i)
    for (const Event& e : answer.choices[i]) on_event(i, e);
}

void Responder::on_event(size_t i, const Event& e) {
  if (stream_) on_stream_event(i, e);
  started_[i] = true;
  choices_[i].add(e, keep_logprobs_ && !stream_);
  if (plan_.recording()) recorded_.choices[i].push_back(e);
  if (e.final && ++finished_ == choices_.size()) finish();
}

void Responder::on_stream_event(size_t i, const Event& e) {
  if (refused_) return;
  if (!exchange_->answered()) {
    if (e.final && e.finish == FinishReason::Error && e.completion_tokens == 0) {
      Choice refused;
      refused.error = e.error;
      refused_ = true;
      exchange_->respond(error_response(engine_error(refused)));
      cancel();  // the other choices have nobody to go to
      return;
    }
    HttpResponse head;
    head.content_type = "text/event-stream";
    head.headers = {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}};
    for (auto& h : plan_.headers()) head.headers.push_back(std::move(h));
    exchange_->begin_stream(std::move(head));
    stream_begin();
  }
  stream_event(i, e);
  if (exchange_->pending_bytes() > ctx_.max_pending_bytes) cancel();  // the client does not keep up
}

// The session's turn is stored (and its lock released) before the client
// sees the end, so that it may send the next turn at once.
void Responder::finish() {
  finish_answer(ctx_, plan_, choices_, recorded_);
  answered();
  if (!stream_) return respond_complete();
  if (refused_) return;
  stream_end();
  exchange_->end_stream();
}

void Responder::respond_complete() {
  for (const Choice& c : choices_)
    if (c.finish == FinishReason::Error) return exchange_->respond(error_response(engine_error(c)));
  HttpResponse response = json_response(200, complete_body());
  response.headers = plan_.headers();
  exchange_->respond(std::move(response));
}

void Responder::cancel() {
  if (auto g = generation_.lock()) g->cancel();
}

}  // namespace parley::serve
