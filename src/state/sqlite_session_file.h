#pragma once
// The SQLite file behind the local session store (internal to src/state):
// one table of sessions as JSON (`sessions`; stored responses: `responses`),
// WAL mode, prepared statements, used by one writer (the store, under its mutex).
#include <cstdint>
#include <string>
#include <vector>

#include "state/session.h"

struct sqlite3;
struct sqlite3_stmt;

namespace parley::state {

class SqliteSessionFile {
 public:
  // `table`: a name from the code, never from input.
  SqliteSessionFile(const std::string& path, const std::string& table);  // throws parley::Error
  ~SqliteSessionFile();
  SqliteSessionFile(const SqliteSessionFile&) = delete;
  SqliteSessionFile& operator=(const SqliteSessionFile&) = delete;

  // Deletes the rows expired at `now` and returns the others.
  std::vector<Session> load(int64_t now);
  void save(const Session& s);
  void erase(const std::string& id);

 private:
  void exec(const char* sql);
  sqlite3_stmt* prepare(const char* sql);
  void run(sqlite3_stmt* stmt);  // steps to completion and resets
  [[noreturn]] void fail(const std::string& what);

  std::string path_, table_;
  sqlite3* db_ = nullptr;
  sqlite3_stmt* upsert_ = nullptr;
  sqlite3_stmt* delete_ = nullptr;
};

}  // namespace parley::state
