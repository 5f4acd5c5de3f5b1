// IdleConnections against a small real HTTP server (Beast, a thread per
// connection) that answers GET /health and closes every other connection
// shortly after, or refuses /health altogether.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "loadtest/idle_connections.h"
#include "thread_server.h"
#include "util/error.h"

using namespace parley::loadtest;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

class HealthServer : public parley::loadtest::testing::ThreadServer {
 public:
  explicit HealthServer(unsigned status) : status_(status) { start(); }
  ~HealthServer() override { stop(); }
  Url url() const { return Url::parse(ThreadServer::url()); }
  int health_requests() const { return health_; }

 private:
  // Answers one request; then every second connection closes after 50 ms,
  // the others wait for the client to leave.
  void serve(tcp::socket s, int index) override {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buf;
    http::request<http::string_body> req;
    boost::system::error_code ec;
    http::read(s, buf, req, ec);
    if (ec) return;
    if (req.target() == "/health") ++health_;
    http::response<http::string_body> res{http::status(status_), 11};
    res.body() = R"({"status":"ok"})";
    res.keep_alive(true);
    res.prepare_payload();
    http::write(s, res, ec);
    if (index % 2 == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      s.close();
      return;
    }
    char byte;
    s.read_some(net::buffer(&byte, 1), ec);  // returns when the client closes
  }

  unsigned status_;
  std::atomic<int> health_{0};
};

Endpoints resolve(const Url& url) {
  net::io_context ioc;
  return tcp::resolver(ioc).resolve(url.host, url.port);
}

TEST(IdleConnections, CountsTheOnesTheServerKeptOpen) {
  HealthServer server(200);
  const Url url = server.url();
  const Endpoints endpoints = resolve(url);
  IdleConnections idle(url, endpoints, 40);
  EXPECT_EQ(server.health_requests(), 40);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the odd ones are closed by now
  const IdleCount c = idle.finish();
  EXPECT_EQ(c.requested, 40);
  EXPECT_EQ(c.opened, 40);
  EXPECT_EQ(c.open_at_end, 20);
  EXPECT_GT(c.open_s, 0.0);
  EXPECT_EQ(idle.finish().open_at_end, 20);  // finished once; the count stays
}

TEST(IdleConnections, AServerThatRefusesHealthIsAnError) {
  HealthServer server(503);
  const Url url = server.url();
  EXPECT_THROW(IdleConnections(url, resolve(url), 5), parley::Error);
}

TEST(IdleConnections, NoneRequestedIsNothingToDo) {
  HealthServer server(200);
  const Url url = server.url();
  IdleConnections idle(url, resolve(url), 0);
  EXPECT_EQ(idle.finish().open_at_end, 0);
  EXPECT_EQ(server.health_requests(), 0);
}

}  // namespace
