// RedisPool against a real redis-server: URLs, AUTH and SELECT, pipelining,
// failing fast while in backoff, reconnecting after a restart.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "redis_server.h"
#include "redis_test.h"
#include "state/redis_client.h"
#include "state/session_store.h"

namespace parley::state {
namespace {

using namespace std::chrono_literals;
using Type = RedisReply::Type;

TEST(RedisUrl, Parses) {
  RedisUrl u = parse_redis_url("redis://cache.local:6380/2");
  EXPECT_EQ(u.host, "cache.local");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 2);
  EXPECT_EQ(u.password, "");
  u = parse_redis_url("redis://:s3cr%40t@10.0.0.1:7000");
  EXPECT_EQ(u.host, "10.0.0.1");
  EXPECT_EQ(u.port, 7000);
  EXPECT_EQ(u.db, 0);
  EXPECT_EQ(u.password, "s3cr@t");
  u = parse_redis_url("redis://default:pw@[::1]:6390/1");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 6390);
  EXPECT_EQ(u.password, "pw");
  u = parse_redis_url("redis://localhost");
  EXPECT_EQ(u.port, 6379);
  u = parse_redis_url("redis://:pa/ss@host:7/3");  // an unescaped '/' in the password
  EXPECT_EQ(u.password, "pa/ss");
  EXPECT_EQ(u.host, "host");
  EXPECT_EQ(u.db, 3);
  for (const char* bad : {"http://x:1", "redis://x:port", "redis://x:1/db", "redis://x:0", "redis://x:99999",
                          "redis://user:pw@x:1", "redis://pw@x:1", "redis://:bad%zz@x"})
    EXPECT_THROW(parse_redis_url(bad), Error) << bad;
}

TEST(RedisUrl, MaskHidesThePasswordOfAnyUrl) {
  EXPECT_EQ(mask_redis_url("redis://:s3cret@host:6379/0"), "redis://:***@host:6379/0");
  EXPECT_EQ(mask_redis_url("redis://default:s3cret@[::1]:6390/1"), "redis://default:***@[::1]:6390/1");
  EXPECT_EQ(mask_redis_url("redis://:p@ss:w/rd@host"), "redis://:***@host");
  EXPECT_EQ(mask_redis_url("redis://s3cret@host:1"), "redis://***@host:1");  // no ':': all of it may be the password
  EXPECT_EQ(mask_redis_url("http://:s3cret@host"), "http://:***@host");
  EXPECT_EQ(mask_redis_url("s3cret@host"), "***@host");
  EXPECT_EQ(mask_redis_url("redis://host:6379/2"), "redis://host:6379/2");
}

TEST(RedisUrl, ParseErrorsShowTheUrlMasked) {
  for (const char* bad : {"http://:s3cret@x:1", "redis://:s3cret@x:port", "redis://:s3cret@x:1/db", "redis://:s3cret@x:0",
                          "redis://user:s3cret@x:1", "redis://s3cret@x:1", "redis://:s3cret%zz@x", "redis://:s3cret@[::1",
                          "redis://:s3c/ret@x:1/db"}) {
    try {
      parse_redis_url(bad);
      ADD_FAILURE() << "parsed: " << bad;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find("s3c"), std::string::npos) << message;
      EXPECT_NE(message.find("***@"), std::string::npos) << message;
    }
  }
}

// A "server" that accepts connections (the kernel does, from the listen
// backlog) and never answers: each command would wait for the timeout.
class SilentServer {
 public:
  SilentServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot listen");
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
};

TEST(RedisPool, AHangingServerTimesOutThenCallsFailFastDuringBackoff) {
  SilentServer silent;
  RedisPool pool(parse_redis_url("redis://127.0.0.1:" + std::to_string(silent.port())), 2, 300ms);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(pool.command({"PING"}), RedisUnavailable);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms) << "waited for the timeout";
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_THROW(pool.command({"PING"}), RedisUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s) << "20 calls in backoff did not wait 300 ms each";
  EXPECT_EQ(pool.failures(), 21u);
  EXPECT_FALSE(pool.healthy());
}

TEST(RedisPool, NothingListeningIsUnavailable) {
  int port;
  {
    SilentServer closed;
    port = closed.port();
  }
  RedisPool pool(parse_redis_url("redis://127.0.0.1:" + std::to_string(port)), 1, 300ms);
  EXPECT_THROW(pool.command({"PING"}), RedisUnavailable);
  EXPECT_THROW(pool.pipeline({{"PING"}, {"PING"}}), RedisUnavailable);
}

class RedisPoolTest : public test::RedisTest {};

