#include <gtest/gtest.h>

#include "loadtest/url.h"
#include "util/error.h"

using parley::loadtest::Url;

TEST(Url, Parts) {
  const Url a = Url::parse("http://127.0.0.1:8080");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, "8080");
  EXPECT_EQ(a.path("/v1/models"), "/v1/models");
  const Url b = Url::parse("http://example.com/api/v1/");
  EXPECT_EQ(b.host, "example.com");
  EXPECT_EQ(b.port, "80");
  EXPECT_EQ(b.path("/v1/models"), "/api/v1/models");
  const Url c = Url::parse("http://[::1]:9000/v1");
  EXPECT_EQ(c.host, "::1");
  EXPECT_EQ(c.port, "9000");
  EXPECT_EQ(c.base, "");
  EXPECT_THROW(Url::parse("https://x"), parley::Error);
  EXPECT_THROW(Url::parse("http://:80"), parley::Error);
}
