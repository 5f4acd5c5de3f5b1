#include "state/sqlite_session_file.h"

#include <sqlite3.h>

#include "state/session_rules.h"
#include "util/error.h"

namespace parley::state {

SqliteSessionFile::SqliteSessionFile(const std::string& path, const std::string& table) : path_(path), table_(table) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("session file " + path + ": " + message);
  }
  try {
    sqlite3_busy_timeout(db_, 2000);
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: durable across a process crash
    exec(("CREATE TABLE IF NOT EXISTS " + table_ + " (id TEXT PRIMARY KEY, expires_ms INTEGER NOT NULL, body TEXT NOT NULL)").c_str());
    upsert_ = prepare(("INSERT OR REPLACE INTO " + table_ + " (id, expires_ms, body) VALUES (?1, ?2, ?3)").c_str());
    delete_ = prepare(("DELETE FROM " + table_ + " WHERE id = ?1").c_str());
  } catch (...) {
    sqlite3_finalize(upsert_);
    sqlite3_close(db_);
    throw;
  }
}

SqliteSessionFile::~SqliteSessionFile() {
  sqlite3_finalize(upsert_);
  sqlite3_finalize(delete_);
  sqlite3_close(db_);
}

std::vector<Session> SqliteSessionFile::load(int64_t now) {
  sqlite3_stmt* purge = prepare(("DELETE FROM " + table_ + " WHERE expires_ms <= ?1").c_str());
  sqlite3_bind_int64(purge, 1, now);
  run(purge);
  sqlite3_finalize(purge);

  sqlite3_stmt* select = prepare(("SELECT body FROM " + table_).c_str());
  std::vector<Session> sessions;
  int rc;
  while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(select, 0));
    try {
      sessions.push_back(session_from_json(nlohmann::json::parse(text ? text : "")));
    } catch (const std::exception& e) {
      sqlite3_finalize(select);
      throw Error("session file " + path_ + ": bad row in " + table_ + ": " + e.what());
    }
  }
  sqlite3_finalize(select);
  if (rc != SQLITE_DONE) fail("reading " + table_);
  return sessions;
}

void SqliteSessionFile::save(const Session& s) {
  const std::string body = dump_lenient(to_json(s, true));
  sqlite3_bind_text(upsert_, 1, s.id.data(), static_cast<int>(s.id.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(upsert_, 2, s.expires_ms);
  sqlite3_bind_text(upsert_, 3, body.data(), static_cast<int>(body.size()), SQLITE_TRANSIENT);
  run(upsert_);
}

void SqliteSessionFile::erase(const std::string& id) {
  sqlite3_bind_text(delete_, 1, id.data(), static_cast<int>(id.size()), SQLITE_TRANSIENT);
  run(delete_);
}

void SqliteSessionFile::exec(const char* sql) {
  if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
}

sqlite3_stmt* SqliteSessionFile::prepare(const char* sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr) != SQLITE_OK) fail(sql);
  return stmt;
}

void SqliteSessionFile::run(sqlite3_stmt* stmt) {
  const int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (rc != SQLITE_DONE) fail("writing " + table_);
}

void SqliteSessionFile::fail(const std::string& what) {
  throw Error("session file " + path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

}  // namespace parley::state
