// POST /chat: the seed system's batch endpoint. {"prompts": [...]} with 1 to
// 8 user messages, run together in the engine's batch and answered in input
// order as {"results": [...]}.
#include "serve/api/admission.h"
#include "serve/transport/api_error.h"
#include "serve/api/model_choice.h"
#include "serve/api/openai_format.h"
#include "serve/api/prompt_input.h"
#include "serve/api/request_builder.h"
#include "serve/api/request_fields.h"
#include "serve/routes/routes.h"

namespace parley::serve {
namespace {

constexpr size_t kMaxPrompts = 8;

std::vector<std::vector<int32_t>> batch_prompts(const json& body, const Tokenizer& tok) {
  const json* f = get_field(body, "prompts");
  if (!f) throw invalid_request("'prompts' is required", "prompts", "missing_required_parameter");
  if (!f->is_array() || f->empty() || f->size() > kMaxPrompts)
    throw invalid_request("'prompts' must be an array of 1 to " + std::to_string(kMaxPrompts) + " strings", "prompts",
                          f->is_array() ? "out_of_range" : "invalid_type");
  std::vector<std::vector<int32_t>> out;
  for (const json& p : *f) {
    if (!p.is_string()) throw invalid_request("'prompts' entries must be strings", "prompts", "invalid_type");
    out.push_back(chat_tokens(tok, {{"user", p.get<std::string>()}}));
  }
  return out;
}

// Collects every prompt's answer, then responds once.
struct BatchCollector {
  ExchangePtr exchange;
  std::vector<Choice> choices;
  size_t finished = 0;

  void on_event(size_t i, const Event& e) {
    choices[i].add(e, false);
    if (!e.final || ++finished < choices.size()) return;
    json results = json::array();
    for (const Choice& c : choices) {
      if (c.finish == FinishReason::Error)
        return exchange->respond(error_response(invalid_request("Prompt refused: " + c.error, "prompts")));
      results.push_back(c.text);
    }
    exchange->respond(json_response(200, {{"results", std::move(results)}, {"usage", usage_json(total_usage(choices))}}));
  }
};

void batch_chat(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_fields(body, RouteFields::Batch);
  ParamLimits limits = request_limits(ctx, *ex);
  limits.max_n = 1;
  GenerationParams params = parse_generation_params(body, limits, LogprobsStyle::Chat);
  select_model(body, ctx, params);
  params.output = parse_output_format(body, ex->request().body, ctx.grammars);
  if (params.stream) throw invalid_request("'stream' is not supported by /chat", "stream");
  ex->set_end_user(params.user);
  EngineRequests requests = build_requests(params, batch_prompts(body, ctx.model.tokenizer()), ctx.limits.context_length);
  require_ready(ctx);
  auto collector = std::make_shared<BatchCollector>(BatchCollector{ex, std::vector<Choice>(requests.requests.size())});
  for (size_t i = 0; i < collector->choices.size(); ++i) collector->choices[i].prompt_index = i;
  start_generation(ex, ctx, std::move(requests.requests),
                   [collector](size_t i, const Event& e) { collector->on_event(i, e); });
}

}  // namespace

void add_batch_route(Router& router, ApiContext& ctx) {
  router.add("POST", "/chat", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { batch_chat(ex, ctx); });
}

}  // namespace parley::serve
