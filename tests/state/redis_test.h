#pragma once
// GoogleTest fixture: a fresh redis-server per test, or a skip with a
// message when redis-server is not installed.
#include <gtest/gtest.h>

#include <memory>

#include "redis_server.h"
#include "state/redis_client.h"

namespace parley::test {

class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RedisServer::available()) GTEST_SKIP() << RedisServer::kBinary << " is not installed: Redis tests skipped";
    server_ = std::make_unique<RedisServer>("", persistence_);
  }

  std::shared_ptr<state::RedisPool> pool(int connections = 4) const {
    return std::make_shared<state::RedisPool>(state::parse_redis_url(server_->url()), connections);
  }

  RedisServer::Persistence persistence_ = RedisServer::Persistence::None;  // set before SetUp
  std::unique_ptr<RedisServer> server_;
};

}  // namespace parley::test
