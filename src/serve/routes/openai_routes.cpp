// POST /v1/chat/completions, POST /v1/completions, GET /v1/models[/{id}].
#include "serve/transport/api_error.h"
#include "serve/routes/openai_responder.h"
#include "serve/api/model_choice.h"
#include "serve/api/prompt_input.h"
#include "serve/api/request_fields.h"
#include "serve/api/tool_request.h"
#include "serve/routes/routes.h"
#include "serve/sessions/session_chat.h"

namespace parley::serve {
namespace {

void chat_completions(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_fields(body, RouteFields::Chat);
  GenerationParams params = parse_generation_params(body, request_limits(ctx, *ex), LogprobsStyle::Chat);
  select_model(body, ctx, params);
  const std::string& raw = ex->request().body;
  params.output = parse_output_format(body, raw, ctx.grammars);
  const ToolSetup tools = parse_tools(body, raw);
  const Tokenizer& tok = ctx.model.tokenizer();
  const chat::ToolCallFormat format = chat::detect_tool_call_format(tok.vocab().chat_template);
  if (tools.calls() && params.output.grammar)
    throw invalid_request("'response_format' and 'grammar' cannot be combined with tool calls", "response_format",
                          "unsupported_parameter");
  if (OutputGrammar calls = tool_grammar(tools, format, ctx.grammars); calls.grammar) params.output = std::move(calls);
  require_ready(ctx);
  AnswerPlan plan;
  const auto tokens = chat_prompt(ctx, body, params, request_api_key(*ex), plan, tools.tools);
  EngineRequests requests = build_requests(params, {tokens}, ctx.limits.context_length);
  plan_answer(ctx, body, params, requests, true, request_api_key(*ex), plan);
  ResponseMeta meta = make_meta(Api::Chat, answer_model(params, ctx), ctx.fingerprint, params.top_logprobs >= 0);
  meta.parsing = output_parsing(tok, tokens, tools, format);
  OpenAiResponder::start(ex, ctx, std::move(meta), params, std::move(requests), {}, std::move(plan));
}

void completions(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_fields(body, RouteFields::Completions);
  if (const auto suffix = get_string(body, "suffix"); suffix && !suffix->empty())
    throw invalid_request("'suffix' (insertion) is not supported", "suffix", "unsupported_parameter");
  if (const auto best_of = get_integer(body, "best_of", 1, ctx.limits.max_n); best_of && *best_of != 1)
    throw invalid_request("'best_of' other than 1 is not supported", "best_of", "unsupported_parameter");
  GenerationParams params = parse_generation_params(body, request_limits(ctx, *ex), LogprobsStyle::Completions);
  select_model(body, ctx, params);
  params.output = parse_output_format(body, ex->request().body, ctx.grammars);
  const bool echo = get_bool(body, "echo").value_or(false);
  const Tokenizer& tok = ctx.model.tokenizer();
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> echoes;
  for (const PromptInput& p : parse_prompts(body, ctx.limits.vocab_size)) {
    prompts.push_back(prompt_tokens(tok, p));
    if (echo) echoes.push_back(p.is_tokens ? tok.decode(p.tokens) : p.text);
  }
  EngineRequests requests = build_requests(params, prompts, ctx.limits.context_length);
  require_ready(ctx);
  AnswerPlan plan;
  plan_answer(ctx, body, params, requests, false, request_api_key(*ex), plan);
  OpenAiResponder::start(ex, ctx,
                         make_meta(Api::Completions, answer_model(params, ctx), ctx.fingerprint, params.top_logprobs >= 0),
                         params, std::move(requests), std::move(echoes), std::move(plan));
}

}  // namespace

void add_openai_routes(Router& router, ApiContext& ctx) {
  router.add("POST", "/v1/chat/completions", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { chat_completions(ex, ctx); });
  router.add("POST", "/v1/completions", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { completions(ex, ctx); });
  router.add("GET", "/v1/models", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) {
    ex->respond(json_response(200, {{"object", "list"}, {"data", model_entries(ctx)}}));
  });
  router.add("GET", "/v1/models/{id}", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams& params) {
    for (json& entry : model_entries(ctx))
      if (entry["id"] == params.at("id")) return ex->respond(json_response(200, std::move(entry)));
    throw not_found("The model '" + params.at("id") + "' does not exist", "model_not_found");
  });
}

}  // namespace parley::serve
