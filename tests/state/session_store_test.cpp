// The SessionStore contract, run on every backend: in memory, in memory with
// its SQLite file, and Redis (a real redis-server per test).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "redis_server.h"
#include "temp_file.h"
#include "state/redis_client.h"
#include "state/session_store.h"
#include "util/error.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;

class SessionStoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string backend = GetParam();
    if (backend == "sqlite") file_ = std::make_unique<test::TempFile>(".db");
    if (backend == "redis") {
      if (!test::RedisServer::available())
        GTEST_SKIP() << test::RedisServer::kBinary << " is not installed: Redis tests skipped";
      redis_ = std::make_unique<test::RedisServer>();
    }
    store_ = make_store("session");
  }

  // A store of `kind` on the test's backend (the same file or Redis server).
  std::unique_ptr<SessionStore> make_store(const std::string& kind) {
    if (file_) return make_local_session_store(file_->path(), kind);
    if (redis_) return make_redis_session_store(std::make_shared<RedisPool>(parse_redis_url(redis_->url()), 8), kind);
    return make_local_session_store("", kind);
  }

  Session create(const std::string& user = "", const std::string& api_key = "", int max_turns = 5,
                 int64_t ttl_s = 60) {
    Session s;
    s.id = new_session_id();
    s.user = user;
    s.api_key = api_key;
    s.system_prompt = "You are terse.";
    s.model = "lora-a";
    s.max_turns = max_turns;
    s.ttl_s = ttl_s;
    store_->put(s);
    return s;
  }

  static Turn turn(const std::string& text) { return {text, "answer to " + text, now_ms()}; }

  // Every page of a listing, following cursors.
  std::vector<std::string> list_all(const std::string& user, const std::string& key, int limit) {
    std::vector<std::string> ids;
    std::string cursor;
    for (int pages = 0; pages < 100; ++pages) {
      const SessionPage page = store_->list(user, key, cursor, limit);
      EXPECT_LE(page.sessions.size(), static_cast<size_t>(limit));
      for (const Session& s : page.sessions) {
        EXPECT_TRUE(s.turns.empty()) << "listings carry no turns";
        ids.push_back(s.id);
      }
      if (page.next_cursor.empty()) break;
      cursor = page.next_cursor;
    }
    return ids;
  }

  std::unique_ptr<test::RedisServer> redis_;
  std::unique_ptr<test::TempFile> file_;
  std::unique_ptr<SessionStore> store_;  // declared last: closed before the file is removed
};

TEST_P(SessionStoreTest, CreateGetDelete) {
  const Session s = create("alice", "key1", 4, 120);
  const auto got = store_->get(s.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->id, s.id);
  EXPECT_EQ(got->id.size(), 32u);
  EXPECT_EQ(got->user, "alice");
  EXPECT_EQ(got->api_key, "key1");
  EXPECT_EQ(got->system_prompt, "You are terse.");
  EXPECT_EQ(got->model, "lora-a");
  EXPECT_EQ(got->max_turns, 4);
  EXPECT_EQ(got->ttl_s, 120);
  EXPECT_GT(got->created_ms, 0);
  EXPECT_NEAR(static_cast<double>(got->expires_ms - got->updated_ms), 120000.0, 1.0);
  EXPECT_TRUE(got->turns.empty());

  EXPECT_TRUE(store_->remove(s.id));
  EXPECT_FALSE(store_->get(s.id));
  EXPECT_FALSE(store_->remove(s.id));
  EXPECT_FALSE(store_->append_turn(s.id, turn("hello")));
  EXPECT_TRUE(store_->list("", "key1", "", 10).sessions.empty());
}

TEST_P(SessionStoreTest, AppendKeepsTheLastMaxTurnsAndTheSystemPrompt) {
  const Session s = create("", "", 3);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->append_turn(s.id, turn("q" + std::to_string(i))));
  const auto got = store_->get(s.id);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->turns.size(), 3u);
  EXPECT_EQ(got->turns[0].user, "q2");
  EXPECT_EQ(got->turns[2].user, "q4");
  EXPECT_EQ(got->turns[2].assistant, "answer to q4");
  EXPECT_GT(got->turns[2].created_ms, 0);
  EXPECT_EQ(got->system_prompt, "You are terse.");
  EXPECT_EQ(got->model, "lora-a");  // kept by appends
  EXPECT_GE(got->updated_ms, got->created_ms);
}

TEST_P(SessionStoreTest, PutTrimsAndReplaces) {
  Session s = create("bob", "", 2);
  s.turns = {turn("a"), turn("b"), turn("c")};
  s.system_prompt = "changed";
  store_->put(s);
  const auto got = store_->get(s.id);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->turns.size(), 2u);
  EXPECT_EQ(got->turns[0].user, "b");
  EXPECT_EQ(got->system_prompt, "changed");
  EXPECT_EQ(store_->list("bob", "", "", 10).sessions.size(), 1u);
}

