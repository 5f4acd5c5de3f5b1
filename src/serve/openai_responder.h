#pragma once
// Answers one OpenAI-style request from its engine events: a complete JSON
// response once every choice finished, or an SSE stream that flushes each
// piece of text as it arrives and ends with `data: [DONE]`. A cache hit or a
// static answer (AnswerPlan::replay) goes through the same path as the
// engine's events, so its bytes are those of a generated answer.
#include <memory>
#include <string>
#include <vector>

#include "serve/answer_cache.h"
#include "serve/api_context.h"
#include "serve/exchange.h"
#include "serve/openai_format.h"
#include "serve/request_builder.h"

namespace parley::serve {

class OpenAiResponder : public std::enable_shared_from_this<OpenAiResponder> {
 public:
  // `echo`: per prompt, text to put before its choices' output ("" for none).
  static void start(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta, const GenerationParams& params,
                    EngineRequests requests, std::vector<std::string> echo, AnswerPlan plan = {});

 private:
  OpenAiResponder(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta, const GenerationParams& params,
                  const EngineRequests& requests, std::vector<std::string> echo, AnswerPlan plan);
  void replay();
  void on_event(size_t i, const Event& e);
  void on_stream_event(size_t i, const Event& e);
  void send_piece(ChunkPiece piece);
  void finish_stream();
  void respond_complete();
  void finish();

  ExchangePtr exchange_;
  ApiContext& ctx_;
  ResponseMeta meta_;
  bool stream_, include_usage_;
  std::vector<Choice> choices_;
  std::vector<std::vector<Event>> unsent_logprobs_;  // per choice: tokens whose text is held back
  std::vector<bool> started_;
  std::vector<std::string> echo_;
  size_t finished_ = 0;
  bool refused_ = false;  // streaming: the engine refused the request before it began
  std::weak_ptr<Generation> generation_;
  AnswerPlan plan_;
  RecordedAnswer recorded_;  // the events, when the plan stores the answer in the cache
};

}  // namespace parley::serve
