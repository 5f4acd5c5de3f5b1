#include "serve/api/openai_format.h"

#include "util/random_text.h"

#include <chrono>

namespace parley::serve {
namespace {

json bytes_of(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(int(c));
  return b;
}

json chat_token_logprob(const Tokenizer& tok, int32_t id, float logprob) {
  const std::string piece = tok.token_to_piece(id, true);
  return {{"token", piece}, {"logprob", logprob}, {"bytes", bytes_of(piece)}};
}

// {"content": [{token, logprob, bytes, top_logprobs: [...]}, ...]}
json chat_logprobs(const std::vector<Event>& tokens, const Tokenizer& tok) {
  json content = json::array();
  for (const Event& e : tokens) {
    json entry = chat_token_logprob(tok, e.token, e.logprob);
    entry["top_logprobs"] = json::array();
    for (const TokenLogprob& t : e.top_logprobs) entry["top_logprobs"].push_back(chat_token_logprob(tok, t.token, t.logprob));
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}};
}

// The legacy completions layout: parallel arrays and a map per position.
json completion_logprobs(const std::vector<Event>& tokens, size_t text_offset, const Tokenizer& tok) {
  json out = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const Event& e : tokens) {
    const std::string piece = tok.token_to_piece(e.token, true);
    out["tokens"].push_back(piece);
    out["token_logprobs"].push_back(e.logprob);
    json top = json::object();
    for (const TokenLogprob& t : e.top_logprobs) top[tok.token_to_piece(t.token, true)] = t.logprob;
    out["top_logprobs"].push_back(std::move(top));
    out["text_offset"].push_back(text_offset);
    text_offset += piece.size();
  }
  return out;
}

json logprobs_json(const ResponseMeta& meta, const std::vector<Event>& tokens, size_t text_offset, const Tokenizer& tok) {
  if (!meta.logprobs) return nullptr;
  return meta.api == Api::Chat ? chat_logprobs(tokens, tok) : completion_logprobs(tokens, text_offset, tok);
}

json envelope(const ResponseMeta& meta, bool chunk) {
  const char* object = meta.api == Api::Completions ? "text_completion"
                       : chunk                      ? "chat.completion.chunk"
                                                    : "chat.completion";
  return {{"id", meta.id}, {"object", object}, {"created", meta.created}, {"model", meta.model},
          {"system_fingerprint", meta.fingerprint}};
}

json tool_call_delta_json(const chat::ToolCallDelta& d) {
  json out = {{"index", d.index}};
  if (!d.id.empty()) out["id"] = d.id, out["type"] = "function";
  json function = {{"arguments", d.arguments}};
  if (!d.name.empty()) function["name"] = d.name;
  out["function"] = std::move(function);
  return out;
}

// The assistant message of a chat answer, split by the request's parser.
json chat_message(const ResponseMeta& meta, const Choice& c, bool& called) {
  called = false;
  if (!meta.parsing) return {{"role", "assistant"}, {"content", c.text}};
  chat::OutputParser parser(*meta.parsing);
  chat::OutputDelta all = parser.feed(c.text);
  const chat::OutputDelta rest = parser.finish();
  all.content += rest.content;
  all.reasoning += rest.reasoning;
  json calls = json::array();
  for (const chat::ParsedToolCall& call : parser.calls())
    calls.push_back({{"id", call.id}, {"type", "function"}, {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
  called = !calls.empty();
  json message = {{"role", "assistant"}, {"content", all.content.empty() && called ? json(nullptr) : json(all.content)}};
  if (!all.reasoning.empty()) message["reasoning_content"] = all.reasoning;
  if (called) message["tool_calls"] = std::move(calls);
  return message;
}

}  // namespace

json finish_json(std::optional<FinishReason> r, bool called) {
  if (r && *r == FinishReason::Stop && called) return "tool_calls";
  return r ? json(finish_reason_name(*r)) : json(nullptr);
}

std::string random_id(const char* prefix) {
  return prefix + random_alnum(24);
}

ResponseMeta make_meta(Api api, std::string model, std::string fingerprint, bool logprobs) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return {api, random_id(api == Api::Chat ? "chatcmpl-" : "cmpl-"),
          std::chrono::duration_cast<std::chrono::seconds>(now).count(), std::move(model), std::move(fingerprint),
          logprobs, std::nullopt};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json stream_chunk(const ResponseMeta& meta, const ChunkPiece& piece, const Tokenizer& tok) {
  json choice = {{"index", piece.index}};
  if (meta.api == Api::Chat) {
    json delta = json::object();
    if (piece.first) delta["role"] = "assistant";
    if (piece.first || !piece.text.empty()) delta["content"] = piece.text;
    if (!piece.reasoning.empty()) delta["reasoning_content"] = piece.reasoning;
    if (!piece.tool_calls.empty()) {
      delta["tool_calls"] = json::array();
      for (const auto& d : piece.tool_calls) delta["tool_calls"].push_back(tool_call_delta_json(d));
    }
    choice["delta"] = std::move(delta);
  } else {
    choice["text"] = piece.text;
  }
  choice["logprobs"] = logprobs_json(meta, piece.tokens, piece.text_offset, tok);
  choice["finish_reason"] = finish_json(piece.finish, piece.called);
  json out = envelope(meta, true);
  out["choices"] = json::array({std::move(choice)});
  return out;
}

json usage_chunk(const ResponseMeta& meta, const Usage& usage) {
  json out = envelope(meta, true);
  out["choices"] = json::array();
  out["usage"] = usage_json(usage);
  return out;
}

json full_response(const ResponseMeta& meta, const std::vector<Choice>& choices, const Tokenizer& tok) {
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const Choice& c = choices[i];
    json choice = {{"index", i}};
    bool called = false;
    if (meta.api == Api::Chat) choice["message"] = chat_message(meta, c, called);
    else choice["text"] = c.text;
    choice["logprobs"] = logprobs_json(meta, c.tokens, 0, tok);
    choice["finish_reason"] = finish_json(c.finish, called);
    list.push_back(std::move(choice));
  }
  json out = envelope(meta, false);
  out["choices"] = std::move(list);
  out["usage"] = usage_json(total_usage(choices));
  return out;
}

}  // namespace parley::serve
