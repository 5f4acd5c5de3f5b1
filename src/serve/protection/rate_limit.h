#pragma once
// Rate limits (docs/operations.md): per client (the API key's name, else the
// client's address) a requests-per-second bucket, checked before a route
// runs, and a tokens-per-minute bucket from which a generation reserves
// prompt + max_tokens when it starts and gets back what it did not use.
// Refusals are 429 with Retry-After; every limited response carries
// X-RateLimit-Limit/Remaining/Reset (and the -Tokens variants).
#include <memory>
#include <string>
#include <utility>

#include "serve/protection/auth.h"
#include "serve/protection/client_address.h"
#include "serve/transport/exchange.h"
#include "state/rate_buckets.h"

namespace parley::serve {

struct RateLimits {
  double rps = 0;    // requests per second; 0: unlimited
  double burst = 0;  // requests at once; 0: max(1, rps)
  double tpm = 0;    // tokens per minute; 0: unlimited
};

// A token reservation to settle when the generation ends.
struct TokenReservation {
  std::string client;
  double tokens = 0;
  double tpm = 0;
};

class RateLimiter {
 public:
  RateLimiter(std::unique_ptr<state::RateBuckets> buckets, RateLimits defaults, const KeyStore& keys);

  // Takes one request; sets the headers; throws ApiError 429 when the bucket is empty.
  void admit_request(Exchange& ex);
  // Reserves `tokens` (capped at the bucket's size); throws 429 when they are not there.
  TokenReservation reserve_tokens(Exchange& ex, double tokens);
  // Returns what the generation did not use of its reservation.
  void settle(const TokenReservation& r, double used);

  RateLimits limits_for(const std::string& key_name) const;
  // Whose X-Forwarded-For names the client (per-address buckets behind a proxy).
  void set_trusted_proxies(TrustedProxies proxies) { proxies_ = std::move(proxies); }

 private:
  std::unique_ptr<state::RateBuckets> buckets_;
  RateLimits defaults_;
  const KeyStore& keys_;
  TrustedProxies proxies_;
  // Whose bucket: "key:" + the key's name, else "ip:" + the client's address.
  std::string client(const Exchange& ex) const;
};

}  // namespace parley::serve
