// RedisPool: idle hiredis connections handed out one call at a time. Any
// connection failure puts the whole pool into a backoff (100 ms doubling to
// 2 s) during which calls fail fast, and drops every older connection (a
// restarted server has closed them all), so the next call reconnects.
#include <hiredis/hiredis.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include "state/redis_client.h"

namespace parley::state {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kFirstBackoff{100}, kMaxBackoff{2000};

timeval to_timeval(std::chrono::milliseconds ms) {
  return {static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

RedisReply flatten(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::Array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(flatten(r->element[i]));
      break;
    default:
      break;  // nil
  }
  return out;
}

// Sends every command, then reads every reply (one round trip).
std::vector<RedisReply> exchange(redisContext* c, const std::vector<std::vector<std::string>>& commands) {
  for (const auto& argv : commands) {
    std::vector<const char*> args;
    std::vector<size_t> lengths;
    for (const std::string& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(c, static_cast<int>(args.size()), args.data(), lengths.data()) != REDIS_OK)
      throw RedisUnavailable(std::string("redis: ") + c->errstr);
  }
  std::vector<RedisReply> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(c, &raw) != REDIS_OK || raw == nullptr)
      throw RedisUnavailable(std::string("redis: ") + (c->errstr[0] ? c->errstr : "connection lost"));
    replies.push_back(flatten(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  return replies;
}

// hiredis writes with write(2): a server that went away must make a call
// fail, not kill the process with SIGPIPE. A handler someone installed is kept.
void ignore_sigpipe() {
  struct sigaction current{};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) signal(SIGPIPE, SIG_IGN);
}

}  // namespace

struct RedisPool::Impl {
  struct ContextDeleter {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  using Context = std::unique_ptr<redisContext, ContextDeleter>;

  struct Slot {
    Context context;
    uint64_t generation = 0;  // of the pool when connected
  };

  RedisUrl url;
  std::chrono::milliseconds timeout;
  std::mutex mu;
  std::condition_variable idle_cv;
  std::vector<Slot> slots;
  std::vector<size_t> idle;
  uint64_t generation = 0;  // bumped by every failure
  Clock::time_point retry_at{};
  std::chrono::milliseconds backoff{0};
  std::atomic<bool> healthy{false};
  std::atomic<uint64_t> failures{0};

  size_t acquire() {
    std::unique_lock lock(mu);
    if (Clock::now() < retry_at) throw RedisUnavailable(where() + " unavailable (reconnecting with backoff)");
    if (!idle_cv.wait_for(lock, timeout, [&] { return !idle.empty(); }))
      throw RedisUnavailable("redis: no free connection within the timeout");
    const size_t i = idle.back();
    idle.pop_back();
    if (slots[i].generation != generation) slots[i].context.reset();
    return i;
  }

  void release(size_t i, bool failed) {
    {
      std::lock_guard lock(mu);
      if (failed) {
        slots[i].context.reset();
        ++generation;
        backoff = std::clamp(backoff * 2, kFirstBackoff, kMaxBackoff);
        retry_at = Clock::now() + backoff;
      } else {
        backoff = std::chrono::milliseconds(0);
      }
      idle.push_back(i);
    }
    idle_cv.notify_one();
  }

  std::string where() const { return "redis " + url.host + ":" + std::to_string(url.port); }

  Context connect() const {
    Context c(redisConnectWithTimeout(url.host.c_str(), url.port, to_timeval(timeout)));
    if (!c) throw RedisUnavailable("redis: cannot allocate a connection");
    if (c->err) throw RedisUnavailable(where() + ": cannot connect: " + c->errstr);
    redisSetTimeout(c.get(), to_timeval(timeout));
    std::vector<std::vector<std::string>> setup;
    std::vector<std::string> shown;  // the commands as errors name them: never the password
    if (!url.password.empty()) {
      setup.push_back({"AUTH", url.password});
      shown.push_back("AUTH");
    }
    if (url.db != 0) {
      setup.push_back({"SELECT", std::to_string(url.db)});
      shown.push_back("SELECT " + std::to_string(url.db));
    }
    const std::vector<RedisReply> replies = exchange(c.get(), setup);
    for (size_t i = 0; i < replies.size(); ++i)
      if (replies[i].type == RedisReply::Type::Error)
        throw RedisUnavailable(where() + ": " + shown[i] + " refused: " + replies[i].str);
    return c;
  }

  std::vector<RedisReply> run(const std::vector<std::vector<std::string>>& commands) {
    size_t i;
    try {
      i = acquire();
    } catch (const RedisUnavailable&) {
      note(false);
      throw;
    }
    try {
      Slot& slot = slots[i];
      if (!slot.context) {
        slot.context = connect();
        std::lock_guard lock(mu);
        slot.generation = generation;
      }
      auto replies = exchange(slot.context.get(), commands);
      release(i, false);
      note(true);
      return replies;
    } catch (const RedisUnavailable&) {
      release(i, true);
      note(false);
      throw;
    }
  }

  void note(bool ok) {
    healthy = ok;
    if (!ok) ++failures;
  }
};

RedisPool::RedisPool(RedisUrl url, size_t connections, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  ignore_sigpipe();
  impl_->url = std::move(url);
  impl_->timeout = timeout;
  impl_->slots.resize(std::max<size_t>(connections, 1));
  for (size_t i = 0; i < impl_->slots.size(); ++i) impl_->idle.push_back(i);
}

RedisPool::~RedisPool() = default;

RedisReply RedisPool::command(const std::vector<std::string>& argv) { return std::move(impl_->run({argv}).front()); }

std::vector<RedisReply> RedisPool::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (commands.empty()) return {};
  return impl_->run(commands);
}

void RedisPool::check() {
  const RedisReply r = command({"PING"});
  if (r.type != RedisReply::Type::String || r.str != "PONG")
    throw RedisUnavailable(impl_->where() + ": PING answered " + (r.str.empty() ? "nothing" : r.str));
}

bool RedisPool::healthy() const { return impl_->healthy; }
uint64_t RedisPool::failures() const { return impl_->failures; }

}  // namespace parley::state
