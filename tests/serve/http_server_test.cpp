#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "raw_client.h"
#include "serve/transport/http_server.h"

namespace parley::serve {
namespace {

using test::RawClient;
using namespace std::chrono_literals;

// A server with a few test routes: /echo (POST body back), /stream (chunks
// pushed from another thread), /hang (a stream that only ends on disconnect).
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.add("GET", "/hello", Access::Public, [](const ExchangePtr& ex, const PathParams&) {
      ex->respond(json_response(200, {{"hello", "world"}}));
    });
    router_.add("POST", "/echo", Access::Public, [](const ExchangePtr& ex, const PathParams&) {
      HttpResponse r;
      r.content_type = "text/plain";
      r.body = ex->request().body;
      ex->respond(std::move(r));
    });
    router_.add("GET", "/stream", Access::Public, [this](const ExchangePtr& ex, const PathParams&) {
      ex->begin_stream(HttpResponse{200, "text/event-stream", {}, ""});
      producer_ = std::thread([ex] {  // like the engine thread: posts to the connection's strand
        for (int i = 0; i < 5; ++i) ex->post([ex, i] { ex->send_chunk("data: " + std::to_string(i) + "\n\n"); });
        ex->post([ex] { ex->end_stream(); });
      });
    });
    router_.add("GET", "/hang", Access::Public, [this](const ExchangePtr& ex, const PathParams&) {
      ex->begin_stream(HttpResponse{200, "text/plain", {}, ""});
      ex->send_chunk("started");
      ex->on_disconnect([this, ex] {
        ex->end_stream();
        disconnected_.set_value();
      });
    });
  }
  void start(HttpOptions options = {}) {
    options.port = 0;
    server_ = std::make_unique<HttpServer>(router_, state_, options);
    port_ = server_->start();
  }
  void TearDown() override {
    if (producer_.joinable()) producer_.join();  // it posts to the server
    server_.reset();
  }

  Router router_;
  ServerState state_;
  std::unique_ptr<HttpServer> server_;
  uint16_t port_ = 0;
  std::promise<void> disconnected_;
  std::thread producer_;  // /stream's
};

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  start();
  RawClient c(port_);
  for (int i = 0; i < 3; ++i) {
    c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"hello":"world"})");
    EXPECT_TRUE(RawClient::has_header(r.head, "connection: keep-alive"));
  }
  c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nabcde");
  EXPECT_EQ(c.read_response().body, "abcde");
  EXPECT_EQ(state_.http_requests, 4u);
}

TEST_F(HttpServerTest, UnknownRouteIs404AndConnectionStaysUsable) {
  start();
  RawClient c(port_);
  c.send("GET /nope HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 404);
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 200);
}

TEST_F(HttpServerTest, BodyOverTheLimitIs413) {
  HttpOptions o;
  o.max_body_bytes = 1000;
  start(o);
  {  // announced by Content-Length: refused before the body is sent
    RawClient c(port_);
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 413);
    EXPECT_NE(r.body.find("\"error\""), std::string::npos);
    EXPECT_TRUE(c.closed_by_server());
  }
  {  // chunked upload that grows past the limit
    RawClient c(port_);
    std::string req = "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 3; ++i) req += "1f4\r\n" + std::string(500, 'a') + "\r\n";
    c.send(req + "0\r\n\r\n");
    EXPECT_EQ(c.read_response().status, 413);
  }
  RawClient ok(port_);
  ok.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + std::string(1000, 'b'));
  EXPECT_EQ(ok.read_response().status, 200);
}

