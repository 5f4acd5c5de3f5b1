#pragma once
// Which body fields each route takes. A field a route does not read is a 400
// naming it (as OpenAI answers "Unrecognized request argument"), and OpenAI
// features Parley does not offer (tools, response formats, audio…) are refused
// by name: a client must never believe it got what it asked for when it did not.
#include "serve/api/json_fields.h"

namespace parley::serve {

enum class RouteFields {
  Chat,         // POST /v1/chat/completions
  Completions,  // POST /v1/completions
  Batch,        // POST /chat
  WebSocket,    // a /v1/ws request message: chat or completion fields, id
  Embeddings,   // POST /v1/embeddings
  Messages,     // POST /v1/messages (Anthropic's Messages API)
  Responses,    // POST /v1/responses (OpenAI's Responses API)
  Session,      // POST /v1/sessions
  TokenizeContent,   // POST /tokenize, llama-server's shape
  TokenizePrompt,    // POST /tokenize, vLLM's completion shape
  TokenizeMessages,  // POST /tokenize, vLLM's chat shape
  Detokenize,        // POST /detokenize
  ApplyTemplate,     // POST /apply-template
};

void check_fields(const json& body, RouteFields route);

}  // namespace parley::serve
