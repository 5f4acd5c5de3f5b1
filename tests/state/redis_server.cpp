#include "redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace parley::test {
namespace {

// A port that was free a moment ago: bind 127.0.0.1:0 and read it back.
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw std::runtime_error("cannot find a free port");
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

bool RedisServer::available() { return access(kBinary, X_OK) == 0; }

// The port may be taken between free_port() and redis-server's bind (tests
// run in parallel): then redis-server exits and another port is tried.
RedisServer::RedisServer(std::string password, Persistence persistence)
    : password_(std::move(password)), persistence_(persistence) {
  char dir[] = "/tmp/parley-redis-XXXXXX";
  if (!mkdtemp(dir)) throw std::runtime_error("cannot make a directory for redis-server");
  dir_ = dir;
  for (int attempt = 0;; ++attempt) {
    port_ = free_port();
    try {
      start();
      return;
    } catch (const std::exception&) {
      if (attempt == 4) {
        std::filesystem::remove_all(dir_);
        throw;
      }
    }
  }
}

RedisServer::~RedisServer() {
  stop();
  std::filesystem::remove_all(dir_);
}

void RedisServer::start() {
  std::vector<std::string> args = {kBinary, "--port", std::to_string(port_), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", persistence_ == Persistence::Aof ? "yes" : "no",
                                   "--dir", dir_, "--daemonize", "no"};
  if (!password_.empty()) args.insert(args.end(), {"--requirepass", password_});
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kBinary, argv.data());
    _exit(127);
  }
  for (int i = 0; i < 250; ++i) {
    if (answers_ping()) return;
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) {  // exited: the port was taken
      pid_ = -1;
      throw std::runtime_error("redis-server exited at start on port " + std::to_string(port_));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  stop();
  throw std::runtime_error("redis-server did not answer PING on port " + std::to_string(port_));
}

void RedisServer::stop() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::string RedisServer::url(int db) const {
  const std::string auth = password_.empty() ? "" : ":" + password_ + "@";
  return "redis://" + auth + "127.0.0.1:" + std::to_string(port_) + "/" + std::to_string(db);
}

bool RedisServer::answers_ping() const {
  timeval tv{0, 200000};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
  bool ok = false;
  if (c && !c->err) {
    if (!password_.empty()) freeReplyObject(redisCommand(c, "AUTH %s", password_.c_str()));
    auto* reply = static_cast<redisReply*>(redisCommand(c, "PING"));
    ok = reply && reply->type == REDIS_REPLY_STATUS && std::string(reply->str) == "PONG";
    freeReplyObject(reply);
  }
  redisFree(c);
  return ok;
}

}  // namespace parley::test
