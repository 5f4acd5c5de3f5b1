// --trusted-proxy: CIDR parsing and the client address taken from
// X-Forwarded-For only through trusted proxies (docs/security.md).
#include "serve/protection/client_address.h"

#include <gtest/gtest.h>

#include "fake_exchange.h"
#include "serve/transport/api_error.h"
#include "serve/transport/http_message.h"
#include "serve/protection/rate_limit.h"
#include "util/error.h"

namespace parley::serve {
namespace {

TrustedProxies proxies(std::initializer_list<const char*> cidrs) {
  TrustedProxies p;
  for (const char* c : cidrs) p.add(c);
  return p;
}

TEST(TrustedProxies, ParsesAddressesAndRanges) {
  const TrustedProxies p = proxies({"10.0.0.0/8", "192.168.1.7", "fd00::/8", "::1", "172.16.0.0/12"});
  EXPECT_TRUE(p.contains("10.255.0.1"));
  EXPECT_FALSE(p.contains("11.0.0.1"));
  EXPECT_TRUE(p.contains("192.168.1.7"));
  EXPECT_FALSE(p.contains("192.168.1.8"));
  EXPECT_TRUE(p.contains("172.31.255.255"));
  EXPECT_FALSE(p.contains("172.32.0.0"));
  EXPECT_TRUE(p.contains("fdab::1"));
  EXPECT_FALSE(p.contains("fe80::1"));
  EXPECT_TRUE(p.contains("0:0::1"));
  EXPECT_TRUE(p.contains("::ffff:10.1.2.3")) << "an IPv4-mapped peer of a dual-stack listener";
  EXPECT_FALSE(p.contains("not an address"));
  EXPECT_FALSE(p.contains(""));
  EXPECT_TRUE(proxies({"0.0.0.0/0"}).contains("8.8.8.8"));
  EXPECT_FALSE(proxies({"0.0.0.0/0"}).contains("2001:db8::1")) << "an IPv4 range holds no IPv6 address";
}

TEST(TrustedProxies, RefusesMalformedRanges) {
  TrustedProxies p;
  for (const char* bad : {"", "10.0.0.0/33", "10.0.0.0/", "10.0.0/8", "::1/129", "10.0.0.0/-1", "10.0.0.0/8x", "host"})
    EXPECT_THROW(p.add(bad), Error) << bad;
  EXPECT_TRUE(p.empty());
}

TEST(TrustedProxies, TakesTheRightMostUntrustedForwardedAddress) {
  const TrustedProxies p = proxies({"127.0.0.1", "10.0.0.0/8"});
  EXPECT_EQ(p.client_address("127.0.0.1", "203.0.113.9"), "203.0.113.9");
  // The client forged the left-most entry; the proxies appended the rest.
  EXPECT_EQ(p.client_address("127.0.0.1", "1.1.1.1, 203.0.113.9, 10.0.0.5"), "203.0.113.9");
  EXPECT_EQ(p.client_address("127.0.0.1", "10.0.0.9,10.0.0.5"), "10.0.0.9") << "all trusted: the furthest";
  EXPECT_EQ(p.client_address("127.0.0.1", " 2001:DB8:0::7 "), "2001:db8::7") << "one spelling per address";
  EXPECT_EQ(p.client_address("127.0.0.1", ""), "127.0.0.1");
  EXPECT_EQ(p.client_address("127.0.0.1", "garbage, 10.0.0.5"), "127.0.0.1") << "not an address: the peer";
}

TEST(TrustedProxies, IgnoresTheHeaderFromAnUntrustedPeer) {
  const TrustedProxies p = proxies({"10.0.0.0/8"});
  EXPECT_EQ(p.client_address("127.0.0.1", "203.0.113.9"), "127.0.0.1");
  EXPECT_EQ(TrustedProxies().client_address("127.0.0.1", "203.0.113.9"), "127.0.0.1");
}

TEST(TrustedProxies, ReadsEveryForwardedHeaderOfARequest) {
  HttpRequest r;
  r.remote_address = "127.0.0.1";
  r.headers = {{"x-forwarded-for", "1.1.1.1"}, {"host", "x"}, {"x-forwarded-for", "203.0.113.9"}};
  EXPECT_EQ(client_address(r, proxies({"127.0.0.0/8"})), "203.0.113.9");
  EXPECT_EQ(client_address(r, TrustedProxies()), "127.0.0.1");
}

// The rate limiter's per-address buckets follow the forwarded client.
TEST(TrustedProxies, SeparateRateBucketsPerForwardedClient) {
  KeyStore keys;
  RateLimiter limiter(state::make_local_rate_buckets(), {0.01, 1, 0}, keys);
  limiter.set_trusted_proxies(proxies({"127.0.0.1"}));
  const auto admitted = [&](const std::string& peer, const std::string& forwarded) {
    auto ex = test::fake("GET", "/v1/models");
    auto& r = const_cast<HttpRequest&>(ex->request());
    r.remote_address = peer;
    r.headers.emplace_back("x-forwarded-for", forwarded);
    try {
      limiter.admit_request(*ex);
      return true;
    } catch (const ApiError&) {
      return false;
    }
  };
  EXPECT_TRUE(admitted("127.0.0.1", "203.0.113.1"));
  EXPECT_FALSE(admitted("127.0.0.1", "203.0.113.1"));
  EXPECT_TRUE(admitted("127.0.0.1", "203.0.113.2"));
  EXPECT_FALSE(admitted("127.0.0.1", "9.9.9.9, 203.0.113.2")) << "a forged left-most entry changes nothing";
  EXPECT_TRUE(admitted("192.0.2.5", "203.0.113.1")) << "an untrusted peer is its own client";
  EXPECT_FALSE(admitted("192.0.2.5", "203.0.113.3")) << "whatever header it sends";
}

}  // namespace
}  // namespace parley::serve