TEST_P(SessionStoreTest, ListsNewestFirstWithCursorsAndFilters) {
  std::vector<std::string> alice_k1, all_k1;
  for (int i = 0; i < 7; ++i) {
    const Session s = create(i % 3 == 0 ? "alice" : "bob", "k1");
    if (i % 3 == 0) alice_k1.insert(alice_k1.begin(), s.id);
    all_k1.insert(all_k1.begin(), s.id);
    std::this_thread::sleep_for(3ms);  // distinct updated_ms: the order is then known
  }
  const Session other_key = create("alice", "k2");
  const Session no_key = create("alice", "");

  EXPECT_EQ(list_all("", "k1", 3), all_k1);
  EXPECT_EQ(list_all("", "k1", 100), all_k1);
  EXPECT_EQ(list_all("alice", "k1", 2), alice_k1);
  EXPECT_EQ(list_all("alice", "k2", 2), std::vector<std::string>{other_key.id});
  EXPECT_EQ(list_all("", "", 5), std::vector<std::string>{no_key.id});
  EXPECT_TRUE(list_all("carol", "k1", 5).empty());

  const SessionPage first = store_->list("", "k1", "", 3);
  ASSERT_EQ(first.sessions.size(), 3u);
  EXPECT_FALSE(first.next_cursor.empty());
  EXPECT_EQ(first.sessions[0].user, "alice");  // metadata is there

  // A turn moves a session to the front.
  ASSERT_TRUE(store_->append_turn(all_k1.back(), turn("again")));
  EXPECT_EQ(store_->list("", "k1", "", 1).sessions.at(0).id, all_k1.back());

  EXPECT_THROW(store_->list("", "k1", "not-a-cursor", 3), Error);
}

TEST_P(SessionStoreTest, ExpiresAfterItsTtlUnlessATurnRenewsIt) {
  const Session idle = create("u", "k", 5, 1);
  const Session busy = create("u", "k", 5, 2);
  std::this_thread::sleep_for(600ms);
  const int64_t before_turn = now_ms();
  ASSERT_TRUE(store_->append_turn(busy.id, turn("still here")));
  const auto renewed = store_->get(busy.id);
  ASSERT_TRUE(renewed);
  EXPECT_GE(renewed->expires_ms, before_turn + 2000) << "the turn renewed the TTL";
  std::this_thread::sleep_for(600ms);
  EXPECT_FALSE(store_->get(idle.id)) << "1 s TTL, 1.2 s idle";
  EXPECT_FALSE(store_->append_turn(idle.id, turn("too late")));
  EXPECT_TRUE(store_->get(busy.id));
  const SessionPage page = store_->list("u", "k", "", 10);
  ASSERT_EQ(page.sessions.size(), 1u);
  EXPECT_EQ(page.sessions[0].id, busy.id);
  std::this_thread::sleep_for(std::chrono::milliseconds(renewed->expires_ms - now_ms() + 50));
  EXPECT_FALSE(store_->get(busy.id));
  EXPECT_TRUE(store_->list("u", "k", "", 10).sessions.empty());
}

TEST_P(SessionStoreTest, TurnLockIsExclusivePerOwnerAndExpires) {
  const Session s = create();
  EXPECT_TRUE(store_->try_lock(s.id, "a", 5s));
  EXPECT_FALSE(store_->try_lock(s.id, "b", 5s));
  store_->unlock(s.id, "b");  // not the owner: no effect
  EXPECT_FALSE(store_->try_lock(s.id, "b", 5s));
  store_->unlock(s.id, "a");
  EXPECT_TRUE(store_->try_lock(s.id, "b", 100ms));
  std::this_thread::sleep_for(150ms);  // b died holding it
  EXPECT_TRUE(store_->try_lock(s.id, "c", 5s));
  store_->unlock(s.id, "c");
}

// The sleeps only wait for a 1 ms lease to have run out.
TEST_P(SessionStoreTest, OnlyTheOwnerRenewsTheLock) {
  const Session s = create();
  EXPECT_FALSE(store_->renew(s.id, "a", 1h)) << "not held";
  EXPECT_TRUE(store_->try_lock(s.id, "b", 1h)) << "the renewal took no lock";
  EXPECT_FALSE(store_->renew(s.id, "a", 1ms)) << "b holds it";
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(store_->try_lock(s.id, "c", 1h)) << "a's renewal did not shorten b's lease";
  EXPECT_TRUE(store_->renew(s.id, "b", 1ms));
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(store_->renew(s.id, "b", 1h)) << "expired: no longer b's";
  EXPECT_TRUE(store_->try_lock(s.id, "c", 1h));
  store_->unlock(s.id, "c");
}

