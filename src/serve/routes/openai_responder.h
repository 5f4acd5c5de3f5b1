#pragma once
// Answers one OpenAI-style request (chat or text completions): a complete
// chat.completion / text_completion, or an SSE stream of chunks that ends
// with `data: [DONE]`.
#include <memory>
#include <string>
#include <vector>

#include "serve/api/openai_format.h"
#include "serve/routes/responder.h"

namespace parley::serve {

class OpenAiResponder : public Responder {
 public:
  // `echo`: per prompt, text to put before its choices' output ("" for none).
  static void start(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta, const GenerationParams& params,
                    EngineRequests requests, std::vector<std::string> echo, AnswerPlan plan = {});

 private:
  OpenAiResponder(const ExchangePtr& exchange, ApiContext& ctx, ResponseMeta meta, const GenerationParams& params,
                  const EngineRequests& requests, std::vector<std::string> echo, AnswerPlan plan);
  HttpResponse error_response(const ApiError& e) const override;
  void stream_event(size_t i, const Event& e) override;
  void stream_end() override;
  json complete_body() override;
  void send_piece(ChunkPiece piece);
  void split(size_t i, const Event& e, ChunkPiece& piece);

  ResponseMeta meta_;
  bool include_usage_;
  std::vector<std::vector<Event>> unsent_logprobs_;  // per choice: tokens whose text is held back
  std::vector<std::string> echo_;
  std::vector<chat::OutputParser> parsers_;  // per choice, when meta_.parsing
};

}  // namespace parley::serve
