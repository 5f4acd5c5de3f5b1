#include "serve/sessions/answer_cache.h"

#include <iostream>

#include "serve/api/json_fields.h"

namespace parley::serve {
namespace {

bool static_answers_on(const ApiContext& ctx) {
  switch (ctx.services.static_mode) {
    case StaticAnswersMode::Always: return true;
    case StaticAnswersMode::Degraded: return ctx.state.degraded;
    case StaticAnswersMode::Off: return false;
  }
  return false;
}

bool complete(const std::vector<Choice>& choices) {
  for (const Choice& c : choices)
    if (c.finish != FinishReason::Stop && c.finish != FinishReason::Length) return false;
  return !choices.empty();
}

// The cache is an optimisation: its failures are logged and the request goes on.
void warn(const char* what, const std::exception& e) {
  std::cerr << "parley: response cache " << what << " failed: " << e.what() << "\n";
}

std::optional<RecordedAnswer> cache_lookup(state::ResponseCache& cache, const std::string& key) {
  try {
    if (auto bytes = cache.get(key)) return decode_answer(*bytes);
  } catch (const std::exception& e) {
    warn("lookup", e);
  }
  return std::nullopt;
}

}  // namespace

Headers AnswerPlan::headers() const {
  Headers h;
  if (!cache_status.empty()) h.emplace_back("X-Parley-Cache", cache_status);
  if (static_answer) h.emplace_back("X-Parley-Static", "1");
  return h;
}

void AnswerPlan::decorate(json& object) const {
  if (session) object["session_id"] = session->session().id;
}

std::string last_user_text(const std::vector<chat::ChatMessage>& messages) {
  for (auto it = messages.rbegin(); it != messages.rend(); ++it)
    if (it->role == "user") return it->content;
  return "";
}

void plan_answer(ApiContext& ctx, const json& body, const GenerationParams& params, const EngineRequests& requests,
                 bool chat, const std::string& api_key, AnswerPlan& plan) {
  StateServices& s = ctx.services;
  // A fixed answer is free text: never one for a request that asked for a
  // format or tools, nor for one that named a LoRA adapter (the answers are the base model's).
  if (chat && s.static_answers && params.n == 1 && !params.output.grammar && !params.lora && static_answers_on(ctx)) {
    if (const auto answer = s.static_answers->match(plan.user_text)) {
      const auto answer_tokens = ctx.model.tokenizer().encode(*answer, false, false);
      plan.replay = fixed_answer(*answer, int32_t(requests.requests[0].prompt.size()), int32_t(answer_tokens.size()));
      plan.static_answer = true;
      ++s.static_answers_served;
      return;
    }
  }
  if (!s.response_cache || !is_cacheable(params) || !get_bool(body, "cache").value_or(true)) return;
  const CacheScope scope{ctx.model_id, ctx.fingerprint, s.cache_per_key ? api_key : "", params.output.key};
  plan.cache_key = response_cache_key(scope, requests.requests, params.seeded);
  plan.replay = cache_lookup(*s.response_cache, plan.cache_key);
  plan.cache_status = plan.replay ? "hit" : "miss";
}

void finish_answer(ApiContext& ctx, AnswerPlan& plan, const std::vector<Choice>& choices,
                   const RecordedAnswer& recorded) {
  const bool done = complete(choices);
  if (done && plan.recording() && ctx.services.response_cache) {
    try {
      ctx.services.response_cache->put(plan.cache_key, encode_answer(recorded), ctx.services.response_cache_ttl);
    } catch (const std::exception& e) {
      warn("store", e);
    }
  }
  if (!plan.session) return;
  if (done && plan.session->store(plan.user_text, choices[0].text)) ++ctx.services.session_turns_stored;
  plan.session->release();
}

}  // namespace parley::serve
