#pragma once
// Answers one generation request from its engine events, in the shape of the
// API it came through (a subclass: OpenAI's chat and completions, Anthropic's
// Messages, OpenAI's Responses): a complete JSON response once every choice
// finished, or an SSE stream that sends each piece of text as it arrives.
// What every API shares is here: the generation is started, or the plan's
// recorded events (a cache hit or a static answer) replayed through the same
// path; events are folded into choices; an engine refusal before the stream
// began is answered as an error; a client that does not keep up is
// cancelled; and the plan is finished (cache entry, session turn) before the
// client sees the end.
#include <memory>
#include <vector>

#include "serve/sessions/answer_cache.h"
#include "serve/api/api_context.h"
#include "serve/transport/exchange.h"
#include "serve/api/request_builder.h"

namespace parley::serve {

class Responder : public std::enable_shared_from_this<Responder> {
 public:
  virtual ~Responder() = default;
  // Runs `self`'s request: generates `requests`, or replays its plan.
  static void run(const std::shared_ptr<Responder>& self, EngineRequests requests);

 protected:
  Responder(const ExchangePtr& exchange, ApiContext& ctx, const GenerationParams& params, const EngineRequests& requests,
            AnswerPlan plan);

  // An error in the API's shape (the route's error renderer).
  virtual HttpResponse error_response(const ApiError& e) const = 0;
  // Streaming: what goes out once the stream began, before any piece.
  virtual void stream_begin() {}
  // Streaming: the output of choice i's event, before it is folded into choices_[i].
  virtual void stream_event(size_t i, const Event& e) = 0;
  // Streaming: the end, once every choice finished (end_stream follows).
  virtual void stream_end() = 0;
  // The complete response's body, once every choice finished without an engine error.
  virtual json complete_body() = 0;
  // Once every choice finished, after the plan (cache, session turn) and
  // before the client sees the end.
  virtual void answered() {}

  void send(std::string data) { exchange_->send_chunk(std::move(data)); }
  // The error of an engine that failed a choice: a refusal before any token
  // is the client's (400), a failure after it the server's (500).
  static ApiError engine_error(const Choice& c);

  ExchangePtr exchange_;
  ApiContext& ctx_;
  const bool stream_;
  bool keep_logprobs_ = false;  // complete responses: keep each token's log-probabilities in choices_
  std::vector<Choice> choices_;
  std::vector<bool> started_;  // the choice had an event
  AnswerPlan plan_;

 private:
  void replay();
  void on_event(size_t i, const Event& e);
  void on_stream_event(size_t i, const Event& e);
  void finish();
  void respond_complete();
  void cancel();

  size_t finished_ = 0;
  bool refused_ = false;  // streaming: the engine refused the request before it began
  std::weak_ptr<Generation> generation_;
  RecordedAnswer recorded_;  // the events, when the plan stores the answer in the cache
};

}  // namespace parley::serve