TEST_F(HttpServerTest, MalformedRequestIs400) {
  start();
  RawClient c(port_);
  c.send("NOT HTTP AT ALL\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 400);
}

// A body whose length a proxy could read otherwise is refused and the
// connection closed, so the bytes after the headers never run as a request.
TEST_F(HttpServerTest, OnlyPlainChunkedTransferEncodingIsAccepted) {
  start();
  const std::string smuggled = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::string> heads = {
      "Transfer-Encoding: chunked, identity\r\n", "Transfer-Encoding: xchunked\r\n",
      "Transfer-Encoding: gzip, chunked\r\n",     "Transfer-Encoding: identity\r\n",
      "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
      "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n"};
  for (const std::string& head : heads) {
    RawClient c(port_);
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\n" + head + "\r\n" + smuggled);
    EXPECT_EQ(c.read_response().status, 400) << head;
    EXPECT_TRUE(c.closed_by_server()) << head;
  }
  RawClient http10(port_);
  http10.send("POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(http10.read_response().status, 400);
  EXPECT_EQ(state_.http_requests, heads.size() + 1);  // no smuggled GET was answered
  RawClient ok(port_);
  ok.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:  Chunked \r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  EXPECT_EQ(ok.read_response().body, "abc");
}

TEST_F(HttpServerTest, HeadAnswersWithTheHeadersOnly) {
  start();
  RawClient c(port_);
  c.send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string head = c.read_until("\r\n\r\n");
  EXPECT_EQ(head.substr(0, 12), "HTTP/1.1 200");
  EXPECT_TRUE(RawClient::has_header(head, "content-length: 17"));
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");  // the HEAD response had no body: the next one follows it
  EXPECT_EQ(c.read_response().body, R"({"hello":"world"})");
}

TEST_F(HttpServerTest, ExpectContinueGetsA100First) {
  start();
  RawClient c(port_);
  c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(c.read_until("\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("xyz");
  EXPECT_EQ(c.read_response().body, "xyz");
}

TEST_F(HttpServerTest, StreamsChunksPostedFromAnotherThread) {
  start();
  RawClient c(port_);
  c.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  const auto r = c.read_response();
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(RawClient::has_header(r.head, "transfer-encoding: chunked"));
  EXPECT_EQ(r.body, "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");  // still keep-alive after a stream
  EXPECT_EQ(c.read_response().status, 200);
}

TEST_F(HttpServerTest, Http10StreamEndsWithTheConnection) {
  start();
  RawClient c(port_);
  c.send("GET /stream HTTP/1.0\r\n\r\n");
  const std::string head = c.read_until("\r\n\r\n");
  EXPECT_TRUE(RawClient::has_header(head, "connection: close"));
  EXPECT_FALSE(RawClient::has_header(head, "transfer-encoding"));
  EXPECT_EQ(c.read_until("data: 4\n\n").substr(0, 9), "data: 0\n\n");
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(HttpServerTest, ClientDisconnectMidStreamIsReported) {
  start();
  auto gone = disconnected_.get_future();
  {
    RawClient c(port_);
    c.send("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n");
    c.read_until("started\r\n");
    EXPECT_EQ(state_.busy, 1);
  }  // the client closes its socket
  ASSERT_EQ(gone.wait_for(5s), std::future_status::ready);
  for (int i = 0; i < 200 && state_.busy != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(state_.busy, 0);
}

TEST_F(HttpServerTest, IdleConnectionsAreCheapAndTimeOut) {
  HttpOptions o;
  o.idle_timeout = 1s;
  start(o);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(std::make_unique<RawClient>(port_));
  for (int i = 0; i < 200 && state_.connections != 200; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(state_.connections, 200);
  RawClient c(port_);
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 200);
  EXPECT_TRUE(idle.front()->closed_by_server());  // after the 1 s idle timeout
  for (int i = 0; i < 500 && state_.connections != 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(state_.connections, 0);
}

// Waits until the server has `n` connections open.
void await_connections(const ServerState& state, int64_t n) {
  for (int i = 0; i < 500 && state.connections != n; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(state.connections, n);
}

TEST_F(HttpServerTest, AtTheConnectionCapTheLongestIdleMakesRoomElseNewOnesAreRefused) {
  router_.add("GET", "/wait", Access::Public, [](const ExchangePtr& ex, const PathParams&) {  // busy until the client leaves
    ex->begin_stream(HttpResponse{200, "text/plain", {}, ""});
    ex->send_chunk("started");
    ex->on_disconnect([ex] { ex->end_stream(); });
  });
  HttpOptions o;
  o.max_connections = 3;
  start(o);
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 3; ++i) {
    idle.push_back(std::make_unique<RawClient>(port_));
    await_connections(state_, i + 1);
  }
  {  // a new connection takes the place of the longest-idle one
    RawClient c(port_);
    c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(c.read_response().status, 200);
    EXPECT_TRUE(idle[0]->closed_by_server());
    EXPECT_EQ(state_.connections_evicted, 1u);
  }
  idle.clear();
  await_connections(state_, 0);
  std::vector<std::unique_ptr<RawClient>> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(std::make_unique<RawClient>(port_));
    busy.back()->send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n");
    busy.back()->read_until("started\r\n");
  }
  RawClient refused(port_);  // nothing idle to evict
  EXPECT_TRUE(refused.closed_by_server());
  EXPECT_EQ(state_.connections_refused, 1u);
  EXPECT_EQ(state_.connections_evicted, 1u);
  busy.pop_back();  // a place frees up
  await_connections(state_, 2);
  RawClient c(port_);
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 200);
  EXPECT_EQ(state_.max_connections, 3);
  busy.clear();  // their exchanges end (and free themselves) on the disconnect
  await_connections(state_, 1);
}

TEST_F(HttpServerTest, PerAddressCapRefusesThatAddressOnlyAndExemptsUncappedPeers) {
  HttpOptions o;
  o.max_connections_per_ip = 2;
  o.uncapped_peer = [](const std::string& address) { return address == "127.0.0.3"; };
  start(o);
  RawClient a1(port_, "127.0.0.2"), a2(port_, "127.0.0.2");
  await_connections(state_, 2);
  RawClient a3(port_, "127.0.0.2");
  EXPECT_TRUE(a3.closed_by_server());
  EXPECT_EQ(state_.connections_refused_per_ip, 1u);
  RawClient p1(port_, "127.0.0.3"), p2(port_, "127.0.0.3"), p3(port_, "127.0.0.3");
  await_connections(state_, 5);
  RawClient c(port_, "127.0.0.1");
  c.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 200);
  EXPECT_EQ(state_.connections_refused_per_ip, 1u);
}

TEST_F(HttpServerTest, StopAcceptingRefusesNewConnections) {
  start();
  server_->stop_accepting();
  std::this_thread::sleep_for(50ms);
  EXPECT_THROW(RawClient c(port_), boost::system::system_error);
}

}  // namespace
}  // namespace parley::serve
