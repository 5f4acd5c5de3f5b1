#pragma once
// A real redis-server for the tests: on a free loopback port, in its own
// temporary directory, killed (by pid) when the object goes. stop()/start()
// simulate a crash and a restart on the same port; with Persistence::Aof the
// restarted server loads what the killed one had written (appendonly yes).
#include <string>
#include <vector>

#include <sys/types.h>

namespace parley::test {

class RedisServer {
 public:
  static constexpr const char* kBinary = "/usr/bin/redis-server";
  static bool available();  // false: tests skip with a message

  enum class Persistence { None, Aof };

  explicit RedisServer(std::string password = "", Persistence persistence = Persistence::None);
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  void start();  // returns once PING answers
  void stop();   // SIGKILL: a crash, not a clean shutdown
  int port() const { return port_; }
  std::string url(int db = 0) const;  // redis://[:password@]127.0.0.1:port/db

 private:
  bool answers_ping() const;

  std::string password_;
  Persistence persistence_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace parley::test
