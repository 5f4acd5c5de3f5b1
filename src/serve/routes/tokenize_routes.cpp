// POST /tokenize, /detokenize and /apply-template, in llama-server's shapes ("content",
// "add_special", "parse_special", "with_pieces" → {"tokens"}) and vLLM's
// ("prompt" or "messages" → {"count", "max_model_len", "tokens"}).
#include "serve/transport/api_error.h"
#include "serve/api/prompt_input.h"
#include "serve/api/request_fields.h"
#include "serve/routes/routes.h"
#include "tokenizer/unicode.h"
#include "util/error.h"

namespace parley::serve {
namespace {

// A piece as text when it is whole UTF-8, else its bytes (as llama-server).
json piece_json(const std::string& piece) {
  if (unicode::is_valid_utf8(piece)) return piece;
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(int(c));
  return bytes;
}

json llama_tokenize(const json& body, const ApiContext& ctx) {
  check_fields(body, RouteFields::TokenizeContent);
  const auto content = get_string(body, "content");
  if (!content) throw invalid_request("'content' must be a string", "content", "invalid_type");
  const Tokenizer& tok = ctx.model.tokenizer();
  const auto ids = tok.encode(*content, get_bool(body, "add_special").value_or(false),
                              get_bool(body, "parse_special").value_or(true));
  if (!get_bool(body, "with_pieces").value_or(false)) return {{"tokens", ids}};
  json tokens = json::array();
  for (int32_t id : ids) tokens.push_back({{"id", id}, {"piece", piece_json(tok.token_to_piece(id, true))}});
  return {{"tokens", std::move(tokens)}};
}

json vllm_tokenize(const json& body, const ApiContext& ctx) {
  const Tokenizer& tok = ctx.model.tokenizer();
  std::vector<int32_t> ids;
  if (get_field(body, "messages")) {  // the prompt the server would run for this chat
    check_fields(body, RouteFields::TokenizeMessages);
    if (!get_bool(body, "add_generation_prompt").value_or(true))
      throw invalid_request("'add_generation_prompt': only true (the prompt a chat request runs)", "add_generation_prompt",
                            "unsupported_parameter");
    ids = chat_tokens(tok, parse_messages(body));
  } else {
    check_fields(body, RouteFields::TokenizePrompt);
    const auto prompt = get_string(body, "prompt");
    if (!prompt) throw invalid_request("'prompt' must be a string", "prompt", "invalid_type");
    ids = tok.encode(*prompt, get_bool(body, "add_special_tokens").value_or(true), false);
  }
  json out = {{"count", ids.size()}, {"max_model_len", ctx.limits.context_length}, {"tokens", ids}};
  if (get_bool(body, "return_token_strs").value_or(false)) {
    out["token_strs"] = json::array();
    for (int32_t id : ids) out["token_strs"].push_back(piece_json(tok.token_to_piece(id, true)));
  }
  return out;
}

void tokenize(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_model(body, ctx);
  ex->respond(json_response(200, get_field(body, "content") ? llama_tokenize(body, ctx) : vllm_tokenize(body, ctx)));
}

// The text of `tokens`, as "content" (llama-server) and "prompt" (vLLM).
void detokenize(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_model(body, ctx);
  check_fields(body, RouteFields::Detokenize);
  const json* tokens = get_field(body, "tokens");
  if (!tokens || !tokens->is_array()) throw invalid_request("'tokens' must be an array of token ids", "tokens", "invalid_type");
  std::vector<int32_t> ids;
  for (const json& t : *tokens) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= ctx.limits.vocab_size)
      throw invalid_request("'tokens' must hold token ids in [0, " + std::to_string(ctx.limits.vocab_size) + ")",
                            "tokens", "out_of_range");
    ids.push_back(t.get<int32_t>());
  }
  const std::string text = ctx.model.tokenizer().decode(ids);
  ex->respond(json_response(200, {{"content", text}, {"prompt", text}}));
}

// The prompt text a chat request with these messages runs (the server's
// rendering: docs/chat-templates.md), without tokenizing it.
void apply_template(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_model(body, ctx);
  check_fields(body, RouteFields::ApplyTemplate);
  const auto messages = parse_messages(body);
  try {
    const bool generation = get_bool(body, "add_generation_prompt").value_or(true);
    ex->respond(json_response(200, {{"prompt", chat::render_chat(ctx.model.tokenizer().vocab(), messages, generation)}}));
  } catch (const Error& e) {
    throw invalid_request(std::string("The model's chat template refused the messages: ") + e.what(), "messages",
                          "chat_template_error");
  }
}

}  // namespace

void add_tokenize_routes(Router& router, ApiContext& ctx) {
  router.add("POST", "/apply-template", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { apply_template(ex, ctx); });
  router.add("POST", "/tokenize", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { tokenize(ex, ctx); });
  router.add("POST", "/detokenize", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { detokenize(ex, ctx); });
}

}  // namespace parley::serve
