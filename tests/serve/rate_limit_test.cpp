// RateLimiter over the real local buckets: limits per key, headers, 429s and
// the token reservation's settlement.
#include "serve/protection/rate_limit.h"

#include <gtest/gtest.h>

#include <thread>

#include "fake_exchange.h"
#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

std::string header(const Exchange& ex, const std::string& name) {
  for (const auto& [k, v] : ex.extra_headers())
    if (k == name) return v;
  return "";
}

std::shared_ptr<test::FakeExchange> from(const std::string& ip, const std::string& key = "") {
  auto ex = test::fake("GET", "/v1/models");
  const_cast<HttpRequest&>(ex->request()).remote_address = ip;
  ex->set_api_key_name(key);
  return ex;
}

int status_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e.status();
  }
  return 200;
}

TEST(RateLimiter, RequestBucketPerClientWithHeaders) {
  KeyStore keys;
  RateLimiter limiter(state::make_local_rate_buckets(), {1, 2, 0}, keys);
  auto a1 = from("10.0.0.1"), a2 = from("10.0.0.1"), a3 = from("10.0.0.1"), b = from("10.0.0.2");
  EXPECT_EQ(status_of([&] { limiter.admit_request(*a1); }), 200);
  EXPECT_EQ(header(*a1, "X-RateLimit-Limit"), "2");
  EXPECT_EQ(header(*a1, "X-RateLimit-Remaining"), "1");
  EXPECT_EQ(status_of([&] { limiter.admit_request(*a2); }), 200);
  EXPECT_EQ(status_of([&] { limiter.admit_request(*a3); }), 429);
  EXPECT_EQ(header(*a3, "Retry-After"), "1");
  EXPECT_EQ(header(*a3, "X-RateLimit-Remaining"), "0");
  EXPECT_EQ(status_of([&] { limiter.admit_request(*b); }), 200);  // another client, another bucket
}

TEST(RateLimiter, KeysCarryTheirOwnLimits) {
  KeyStore keys(std::vector<ApiKey>{{"fast", "kf", 100, 0}, {"plain", "kp"}});
  RateLimiter limiter(state::make_local_rate_buckets(), {1, 1, 600}, keys);
  EXPECT_EQ(limiter.limits_for("fast").rps, 100);
  EXPECT_EQ(limiter.limits_for("fast").burst, 100);
  EXPECT_EQ(limiter.limits_for("fast").tpm, 600);
  EXPECT_EQ(limiter.limits_for("plain").rps, 1);
  int ok = 0;
  for (int i = 0; i < 50; ++i) ok += status_of([&] { limiter.admit_request(*from("1.1.1.1", "fast")); }) == 200;
  EXPECT_EQ(ok, 50);
}

TEST(RateLimiter, TokenReservationsAreSettled) {
  KeyStore keys;
  RateLimiter limiter(state::make_local_rate_buckets(), {0, 0, 600}, keys);  // 10 tokens/s, 600 at once
  auto ex = from("10.0.0.9");
  TokenReservation r;
  EXPECT_EQ(status_of([&] { r = limiter.reserve_tokens(*ex, 500); }), 200);
  EXPECT_EQ(header(*ex, "X-RateLimit-Limit-Tokens"), "600");
  EXPECT_EQ(status_of([&] { limiter.reserve_tokens(*from("10.0.0.9"), 500); }), 429);
  limiter.settle(r, 50);  // 450 unused come back
  EXPECT_EQ(status_of([&] { limiter.reserve_tokens(*from("10.0.0.9"), 500); }), 200);
  // A reservation larger than the bucket takes the whole bucket instead of never passing.
  auto big = from("10.0.0.10");
  EXPECT_EQ(status_of([&] { limiter.reserve_tokens(*big, 5000); }), 200);
}

}  // namespace
}  // namespace parley::serve