// 20 threads take turns on one session through the turn lock. Each reads the
// history under the lock and writes how many turns it saw, so a lost or
// interleaved turn shows up as a missing or repeated count.
TEST_P(SessionStoreTest, TwentyConcurrentTurnsUnderTheLockLoseNothing) {
  for (int max_turns : {25, 5}) {
    const Session s = create("", "", max_turns);
    std::atomic<int> seen_total{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 20; ++t) {
      threads.emplace_back([&, t] {
        const std::string owner = "worker" + std::to_string(t);
        while (!store_->try_lock(s.id, owner, 10s)) std::this_thread::sleep_for(1ms);
        const auto current = store_->get(s.id);
        const int seen = seen_total.fetch_add(1);
        std::this_thread::sleep_for(1ms);  // "generating"
        store_->append_turn(s.id, turn(std::to_string(seen) + "/" + std::to_string(current ? current->turns.size() : -1)));
        store_->unlock(s.id, owner);
      });
    }
    for (auto& th : threads) th.join();
    const auto got = store_->get(s.id);
    ASSERT_TRUE(got);
    ASSERT_EQ(got->turns.size(), static_cast<size_t>(std::min(20, max_turns)));
    for (size_t i = 0; i < got->turns.size(); ++i) {
      const int n = 20 - static_cast<int>(got->turns.size()) + static_cast<int>(i);
      const size_t history = static_cast<size_t>(std::min(n, max_turns));
      EXPECT_EQ(got->turns[i].user, std::to_string(n) + "/" + std::to_string(history)) << "max_turns " << max_turns;
    }
  }
}

// append_turn itself is atomic: no lock, still no lost turn.
TEST_P(SessionStoreTest, ConcurrentAppendsWithoutTheLockAreAtomic) {
  const Session s = create("", "", 50);
  std::vector<std::thread> threads;
  for (int t = 0; t < 20; ++t)
    threads.emplace_back([&, t] { EXPECT_TRUE(store_->append_turn(s.id, turn("t" + std::to_string(t)))); });
  for (auto& th : threads) th.join();
  const auto got = store_->get(s.id);
  ASSERT_TRUE(got);
  std::set<std::string> texts;
  for (const Turn& t : got->turns) texts.insert(t.user);
  EXPECT_EQ(texts.size(), 20u);
}

TEST_P(SessionStoreTest, KeepsUnicodeAndOddBytes) {
  Session s = create("名前:%", "key:with:colons");
  s.system_prompt = "Réponds en français — «ok» \xF0\x9F\x99\x82 / \\ \"q\"";
  store_->put(s);
  ASSERT_TRUE(store_->append_turn(s.id, turn("ＨＥＬＬＯ")));
  const auto got = store_->get(s.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->system_prompt, s.system_prompt);
  EXPECT_EQ(got->turns.at(0).user, "ＨＥＬＬＯ");
  EXPECT_EQ(store_->list("名前:%", "key:with:colons", "", 5).sessions.size(), 1u);
  EXPECT_TRUE(store_->list("名前", "key:with:colons", "", 5).sessions.empty());
}

// Stored responses live in a store of their own kind beside the sessions:
// neither finds, lists nor removes the other's records, and a record's
// payload comes back as it was put.
TEST_P(SessionStoreTest, StoresOfAnotherKindAreSeparateAndKeepPayloads) {
  auto responses = make_store("response");
  const Session session = create("", "key1");
  Session response;
  response.id = "resp_" + new_session_id();
  response.api_key = "key1";
  response.max_turns = 0;
  response.ttl_s = 60;
  response.payload = R"({"response": {"id": "x"}, "conversation": []})";
  responses->put(response);
  const auto got = responses->get(response.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->payload, response.payload);
  EXPECT_EQ(got->api_key, "key1");
  EXPECT_FALSE(store_->get(response.id));
  EXPECT_FALSE(responses->get(session.id));
  EXPECT_EQ(store_->get(session.id)->payload, "");
  EXPECT_EQ(list_all("", "key1", 10), std::vector<std::string>{session.id});
  EXPECT_FALSE(store_->remove(response.id));
  EXPECT_TRUE(responses->get(response.id));
  EXPECT_TRUE(responses->remove(response.id));
  EXPECT_TRUE(store_->get(session.id));
  if (file_) {  // both tables survive reopening the file
    responses->put(response);
    responses.reset();
    store_.reset();
    EXPECT_EQ(make_store("response")->get(response.id)->payload, response.payload);
    EXPECT_TRUE(make_store("session")->get(session.id));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SessionStoreTest, ::testing::Values("memory", "sqlite", "redis"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace parley::state