TEST_F(RedisPoolTest, CommandsAndPipelines) {
  auto p = pool(2);
  EXPECT_EQ(p->command({"SET", "parley:test:k", std::string("a\0b", 3)}).str, "OK");
  const RedisReply got = p->command({"GET", "parley:test:k"});
  EXPECT_EQ(got.type, Type::String);
  EXPECT_EQ(got.str, std::string("a\0b", 3));  // binary safe
  EXPECT_EQ(p->command({"GET", "parley:test:none"}).type, Type::Nil);
  EXPECT_EQ(p->command({"NOSUCHCOMMAND"}).type, Type::Error);  // returned, not thrown

  const auto replies = p->pipeline({{"INCR", "parley:test:n"}, {"INCR", "parley:test:n"}, {"LRANGE", "nolist", "0", "-1"}});
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].integer, 1);
  EXPECT_EQ(replies[1].integer, 2);
  EXPECT_EQ(replies[2].type, Type::Array);
  EXPECT_TRUE(p->healthy());
  EXPECT_EQ(redis_key("cache:x"), "parley:cache:x");
}

TEST_F(RedisPoolTest, SelectsTheDatabaseOfTheUrl) {
  RedisPool db3(parse_redis_url(server_->url(3)));
  db3.command({"SET", "parley:test:where", "three"});
  EXPECT_EQ(pool()->command({"GET", "parley:test:where"}).type, Type::Nil);
  EXPECT_EQ(db3.command({"GET", "parley:test:where"}).str, "three");
}

TEST_F(RedisPoolTest, ReconnectsAfterARestart) {
  auto p = pool(3);
  ASSERT_EQ(p->command({"PING"}).str, "PONG");
  server_->stop();
  EXPECT_THROW(p->command({"PING"}), RedisUnavailable);
  EXPECT_FALSE(p->healthy());
  server_->start();
  // Every pooled connection was to the old server; all must come back.
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    try {
      back = p->command({"PING"}).str == "PONG";
    } catch (const RedisUnavailable&) {
      std::this_thread::sleep_for(50ms);
    }
  }
  ASSERT_TRUE(back);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(p->command({"PING"}).str, "PONG");
  EXPECT_TRUE(p->healthy());
}

TEST(RedisAuth, PasswordProtectedServer) {
  if (!test::RedisServer::available()) GTEST_SKIP() << "redis-server is not installed";
  test::RedisServer server("p@ss:word");
  RedisUrl url = parse_redis_url("redis://127.0.0.1:" + std::to_string(server.port()));
  RedisPool no_password(url);
  EXPECT_EQ(no_password.command({"PING"}).type, Type::Error);  // NOAUTH
  url.password = "wrong";
  RedisPool wrong(url);
  EXPECT_THROW(wrong.command({"PING"}), RedisUnavailable);
  auto right = std::make_shared<RedisPool>(
      parse_redis_url("redis://:p%40ss%3Aword@127.0.0.1:" + std::to_string(server.port()) + "/1"));
  EXPECT_EQ(right->command({"PING"}).str, "PONG");
  auto store = make_redis_session_store(right);
  Session s;
  s.id = new_session_id();
  store->put(s);
  EXPECT_TRUE(store->get(s.id));
  // The stores turn NOAUTH into RedisUnavailable: a misconfigured replica falls back.
  url.password = "";
  EXPECT_THROW(make_redis_session_store(std::make_shared<RedisPool>(url))->get(s.id), RedisUnavailable);
}

// What RedisPool::check() says for each way a --redis-url can be wrong;
// never the password.
class RedisCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::RedisServer::available()) GTEST_SKIP() << "redis-server is not installed";
    server_ = std::make_unique<test::RedisServer>(kPassword);
  }

  // The message of check()'s RedisUnavailable; "" when it passed.
  std::string check(const std::string& url) {
    const RedisUrl parsed = parse_redis_url(url);
    RedisPool pool(parsed, 1, 300ms);
    try {
      pool.check();
      return "";
    } catch (const RedisUnavailable& e) {
      const std::string message = e.what();
      if (!parsed.password.empty()) {
        EXPECT_EQ(message.find(parsed.password), std::string::npos) << message;
      }
      return message;
    }
  }

  void expect_check_fails(const std::string& url, const std::string& step) {
    const std::string message = check(url);
    EXPECT_NE(message.find(step), std::string::npos) << "'" << message << "' does not name '" << step << "'";
  }

  std::string url(const std::string& auth, int db = 0) const {
    return "redis://" + auth + "127.0.0.1:" + std::to_string(server_->port()) + "/" + std::to_string(db);
  }

  static constexpr const char* kPassword = "s3cret-pw";
  std::unique_ptr<test::RedisServer> server_;
};

TEST_F(RedisCheck, PassesWithThePasswordAndAnExistingDatabase) {
  EXPECT_EQ(check(url(":s3cret-pw@", 15)), "");
}

TEST_F(RedisCheck, AWrongPasswordFailsAuth) {
  expect_check_fails(url(":not-it@"), "AUTH refused: WRONGPASS");
}

TEST_F(RedisCheck, NoPasswordFailsThePingWithNoauth) {
  expect_check_fails(url(""), "PING answered NOAUTH");
}

TEST_F(RedisCheck, ADatabaseOutOfRangeFailsSelect) {
  expect_check_fails(url(":s3cret-pw@", 99), "SELECT 99 refused");
}

TEST_F(RedisCheck, NothingListeningFailsToConnect) {
  const std::string address = url(":s3cret-pw@");
  server_->stop();
  expect_check_fails(address, "cannot connect");
}

}  // namespace
}  // namespace parley::state
