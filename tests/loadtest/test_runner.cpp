// run_load against a small real HTTP server (Beast, one thread per
// connection) whose answers the test controls: streamed chunks at known
// gaps, errors, a server that never answers, closed connections.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "loadtest/report.h"
#include "loadtest/runner.h"
#include "thread_server.h"
#include "util/error.h"

using namespace parley::loadtest;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// The "model" field of a request picks the behaviour: "stream" (3 chunks
// 30 ms apart, usage, [DONE]), "close" (the same, then Connection: close),
// "error500", "silent" (never answers).
class TestServer : public parley::loadtest::testing::ThreadServer {
 public:
  TestServer() { start(); }
  ~TestServer() override { stop(); }

 private:
  void serve(tcp::socket s, int) override {
    namespace http = boost::beast::http;
    boost::beast::flat_buffer buf;
    for (;;) {
      http::request<http::string_body> req;
      boost::system::error_code ec;
      http::read(s, buf, req, ec);
      if (ec) return;
      if (req.target() == "/v1/models") {
        respond(s, 200, R"({"object":"list","data":[{"id":"stream","object":"model"}]})", true);
        continue;
      }
      const std::string model = nlohmann::json::parse(req.body()).value("model", "");
      if (model == "silent") {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));
        return;
      }
      if (model == "error500") {
        respond(s, 500, R"({"error":{"message":"boom","type":"server_error"}})", true);
        continue;
      }
      if (!stream(s, model != "close") || model == "close") return;
    }
  }

  static void respond(tcp::socket& s, unsigned status, const std::string& body, bool keep_alive) {
    namespace http = boost::beast::http;
    http::response<http::string_body> res{http::int_to_status(status), 11};
    res.set(http::field::content_type, "application/json");
    res.keep_alive(keep_alive);
    res.body() = body;
    res.prepare_payload();
    boost::system::error_code ec;
    http::write(s, res, ec);
  }

  // A chunked SSE answer written piece by piece, as a server streams.
  static bool stream(tcp::socket& s, bool keep_alive) {
    std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n";
    head += keep_alive ? "\r\n" : "Connection: close\r\n\r\n";
    boost::system::error_code ec;
    net::write(s, net::buffer(head), ec);
    auto chunk = [&](const std::string& data) {
      const std::string event = "data: " + data + "\n\n";
      char size[16];
      std::snprintf(size, sizeof size, "%zx\r\n", event.size());
      net::write(s, net::buffer(size + event + "\r\n"), ec);
    };
    for (const char* word : {"Once", " upon", " a"}) {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      chunk(std::string(R"({"choices":[{"index":0,"delta":{"content":")") + word + R"("}}]})");
    }
    chunk(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}})");
    chunk("[DONE]");
    net::write(s, net::buffer(std::string("0\r\n\r\n")), ec);
    return !ec;
  }

};

LoadOptions options(const TestServer& server, const std::string& model, int32_t requests) {
  LoadOptions o;
  o.url = server.url();
  o.model = model;
  o.requests = requests;
  o.prompt_tokens = {4, 4};
  o.max_tokens = {3, 3};
  return o;
}

}  // namespace

TEST(Runner, ClosedLoopTimesChunksOnKeepAliveConnections) {
  TestServer server;
  LoadOptions o = options(server, "", 8);  // the model from GET /v1/models
  o.concurrency = 2;
  const auto j = make_report(o, run_load(o));
  EXPECT_EQ(j["config"]["model"], "stream");
  EXPECT_EQ(j["requests"]["succeeded"], 8) << j.dump();
  EXPECT_EQ(j["output_tokens"], 24);
  EXPECT_EQ(j["prompt_tokens"], 40);
  EXPECT_EQ(j["itl_ms"]["count"], 16);  // two gaps per answer
  // Chunks written 30 ms apart are timed apart (not bunched at the end);
  // a loaded machine may delay one and so shorten the next gap.
  EXPECT_GE(j["itl_ms"]["min"].get<double>(), 5.0);
  EXPECT_GE(j["itl_ms"]["mean"].get<double>(), 20.0);
  EXPECT_LT(j["itl_ms"]["p50"].get<double>(), 200.0);
  EXPECT_GE(j["ttft_ms"]["min"].get<double>(), 25.0);
  EXPECT_GE(j["e2e_ms"]["min"].get<double>(), 85.0);
  EXPECT_EQ(server.accepted(), 3);  // the model lookup's, then one per user, kept alive
}

TEST(Runner, ReconnectsWhenTheServerCloses) {
  TestServer server;
  LoadOptions o = options(server, "close", 3);
  const auto j = make_report(o, run_load(o));
  EXPECT_EQ(j["requests"]["succeeded"], 3) << j.dump();
  EXPECT_EQ(server.accepted(), 3);
}

TEST(Runner, OpenLoop) {
  TestServer server;
  LoadOptions o = options(server, "stream", 6);
  o.rate = 50;
  const auto j = make_report(o, run_load(o));
  EXPECT_EQ(j["config"]["mode"], "open");
  EXPECT_EQ(j["requests"]["succeeded"], 6) << j.dump();
  EXPECT_LE(server.accepted(), 6);
}

TEST(Runner, ErrorsByKindAndStatus) {
  TestServer server;
  LoadOptions o = options(server, "error500", 3);
  auto j = make_report(o, run_load(o));
  EXPECT_EQ(j["requests"]["failed"], 3);
  EXPECT_EQ(j["errors"]["by_status"]["500"], 3);
  EXPECT_EQ(j["errors"]["by_kind"]["http"], 3);

  o = options(server, "silent", 2);
  o.timeout_s = 0.1;
  j = make_report(o, run_load(o));
  EXPECT_EQ(j["errors"]["by_kind"]["timeout"], 2) << j.dump();

  o = options(server, "stream", 2);
  o.url = "http://127.0.0.1:1";
  j = make_report(o, run_load(o));
  EXPECT_EQ(j["errors"]["by_kind"]["connect"], 2) << j.dump();
  o.model = "";
  EXPECT_THROW(run_load(o), parley::Error);  // no model to ask for
}
