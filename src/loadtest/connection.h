#pragma once
// One keep-alive HTTP/1.1 client connection (Boost.Beast, C++20 coroutines).
// exchange() hands the response body to a callback piece by piece as it
// arrives, which is what lets the load test time every streamed chunk.
#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/string_body.hpp>

namespace parley::loadtest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Clock = std::chrono::steady_clock;
using Endpoints = asio::ip::tcp::resolver::results_type;

// How a request failed. Http: any status but 200; Protocol: a response that
// is not what the API promises (bad JSON, an error event, no [DONE]); Io: the
// connection broke after it was made.
enum class ErrorKind { None, Connect, Timeout, Http, Protocol, Io };
const char* error_kind_name(ErrorKind kind);

struct TransportError : std::runtime_error {
  TransportError(ErrorKind k, const std::string& what) : std::runtime_error(what), kind(k) {}
  ErrorKind kind;
};

// Receives the status and one piece of the (de-chunked) body.
using BodySink = std::function<void(unsigned status, std::string_view bytes)>;

class Connection {
 public:
  Connection(asio::any_io_executor executor, const Endpoints& endpoints) : stream_(executor), endpoints_(endpoints) {}

  // Connects if needed, sends `request` and streams the answer to `sink`;
  // returns the status. Every step must end before `deadline`. A reused
  // connection that the server had closed is reopened once. Throws
  // TransportError.
  asio::awaitable<unsigned> exchange(const http::request<http::string_body>& request, const BodySink& sink,
                                     Clock::time_point deadline);

 private:
  asio::awaitable<void> connect(Clock::time_point deadline);
  asio::awaitable<unsigned> round_trip(const http::request<http::string_body>& request, const BodySink& sink,
                                       bool& got_header, beast::error_code& ec);
  void close();

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  const Endpoints& endpoints_;
  bool open_ = false;
};

}  // namespace parley::loadtest
