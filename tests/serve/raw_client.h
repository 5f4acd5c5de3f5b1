#pragma once
// A blocking HTTP/1.1 client on a raw socket, so tests control every byte.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>
#include <cstdint>
#include <string>

namespace parley::serve::test {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;  // de-chunked
};

class RawClient {
 public:
  // `source`: the client's own address (any of 127.0.0.0/8 is loopback).
  explicit RawClient(uint16_t port, const char* source = "127.0.0.1") : socket_(io_) {
    socket_.open(boost::asio::ip::tcp::v4());
    socket_.bind({boost::asio::ip::make_address(source), 0});
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  void send(const std::string& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  void close() { socket_.close(); }

  std::string read_until(const std::string& marker) {
    const size_t n = boost::asio::read_until(socket_, boost::asio::dynamic_buffer(buf_), marker);
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }

  RawResponse read_response() {
    RawResponse r;
    r.head = read_until("\r\n\r\n");
    r.status = std::stoi(r.head.substr(9, 3));
    if (has_header(r.head, "transfer-encoding: chunked")) {
      for (;;) {
        const size_t size = std::stoul(read_until("\r\n"), nullptr, 16);
        r.body += read_exact(size + 2).substr(0, size);
        if (size == 0) break;
      }
    } else if (const size_t at = lower(r.head).find("content-length: "); at != std::string::npos) {
      r.body = read_exact(std::stoul(r.head.substr(at + 16)));
    }
    return r;
  }

  // True when the server closed the connection (EOF or reset).
  bool closed_by_server() {
    boost::system::error_code ec;
    char c;
    if (!buf_.empty()) return false;
    socket_.read_some(boost::asio::buffer(&c, 1), ec);
    return bool(ec);
  }

  static bool has_header(const std::string& head, const std::string& lower_line) {
    return lower(head).find(lower_line) != std::string::npos;
  }

 private:
  std::string read_exact(size_t n) {
    if (buf_.size() < n) boost::asio::read(socket_, boost::asio::dynamic_buffer(buf_), boost::asio::transfer_at_least(n - buf_.size()));
    std::string out = buf_.substr(0, n);
    buf_.erase(0, n);
    return out;
  }
  static std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::string buf_;
};

}  // namespace parley::serve::test
