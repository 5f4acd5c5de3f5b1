#include "serve/protection/rate_limit.h"

#include <algorithm>
#include <cmath>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

std::string whole(double v) { return std::to_string(int64_t(std::ceil(std::max(0.0, v)))); }

void set_limit_headers(Exchange& ex, const std::string& suffix, double limit, const state::BucketResult& r) {
  ex.set_header("X-RateLimit-Limit" + suffix, whole(limit));
  ex.set_header("X-RateLimit-Remaining" + suffix, std::to_string(int64_t(std::floor(std::max(0.0, r.remaining)))));
  ex.set_header("X-RateLimit-Reset" + suffix, whole(r.reset_s));
}

ApiError too_many(Exchange& ex, const state::BucketResult& r, const std::string& what) {
  ex.set_header("Retry-After", whole(std::max(1.0, r.retry_after_s)));
  return ApiError(429, "Rate limit reached for " + what + "; retry in " + whole(std::max(1.0, r.retry_after_s)) + " s",
                  "rate_limit_error", "", "rate_limit_exceeded");
}

}  // namespace

RateLimiter::RateLimiter(std::unique_ptr<state::RateBuckets> buckets, RateLimits defaults, const KeyStore& keys)
    : buckets_(std::move(buckets)), defaults_(defaults), keys_(keys) {}

std::string RateLimiter::client(const Exchange& ex) const {
  return ex.api_key_name().empty() ? "ip:" + client_address(ex.request(), proxies_) : "key:" + ex.api_key_name();
}

RateLimits RateLimiter::limits_for(const std::string& key_name) const {
  RateLimits l = defaults_;
  if (const ApiKey* k = key_name.empty() ? nullptr : keys_.by_name(key_name)) {
    if (k->rps > 0) l = {k->rps, 0, l.tpm};  // its burst follows its own rate
    if (k->tpm > 0) l.tpm = k->tpm;
  }
  if (l.burst <= 0) l.burst = std::max(1.0, l.rps);
  return l;
}

void RateLimiter::admit_request(Exchange& ex) {
  const RateLimits l = limits_for(ex.api_key_name());
  if (l.rps <= 0) return;
  const state::BucketResult r = buckets_->take("rps:" + client(ex), 1, l.rps, l.burst);
  set_limit_headers(ex, "", l.burst, r);
  if (!r.allowed) throw too_many(ex, r, "requests (" + whole(l.rps) + " per second)");
}

TokenReservation RateLimiter::reserve_tokens(Exchange& ex, double tokens) {
  const RateLimits l = limits_for(ex.api_key_name());
  if (l.tpm <= 0) return {};
  TokenReservation res{"tpm:" + client(ex), std::min(tokens, l.tpm), l.tpm};
  const state::BucketResult r = buckets_->take(res.client, res.tokens, l.tpm / 60, l.tpm);
  set_limit_headers(ex, "-Tokens", l.tpm, r);
  if (!r.allowed) throw too_many(ex, r, "tokens (" + whole(l.tpm) + " per minute)");
  return res;
}

void RateLimiter::settle(const TokenReservation& r, double used) {
  if (r.tpm <= 0 || used >= r.tokens) return;
  buckets_->give_back(r.client, r.tokens - used, r.tpm / 60, r.tpm);
}

}  // namespace parley::serve
