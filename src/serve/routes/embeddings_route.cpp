// POST /v1/embeddings: OpenAI's embeddings from the served model. Each input
// is one engine request (Request::pooling), all in the same batch: its final
// hidden states pooled (ApiContext::pooling), then scaled to unit length.
#include <bit>
#include <cmath>

#include "serve/api/admission.h"
#include "serve/transport/api_error.h"
#include "serve/api/openai_format.h"
#include "serve/api/prompt_input.h"
#include "serve/api/request_fields.h"
#include "serve/routes/routes.h"
#include "util/base64.h"

namespace parley::serve {
namespace {

constexpr size_t kMaxInputs = 2048;  // as OpenAI's

std::vector<std::vector<int32_t>> embedding_inputs(const json& body, const ApiContext& ctx) {
  const std::vector<PromptInput> inputs = parse_prompts(body, ctx.limits.vocab_size, "input");
  if (inputs.size() > kMaxInputs)
    throw invalid_request("'input' holds " + std::to_string(inputs.size()) + " inputs; at most " +
                              std::to_string(kMaxInputs) + " are taken",
                          "input", "out_of_range");
  std::vector<std::vector<int32_t>> out;
  for (const PromptInput& in : inputs) {
    if (!in.is_tokens && in.text.empty()) throw invalid_request("'input' holds an empty string", "input", "invalid_value");
    out.push_back(prompt_tokens(ctx.model.tokenizer(), in));
    if (int64_t(out.back().size()) > ctx.limits.context_length)
      throw invalid_request("An input has " + std::to_string(out.back().size()) + " tokens; this model's context is " +
                                std::to_string(ctx.limits.context_length) + " tokens",
                            "input", "context_length_exceeded");
  }
  return out;
}

// "float" (the default) or "base64": the little-endian float32 bytes, as OpenAI sends them.
bool wants_base64(const json& body) {
  const auto format = get_string(body, "encoding_format").value_or("float");
  if (format != "float" && format != "base64")
    throw invalid_request("'encoding_format' must be float or base64; got '" + format + "'", "encoding_format");
  return format == "base64";
}

void check_dimensions(const json& body, int32_t dim) {
  const auto d = get_integer(body, "dimensions", 1, INT32_MAX);
  if (d && *d != dim)
    throw invalid_request("'dimensions': this model's embeddings have " + std::to_string(dim) +
                              " dimensions and cannot be shortened",
                          "dimensions", "unsupported_parameter");
}

json embedding_json(std::vector<float> v, bool base64) {
  double norm = 0;
  for (float x : v) norm += double(x) * x;
  const float scale = norm > 0 ? float(1 / std::sqrt(norm)) : 0.0f;
  for (float& x : v) x *= scale;
  if (!base64) return v;
  static_assert(std::endian::native == std::endian::little, "base64 embeddings are little-endian float32");
  return base64_encode(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float));
}

// Collects every input's embedding, then responds once.
struct EmbeddingCollector {
  ExchangePtr exchange;
  std::string model_id;
  bool base64 = false;
  std::vector<Event> finals;
  size_t finished = 0;

  void on_event(size_t i, const Event& e) {
    if (!e.final) return;
    finals[i] = e;
    if (++finished < finals.size()) return;
    json data = json::array();
    int64_t tokens = 0;
    for (size_t k = 0; k < finals.size(); ++k) {
      const Event& f = finals[k];
      if (f.finish != FinishReason::Stop)
        return exchange->respond(error_response(
            f.finish == FinishReason::Error ? invalid_request("Input " + std::to_string(k) + " refused: " + f.error, "input")
                                            : server_error("Input " + std::to_string(k) + " ended " +
                                                           finish_reason_name(f.finish))));
      data.push_back({{"object", "embedding"}, {"index", k}, {"embedding", embedding_json(f.embedding, base64)}});
      tokens += f.prompt_tokens;
    }
    exchange->respond(json_response(200, {{"object", "list"},
                                          {"data", std::move(data)},
                                          {"model", model_id},
                                          {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}}));
  }
};

void embeddings(const ExchangePtr& ex, ApiContext& ctx) {
  const json body = parse_json_body(ex->request());
  check_fields(body, RouteFields::Embeddings);
  check_model(body, ctx);
  check_dimensions(body, ctx.model.config().dim);
  const bool base64 = wants_base64(body);
  const int32_t priority = parse_priority(body, request_limits(ctx, *ex));
  ex->set_end_user(get_string(body, "user").value_or(""));
  std::vector<Request> requests;
  for (auto& tokens : embedding_inputs(body, ctx)) {
    Request r;
    r.prompt = std::move(tokens);
    r.pooling = ctx.pooling;
    r.priority = -priority;  // the engine runs higher first
    requests.push_back(std::move(r));
  }
  require_ready(ctx);
  auto collector = std::make_shared<EmbeddingCollector>(
      EmbeddingCollector{ex, ctx.model_id, base64, std::vector<Event>(requests.size())});
  start_generation(ex, ctx, std::move(requests), [collector](size_t i, const Event& e) { collector->on_event(i, e); });
}

}  // namespace

void add_embeddings_route(Router& router, ApiContext& ctx) {
  router.add("POST", "/v1/embeddings", Access::Key, [&ctx](const ExchangePtr& ex, const PathParams&) { embeddings(ex, ctx); });
}

}  // namespace parley::serve
