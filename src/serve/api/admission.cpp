#include "serve/api/admission.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

ApiError unavailable(Exchange& ex, const std::string& message, const std::string& code) {
  ex.set_header("Retry-After", "1");
  return ApiError(503, message, "server_error", "", code);
}

void check_capacity(Exchange& ex, ApiContext& ctx, const std::vector<Request>& requests) {
  if (ctx.shedding) {
    ++ctx.metrics.shed;
    throw unavailable(ex, "The server is low on memory; retry shortly", "overloaded");
  }
  const OpsSettings& o = ctx.ops;
  // The engine counts a request as waiting only after its thread took it in;
  // the registry counts it from submission (until its first token).
  const uint64_t waiting = std::max<uint64_t>(ctx.engine.stats().waiting, ctx.generations.queued_requests());
  if (o.max_queue > 0 && waiting + requests.size() > uint64_t(o.max_queue)) {
    ++ctx.metrics.shed;
    throw unavailable(ex, "Too many requests are waiting; retry shortly", "queue_full");
  }
  uint64_t tokens = 0;
  for (const Request& r : requests) tokens += r.prompt.size();
  if (o.max_queue_tokens > 0 && ctx.generations.queued_tokens() + tokens > o.max_queue_tokens) {
    ++ctx.metrics.shed;
    throw unavailable(ex, "Too many prompt tokens are waiting; retry shortly", "queue_full");
  }
}

}  // namespace

double request_timeout_s(const std::string& body, double cap) {
  const json j = json::parse(body, nullptr, false);
  const json* t = j.is_object() && j.contains("timeout") ? &j["timeout"] : nullptr;
  if (!t || t->is_null()) return cap;
  if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > 1e9)
    throw invalid_request("'timeout' must be a positive number of seconds", "timeout", "invalid_value");
  return cap > 0 ? std::min(cap, t->get<double>()) : t->get<double>();
}

TokenReservation admit(Exchange& ex, ApiContext& ctx, std::vector<Request>& requests) {
  const OpsSettings& o = ctx.ops;
  for (Request& r : requests) {
    if (o.max_prompt_tokens > 0 && int64_t(r.prompt.size()) > o.max_prompt_tokens) {
      ++ctx.metrics.rejected_input;
      throw invalid_request("The prompt has " + std::to_string(r.prompt.size()) + " tokens; at most " +
                                std::to_string(o.max_prompt_tokens) + " are accepted",
                            "messages", "prompt_too_long");
    }
    if (o.max_tokens_limit > 0) r.max_tokens = std::min(r.max_tokens, o.max_tokens_limit);
  }
  const double timeout = request_timeout_s(ex.request().body, o.max_request_timeout_s);
  if (timeout > 0) {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout));
    for (Request& r : requests) r.deadline = deadline;
  }
  check_capacity(ex, ctx, requests);
  if (!ctx.rate_limiter) return {};
  double tokens = 0;
  for (const Request& r : requests) tokens += double(r.prompt.size()) + r.max_tokens;
  try {
    return ctx.rate_limiter->reserve_tokens(ex, tokens);
  } catch (const ApiError&) {
    ++ctx.metrics.rate_limited;
    throw;
  }
}

std::shared_ptr<Generation> start_generation(Exchange& admission, ApiContext& ctx, std::vector<Request> requests,
                                             Generation::Post post, Generation::OnEvent on_event) {
  const TokenReservation reservation = admit(admission, ctx, requests);
  // While degraded, new requests go to the fallback model (same vocabulary);
  // those with a LoRA adapter stay on the base model the adapter was made for.
  const bool adapted = !requests.empty() && requests.front().lora;
  const bool degraded = ctx.state.degraded && ctx.fallback_engine && !adapted;
  if (degraded) {
    admission.set_header("X-Parley-Degraded", "1");
    ++ctx.metrics.degraded_requests;
  }
  // The last final event gives back the tokens reserved and not used: on the
  // connection's strand, since the buckets may be in Redis and the engine thread must not wait.
  auto settle = [&ctx, post, reservation, left = std::make_shared<std::atomic<size_t>>(requests.size()),
                 used = std::make_shared<std::atomic<int64_t>>(0)](const Event& e) {
    *used += e.prompt_tokens + e.completion_tokens;
    if (--*left > 0 || !ctx.rate_limiter || reservation.tpm <= 0) return;
    // The limiter, not the context: a multi-model server may unload the model before this runs.
    post([limiter = ctx.rate_limiter, reservation, total = double(used->load())] { limiter->settle(reservation, total); });
  };
  return Generation::start(degraded ? *ctx.fallback_engine : ctx.engine, ctx.generations, std::move(requests),
                           std::move(post), std::move(on_event), std::move(settle), admission.request_id(),
                           admission.end_user());
}

std::shared_ptr<Generation> start_generation(const ExchangePtr& exchange, ApiContext& ctx,
                                             std::vector<Request> requests, Generation::OnEvent on_event) {
  auto generation = start_generation(
      *exchange, ctx, std::move(requests), [exchange](std::function<void()> f) { exchange->post(std::move(f)); },
      std::move(on_event));
  exchange->on_disconnect([weak = std::weak_ptr(generation)] {
    if (auto g = weak.lock()) g->cancel();
  });
  return generation;
}

}  // namespace parley::serve
