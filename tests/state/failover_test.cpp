// Redis killed and restarted under the failover wrappers: no exception
// reaches the caller, fallbacks are counted, state written during the outage
// is served locally and written back once Redis is up again.
#include <gtest/gtest.h>

#include <thread>

#include "redis_test.h"
#include "state/failover.h"
#include "state/rate_buckets.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;

class FailoverTest : public test::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped()) return;
    pool_ = std::make_shared<RedisPool>(parse_redis_url(server_->url()), 4, 300ms);
    stats_ = std::make_shared<FailoverStats>();
    sessions_ = make_failover_session_store(make_redis_session_store(pool_), make_local_session_store(""), stats_);
  }

  // Retries `op` (which must not throw) until Redis serves it again.
  template <class Op>
  void until_redis_is_back(Op op) {
    for (int i = 0; i < 100 && (stats_->degraded || !pool_->healthy()); ++i) {
      op();
      std::this_thread::sleep_for(50ms);
    }
    ASSERT_FALSE(stats_->degraded) << "Redis was not used again";
  }

  // What Redis itself holds, seen through a fresh pool (another replica).
  std::optional<Session> in_redis(const std::string& id) { return make_redis_session_store(pool())->get(id); }

  std::shared_ptr<RedisPool> pool_;
  std::shared_ptr<FailoverStats> stats_;
  std::unique_ptr<SessionStore> sessions_;
};

TEST_F(FailoverTest, SessionsGoOnThroughAnOutage) {
  Session s;
  s.id = new_session_id();
  s.user = "alice";
  s.max_turns = 10;
  sessions_->put(s);
  ASSERT_TRUE(sessions_->append_turn(s.id, {"before", "a", now_ms()}));
  ASSERT_TRUE(sessions_->get(s.id));
  ASSERT_TRUE(in_redis(s.id));
  EXPECT_EQ(stats_->fallbacks, 0u);
  EXPECT_FALSE(stats_->degraded);

  server_->stop();  // a crash: and without persistence, Redis comes back empty
  EXPECT_TRUE(sessions_->try_lock(s.id, "me", 5s));
  EXPECT_TRUE(sessions_->append_turn(s.id, {"during", "b", now_ms()}));
  sessions_->unlock(s.id, "me");
  Session created;
  created.id = new_session_id();
  created.user = "alice";
  sessions_->put(created);
  const auto during = sessions_->get(s.id);
  ASSERT_TRUE(during);
  ASSERT_EQ(during->turns.size(), 2u);
  EXPECT_EQ(during->turns[1].user, "during");
  EXPECT_EQ(sessions_->list("alice", "", "", 10).sessions.size(), 2u);
  EXPECT_TRUE(stats_->degraded);
  EXPECT_GE(stats_->fallbacks, 6u);

  server_->start();
  until_redis_is_back([&] { sessions_->get(s.id); });
  // Written back: another replica now sees both sessions, with every turn.
  const auto back = in_redis(s.id);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->turns.size(), 2u);
  EXPECT_EQ(back->turns[0].user, "before");
  EXPECT_EQ(back->turns[1].user, "during");
  EXPECT_TRUE(in_redis(created.id));
  ASSERT_TRUE(sessions_->append_turn(s.id, {"after", "c", now_ms()}));
  EXPECT_EQ(in_redis(s.id)->turns.size(), 3u);
  // The lock taken during the outage was released locally; Redis's lock works again.
  EXPECT_TRUE(sessions_->try_lock(s.id, "other", 5s));
  EXPECT_FALSE(make_redis_session_store(pool())->try_lock(s.id, "third", 5s));
}

TEST_F(FailoverTest, ResponseCacheAndRateLimitsFallBack) {
  auto cache = make_failover_response_cache(make_redis_response_cache(pool_), make_local_response_cache(1 << 20), stats_);
  auto buckets = make_failover_rate_buckets(pool_, stats_);
  cache->put("k", "cached answer", 60s);
  EXPECT_EQ(cache->get("k"), "cached answer");
  EXPECT_EQ(pool()->command({"GET", "parley:cache:k"}).str, "cached answer");
  EXPECT_TRUE(buckets->take("client", 1, 1, 2).allowed);

  server_->stop();
  EXPECT_FALSE(cache->get("k"));  // Redis's entries are out of reach; a miss, not an error
  cache->put("k2", "local answer", 60s);
  EXPECT_EQ(cache->get("k2"), "local answer");
  EXPECT_EQ(cache->stats().entries, 1u);
  EXPECT_TRUE(buckets->take("client", 1, 1, 2).allowed);  // a fresh local bucket
  EXPECT_TRUE(buckets->take("client", 1, 1, 2).allowed);
  EXPECT_FALSE(buckets->take("client", 1, 1, 2).allowed);
  buckets->give_back("client", 1, 1, 2);
  EXPECT_TRUE(stats_->degraded);
  EXPECT_GE(stats_->fallbacks, 7u);

  server_->start();
  until_redis_is_back([&] { cache->get("k"); });
  cache->put("k3", "shared again", 60s);
  EXPECT_EQ(pool()->command({"GET", "parley:cache:k3"}).str, "shared again");
  const uint64_t fallbacks = stats_->fallbacks;
  EXPECT_TRUE(buckets->take("client", 1, 1, 2).allowed);
  EXPECT_EQ(stats_->fallbacks, fallbacks);
  EXPECT_GE(cache->stats().hits, 2u);
  EXPECT_GE(cache->stats().misses, 1u);
}

// Redis restarted from its AOF comes back with what it had written.
class FailoverAofTest : public FailoverTest {
 protected:
  FailoverAofTest() { persistence_ = test::RedisServer::Persistence::Aof; }
};

// Redis crashes while a turn holds its lock there, and the turn's unlock
// finds it down; restarted from its AOF, Redis holds the lock again until the
// first call that reaches it writes the unlock back.
TEST_F(FailoverAofTest, AnUnlockRedisMissedIsWrittenBackWhenItIsUpAgain) {
  const std::string id = new_session_id();
  auto other_replica = make_redis_session_store(pool());
  ASSERT_TRUE(sessions_->try_lock(id, "turn", 1h));
  EXPECT_TRUE(sessions_->renew(id, "turn", 1h));
  server_->stop();
  EXPECT_FALSE(sessions_->renew(id, "turn", 1h)) << "only local locks renew during the outage";
  sessions_->unlock(id, "turn");
  EXPECT_TRUE(sessions_->try_lock(id, "local turn", 1h)) << "released locally";
  sessions_->unlock(id, "local turn");

  server_->start();
  EXPECT_FALSE(other_replica->try_lock(id, "next", 1h)) << "the AOF brought the lock back";
  until_redis_is_back([&] { sessions_->get(id); });
  EXPECT_TRUE(other_replica->try_lock(id, "next", 1h)) << "the unlock was written back";
  other_replica->unlock(id, "next");
}

}  // namespace
}  // namespace parley::state
