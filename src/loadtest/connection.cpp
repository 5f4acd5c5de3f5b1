#include "loadtest/connection.h"

#include <array>
#include <limits>

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace parley::loadtest {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::None: return "none";
    case ErrorKind::Connect: return "connect";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Http: return "http";
    case ErrorKind::Protocol: return "protocol";
    case ErrorKind::Io: return "io";
  }
  return "unknown";
}

asio::awaitable<unsigned> Connection::exchange(const http::request<http::string_body>& request, const BodySink& sink,
                                               Clock::time_point deadline) {
  for (int attempt = 0;; ++attempt) {
    const bool reused = open_;
    if (!open_) co_await connect(deadline);
    stream_.expires_at(deadline);
    bool got_header = false;
    beast::error_code ec;
    const unsigned status = co_await round_trip(request, sink, got_header, ec);
    if (!ec) co_return status;
    close();
    // An idle keep-alive connection the server closed fails before any answer.
    if (reused && !got_header && attempt == 0 && ec != beast::error::timeout) continue;
    throw TransportError(ec == beast::error::timeout ? ErrorKind::Timeout : ErrorKind::Io, ec.message());
  }
}

asio::awaitable<void> Connection::connect(Clock::time_point deadline) {
  beast::error_code ec;
  stream_.expires_at(deadline);
  co_await stream_.async_connect(endpoints_, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) throw TransportError(ec == beast::error::timeout ? ErrorKind::Timeout : ErrorKind::Connect, ec.message());
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
  open_ = true;
}

asio::awaitable<unsigned> Connection::round_trip(const http::request<http::string_body>& request, const BodySink& sink,
                                                 bool& got_header, beast::error_code& ec) {
  co_await http::async_write(stream_, request, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return 0;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  co_await http::async_read_header(stream_, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return 0;
  got_header = true;
  const unsigned status = parser.get().result_int();
  std::array<char, 16384> piece;
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    // read_some returns as soon as some body arrived, so every chunk is timed when it lands.
    co_await http::async_read_some(stream_, buffer_, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) ec = {};  // the piece is full: hand it over and go on
    if (ec) co_return 0;
    sink(status, std::string_view(piece.data(), piece.size() - parser.get().body().size));
  }
  if (!parser.get().keep_alive()) close();
  co_return status;
}

void Connection::close() {
  beast::error_code ignored;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream_.close();
  buffer_.clear();
  open_ = false;
}

}  // namespace parley::loadtest
