#pragma once
// How a chat or completion request is answered besides plain generation: by
// a static answer, from the response cache (a hit), or generated and then
// stored (a miss); as a session turn that is appended once the answer is
// complete. Both responders (HTTP and WebSocket) follow an AnswerPlan.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chat/chat_template.h"
#include "serve/api/api_context.h"
#include "serve/sessions/cached_answer.h"
#include "serve/api/choice.h"
#include "serve/transport/http_message.h"
#include "serve/api/request_builder.h"
#include "serve/sessions/session_turn.h"

namespace parley::serve {

struct AnswerPlan {
  std::optional<RecordedAnswer> replay;  // a static answer or a cache hit: no engine work
  std::string cache_key;                 // record the answer and store it under this key
  std::string cache_status;              // "hit", "miss", "" (not looked up)
  bool static_answer = false;
  std::shared_ptr<SessionTurn> session;  // the turn lock of a session turn
  std::string user_text;                 // the last user message (session turn, static match)

  bool recording() const { return !cache_key.empty() && !replay; }
  Headers headers() const;             // X-Parley-Cache, X-Parley-Static
  void decorate(json& object) const;   // "session_id" in a response, chunk or WebSocket message
};

// The text of the last user message ("" when there is none).
std::string last_user_text(const std::vector<chat::ChatMessage>& messages);

// Fills in the static answer (chat only: `chat`) or the cache lookup, unless
// the request opts out with "cache": false. `api_key`: the name of the key
// that sent the request, whose own entries it is answered from (unless the
// cache is shared: StateServices::cache_per_key).
void plan_answer(ApiContext& ctx, const json& body, const GenerationParams& params, const EngineRequests& requests,
                 bool chat, const std::string& api_key, AnswerPlan& plan);

// Once every choice finished: a complete answer (stop or length) goes into
// the cache (unless replayed) and becomes the session's turn; the session's
// lock is released either way.
void finish_answer(ApiContext& ctx, AnswerPlan& plan, const std::vector<Choice>& choices,
                   const RecordedAnswer& recorded);

}  // namespace parley::serve
