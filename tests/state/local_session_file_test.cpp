// The embedded store's SQLite file: sessions survive reopening (a restart),
// expired rows are purged, and the file is in WAL mode.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <thread>

#include "state/session_store.h"
#include "temp_file.h"
#include "util/error.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;

Session make_session(const std::string& user, int64_t ttl_s) {
  Session s;
  s.id = new_session_id();
  s.user = user;
  s.api_key = "key";
  s.system_prompt = "Be kind.";
  s.max_turns = 2;
  s.ttl_s = ttl_s;
  return s;
}

TEST(LocalSessionFile, SessionsSurviveReopening) {
  test::TempFile file(".db");
  const Session kept = make_session("alice", 60), removed = make_session("bob", 60);
  {
    auto store = make_local_session_store(file.path());
    store->put(kept);
    store->put(removed);
    for (const char* q : {"one", "two", "three"}) ASSERT_TRUE(store->append_turn(kept.id, {q, "ok", now_ms()}));
    ASSERT_TRUE(store->remove(removed.id));
  }
  auto reopened = make_local_session_store(file.path());
  const auto got = reopened->get(kept.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->user, "alice");
  EXPECT_EQ(got->system_prompt, "Be kind.");
  ASSERT_EQ(got->turns.size(), 2u);
  EXPECT_EQ(got->turns[0].user, "two");
  EXPECT_EQ(got->turns[1].user, "three");
  EXPECT_FALSE(reopened->get(removed.id));
  EXPECT_EQ(reopened->list("", "key", "", 10).sessions.size(), 1u);
}

TEST(LocalSessionFile, ExpiredRowsArePurgedOnOpen) {
  test::TempFile file(".db");
  const Session short_lived = make_session("a", 1), long_lived = make_session("b", 60);
  {
    auto store = make_local_session_store(file.path());
    store->put(short_lived);
    store->put(long_lived);
  }
  std::this_thread::sleep_for(1100ms);
  { auto store = make_local_session_store(file.path()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(file.path().c_str(), &db), SQLITE_OK);
  const auto column = [&](const char* sql) {
    std::vector<std::string> values;
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sql;
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW)
      values.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
    sqlite3_finalize(stmt);
    return values;
  };
  const std::vector<std::string> ids = column("SELECT id FROM sessions");
  EXPECT_EQ(column("PRAGMA journal_mode"), std::vector<std::string>{"wal"});
  sqlite3_close(db);
  EXPECT_EQ(ids, std::vector<std::string>{long_lived.id});
}

TEST(LocalSessionFile, ABadFileIsAnError) {
  test::TempFile file(".db");
  std::ofstream(file.path()) << "this is not a database, just text long enough to fill a header page...";
  EXPECT_THROW(make_local_session_store(file.path()), Error);
  EXPECT_THROW(make_local_session_store("/nonexistent-dir/x.db"), Error);
}

}  // namespace
}  // namespace parley::state
