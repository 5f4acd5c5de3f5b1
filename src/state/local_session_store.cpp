// The embedded session store: a map under one mutex, written through to the
// SQLite file on every change (the file is only read when the store opens).
#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "state/session_rules.h"
#include "state/session_store.h"
#include "state/sqlite_session_file.h"

namespace parley::state {
namespace {

class LocalSessionStore : public SessionStore {
 public:
  LocalSessionStore(const std::string& path, const std::string& kind) {
    if (path.empty()) return;
    file_ = std::make_unique<SqliteSessionFile>(path, kind + "s");
    for (Session& s : file_->load(now_ms())) sessions_.emplace(s.id, std::move(s));
  }

  void put(const Session& s) override {
    Session stored = prepared_for_put(s, now_ms());
    std::lock_guard lock(mu_);
    save(stored);
    sessions_[stored.id] = std::move(stored);
  }

  std::optional<Session> get(const std::string& id) override {
    std::lock_guard lock(mu_);
    const Session* s = live(id, now_ms());
    return s ? std::optional<Session>(*s) : std::nullopt;
  }

  bool remove(const std::string& id) override {
    std::lock_guard lock(mu_);
    const bool existed = live(id, now_ms()) != nullptr;
    if (existed) erase(id);
    return existed;
  }

  SessionPage list(const std::string& user, const std::string& api_key, const std::string& cursor,
                   int limit) override {
    const int64_t now = now_ms();
    std::optional<ListPosition> after;
    if (!cursor.empty()) after = decode_cursor(cursor);
    std::vector<Session> matches;
    std::lock_guard lock(mu_);
    purge_expired(now);
    for (const auto& [id, s] : sessions_) {
      if (s.api_key != api_key || (!user.empty() && s.user != user)) continue;
      if (after && !listed_before(*after, position_of(s))) continue;
      matches.push_back(s);
      matches.back().turns.clear();
    }
    std::sort(matches.begin(), matches.end(),
              [](const Session& a, const Session& b) { return listed_before(position_of(a), position_of(b)); });
    SessionPage page;
    const size_t n = static_cast<size_t>(std::max(limit, 0));
    if (matches.size() > n) {
      matches.resize(n);
      if (n > 0) page.next_cursor = encode_cursor(position_of(matches.back()));
    }
    page.sessions = std::move(matches);
    return page;
  }

  bool append_turn(const std::string& id, const Turn& turn) override {
    const int64_t now = now_ms();
    std::lock_guard lock(mu_);
    Session* s = live(id, now);
    if (!s) return false;
    Session updated = *s;
    updated.turns.push_back(turn);
    trim_turns(updated);
    touch(updated, now);
    save(updated);
    *s = std::move(updated);
    return true;
  }

  bool try_lock(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    auto [it, inserted] = locks_.try_emplace(id, TurnLock{owner, now + ttl});
    if (inserted) return true;
    if (it->second.expires > now) return false;
    it->second = {owner, now + ttl};  // the previous holder's lock ran out
    return true;
  }

  bool renew(const std::string& id, const std::string& owner, std::chrono::milliseconds ttl) override {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu_);
    const auto it = locks_.find(id);
    if (it == locks_.end() || it->second.owner != owner || it->second.expires <= now) return false;
    it->second.expires = now + ttl;
    return true;
  }

  void unlock(const std::string& id, const std::string& owner) override {
    std::lock_guard lock(mu_);
    const auto it = locks_.find(id);
    if (it != locks_.end() && it->second.owner == owner) locks_.erase(it);
  }

 private:
  struct TurnLock {
    std::string owner;
    std::chrono::steady_clock::time_point expires;
  };

  // The session if it exists and has not expired; an expired one is purged.
  Session* live(const std::string& id, int64_t now) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    if (it->second.expires_ms > now) return &it->second;
    erase(id);
    return nullptr;
  }

  void purge_expired(int64_t now) {
    std::vector<std::string> expired;
    for (const auto& [id, s] : sessions_)
      if (s.expires_ms <= now) expired.push_back(id);
    for (const std::string& id : expired) erase(id);
  }

  // Written to the file first: a failed write leaves the map unchanged.
  void save(const Session& s) {
    if (file_) file_->save(s);
  }

  void erase(const std::string& id) {
    if (file_) file_->erase(id);
    sessions_.erase(id);
  }

  std::mutex mu_;
  std::unique_ptr<SqliteSessionFile> file_;  // null: memory only
  std::unordered_map<std::string, Session> sessions_;
  std::unordered_map<std::string, TurnLock> locks_;
};

}  // namespace

std::unique_ptr<SessionStore> make_local_session_store(const std::string& path, const std::string& kind) {
  return std::make_unique<LocalSessionStore>(path, kind);
}

}  // namespace parley::state
