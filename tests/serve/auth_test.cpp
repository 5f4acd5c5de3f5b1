#include "serve/protection/auth.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "util/error.h"

namespace parley::serve {
namespace {

HttpRequest request(std::string method, std::string target, Headers headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.headers = std::move(headers);
  return r;
}

TEST(Auth, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("abc", "abcabc"));  // the repetition the loop wraps over
  EXPECT_FALSE(constant_time_equal("", "x"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(Auth, FindsKeysByTheirSecret) {
  KeyStore keys(KeyStore::from_flags({"s3cret", "other"}));
  ASSERT_TRUE(keys.api_keys_required());
  ASSERT_NE(keys.find("other"), nullptr);
  EXPECT_EQ(keys.find("other")->name, "key2");
  EXPECT_EQ(keys.find("s3cre"), nullptr);
  EXPECT_EQ(keys.find(""), nullptr);
  EXPECT_FALSE(KeyStore().api_keys_required());
  EXPECT_THROW(KeyStore(std::vector<ApiKey>{{"a", "k"}, {"b", "k"}}), Error);  // one key twice
  EXPECT_THROW(KeyStore(std::vector<ApiKey>{{"a", "k"}, {"a", "j"}}), Error);  // one name twice
  EXPECT_THROW(KeyStore(std::vector<ApiKey>{{"a", ""}}), Error);
}

TEST(Auth, ReadsAKeysFile) {
  const std::string path = testing::TempDir() + "/parley_keys.json";
  std::ofstream(path) << R"([{"name": "team-a", "key": "ka", "rps": 5, "tpm": 1000}, {"name": "b", "key": "kb"}])";
  const auto keys = KeyStore::from_file(path);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].name, "team-a");
  EXPECT_EQ(keys[0].rps, 5);
  EXPECT_EQ(keys[0].tpm, 1000);
  EXPECT_EQ(keys[1].rps, 0);
  std::ofstream(path) << R"({"name": "x"})";
  EXPECT_THROW(KeyStore::from_file(path), Error);
  std::remove(path.c_str());
}

TEST(Auth, AdminKeysAreMarkedAndAloneLeaveTheApiOpen) {
  KeyStore admin_only(KeyStore::from_flags({"root"}, true));
  EXPECT_TRUE(admin_only.has_admin());
  EXPECT_FALSE(admin_only.api_keys_required());
  ASSERT_NE(admin_only.find("root"), nullptr);
  EXPECT_EQ(admin_only.find("root")->name, "admin1");
  EXPECT_TRUE(admin_only.find("root")->admin);
  KeyStore plain(KeyStore::from_flags({"k"}));
  EXPECT_TRUE(plain.api_keys_required());
  EXPECT_FALSE(plain.has_admin());
  EXPECT_FALSE(KeyStore().api_keys_required());
}

TEST(Auth, KeysFileMarksAdmins) {
  const std::string path = testing::TempDir() + "/parley_admin_keys.json";
  std::ofstream(path) << R"([{"name": "ops", "key": "ko", "admin": true}, {"name": "app", "key": "ka"}])";
  const auto keys = KeyStore::from_file(path);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_TRUE(keys[0].admin);
  EXPECT_FALSE(keys[1].admin);
  std::ofstream(path) << R"([{"name": "ops", "key": "ko", "admin": "yes"}])";
  EXPECT_THROW(KeyStore::from_file(path), Error);
  std::remove(path.c_str());
}

TEST(Auth, KeysFileGivesPriorities) {
  const std::string path = testing::TempDir() + "/parley_priority_keys.json";
  std::ofstream(path) << R"([{"name": "premium", "key": "kp", "priority": -10}, {"name": "free", "key": "kf"}])";
  const auto keys = KeyStore::from_file(path);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].priority, -10);
  EXPECT_EQ(keys[1].priority, 0);
  for (const char* bad : {R"([{"name": "a", "key": "k", "priority": 0.5}])", R"([{"name": "a", "key": "k", "priority": 9999999}])"}) {
    std::ofstream(path) << bad;
    EXPECT_THROW(KeyStore::from_file(path), Error) << bad;
  }
  std::remove(path.c_str());
}

TEST(Auth, PresentedKeyFromBearerOrWebSocketQuery) {
  EXPECT_EQ(presented_key(request("GET", "/v1/models", {{"authorization", "Bearer  abc "}}), false), "abc");
  EXPECT_EQ(presented_key(request("GET", "/v1/models", {{"authorization", "Basic abc"}}), false), "");
  EXPECT_EQ(presented_key(request("GET", "/v1/ws?x=1&api_key=q1"), true), "q1");
  EXPECT_EQ(presented_key(request("GET", "/v1/models?api_key=q1"), false), "");  // only for WebSocket upgrades
}

TEST(Auth, PresentedKeyFromAnthropicsHeader) {
  EXPECT_EQ(presented_key(request("POST", "/v1/messages", {{"x-api-key", " sk-1 "}}), false), "sk-1");
  // The bearer token wins when both are sent.
  EXPECT_EQ(presented_key(request("POST", "/v1/messages", {{"x-api-key", "sk-1"}, {"authorization", "Bearer b"}}), false),
            "b");
  EXPECT_EQ(presented_key(request("GET", "/v1/ws?api_key=q1", {{"x-api-key", "sk-1"}}), true), "sk-1");
}

}  // namespace
}  // namespace parley::serve
