#include "serve/transport/http_server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "serve/transport/http_session.h"
#include "util/error.h"
#include "util/fd_limit.h"

namespace parley::serve {

namespace net = boost::asio;
using tcp = net::ip::tcp;

HttpServer::HttpServer(const Router& router, ServerState& state, HttpOptions options, WebSocketUpgrade upgrade)
    : router_(router), state_(state), options_(std::move(options)), upgrade_(std::move(upgrade)),
      io_(options_.io_threads), acceptor_(net::make_strand(io_)), accept_retry_(acceptor_.get_executor()) {}

HttpServer::~HttpServer() { stop(); }

uint16_t HttpServer::start() {
  // Thousands of idle keep-alive clients each hold a descriptor; the cap keeps some for the rest.
  const uint64_t fd_limit = raise_fd_limit();
  const size_t total = options_.max_connections ? options_.max_connections : default_max_connections(fd_limit);
  limiter_ = std::make_unique<ConnectionLimiter>(ConnectionCaps{total, options_.max_connections_per_ip});
  state_.max_connections = int64_t(total);
  boost::system::error_code ec;
  const auto address = net::ip::make_address(options_.host, ec);
  if (ec) throw Error("serve: '" + options_.host + "' is not an IP address");
  const tcp::endpoint endpoint(address, options_.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw Error("serve: cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " + ec.message());
  accept();
  for (int i = 0; i < std::max(1, options_.io_threads); ++i) threads_.emplace_back([this] { io_.run(); });
  return acceptor_.local_endpoint().port();
}

void HttpServer::accept() {
  // The acceptor runs on a strand of its own (stop_accepting() posts there);
  // each connection gets its own strand: its handlers never run concurrently,
  // whichever I/O thread picks them up.
  acceptor_.async_accept(net::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {  // out of descriptors or memory: wait a moment instead of spinning
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](boost::system::error_code) { accept(); });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

// Refused connections are closed at once, before anything is read.
void HttpServer::admit(tcp::socket socket) {
  ConnectionLimiter::Admission admission = limiter_->admit(address_group_of(socket));
  switch (admission.verdict) {
    case ConnectionLimiter::Verdict::Admitted: break;
    case ConnectionLimiter::Verdict::AdmittedByEviction: ++state_.connections_evicted; break;
    case ConnectionLimiter::Verdict::RefusedFull: ++state_.connections_refused; return;
    case ConnectionLimiter::Verdict::RefusedAddress: ++state_.connections_refused_per_ip; return;
  }
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);  // tokens are small writes: send them at once
  start_http_session(std::move(socket), std::move(admission.slot),
                     SessionEnv{router_, state_, options_, upgrade_, observer_, gate_});
}

// "" (no per-address count) without that cap, for an exempt peer, or one whose address is gone already.
std::string HttpServer::address_group_of(const tcp::socket& socket) const {
  if (!options_.max_connections_per_ip) return "";
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec || (options_.uncapped_peer && options_.uncapped_peer(peer.address().to_string()))) return "";
  return address_group(peer.address());
}

void HttpServer::stop_accepting() {
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
}

void HttpServer::stop() {
  io_.stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

}  // namespace parley::serve
