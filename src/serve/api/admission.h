#pragma once
// Admission control for a generation about to start (docs/operations.md):
// memory shedding and the waiting queue (503 + Retry-After), prompt length
// (400), the max_tokens cap, the request's `timeout` → Request::deadline,
// and the client's tokens-per-minute reservation (429); then the generation
// starts (start_generation: every route and the WebSocket start theirs here).
#include <memory>
#include <string>
#include <vector>

#include "serve/api/api_context.h"

namespace parley::serve {

// Checks and adjusts `requests` for `exchange`; throws ApiError when refused.
// The reservation is to be settled with the tokens used when they finish.
TokenReservation admit(Exchange& exchange, ApiContext& ctx, std::vector<Request>& requests);

// The `timeout` field of a JSON body (seconds > 0), capped by `cap` (0: no
// cap); `cap` also when absent; 0 when neither. Throws 400 for a bad value.
double request_timeout_s(const std::string& body, double cap);

// Runs `requests` for an HTTP exchange: events reach `on_event` on the
// exchange's strand, and a client that goes away cancels them.
std::shared_ptr<Generation> start_generation(const ExchangePtr& exchange, ApiContext& ctx,
                                             std::vector<Request> requests, Generation::OnEvent on_event);
// The same for any connection: admission (limits, queue, token reservation:
// throws ApiError when refused) against `admission`, events posted with `post`.
std::shared_ptr<Generation> start_generation(Exchange& admission, ApiContext& ctx, std::vector<Request> requests,
                                             Generation::Post post, Generation::OnEvent on_event);

}  // namespace parley::serve
