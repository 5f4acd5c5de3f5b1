#include "serve/transport/http_session.h"

#include <sys/socket.h>

#include <cerrno>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <deque>
#include <optional>

#include "serve/transport/api_error.h"
#include "serve/transport/request_id.h"

namespace parley::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr size_t kHeaderLimit = 16 * 1024;
constexpr auto kLingerTimeout = std::chrono::seconds(2);

class HttpExchange;

// RFC 9112 §6.3: a request body is framed by Content-Length, or by a
// Transfer-Encoding that is exactly "chunked" in HTTP/1.1. Anything else
// ("chunked, identity", "xchunked", "gzip, chunked", several headers, HTTP/1.0)
// is a length that a proxy in front may read differently (request smuggling):
// such a request is refused and its connection closed.
bool framing_is_plain(const http::request<http::string_body>& req) {
  const auto encodings = req.equal_range(http::field::transfer_encoding);
  if (encodings.first == encodings.second) return true;
  if (std::next(encodings.first) != encodings.second || req.version() < 11 ||
      req.find(http::field::content_length) != req.end())
    return false;
  std::string_view value = encodings.first->value();
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return beast::iequals(value, "chunked");
}

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(tcp::socket socket, ConnectionSlotPtr slot, const SessionEnv& env)
      : stream_(std::move(socket)), env_(env), slot_(std::move(slot)) {
    ++env_.state.connections;
  }
  ~HttpSession() { --env_.state.connections; }
  void run() { read_header(); }

 private:
  friend class HttpExchange;

  void read_header();
  void on_header(beast::error_code ec);
  void evict();
  void read_body();
  void on_body(beast::error_code ec);
  void handle(http::request<http::string_body> req);
  void refuse(HttpResponse response);  // answer, then close
  void refuse_http(int status, const std::string& message) {
    refuse(error_response(ApiError(status, message, "invalid_request_error", "", "invalid_http")));
  }
  // A body over the limit, in the error shape of the route it was sent to.
  void refuse_too_large() {
    HttpRequest r;
    r.target = std::string(parser_->get().target());
    refuse(env_.router.render_error(r.path(), request_too_large(env_.options.max_body_bytes)));
  }
  void begin_exchange(const std::shared_ptr<HttpExchange>& exchange) {
    ++env_.state.busy;
    response_done_ = false;
    in_exchange_ = true;
    exchange_ = exchange;
  }

  void write(std::string data);
  void do_write();
  void on_write(beast::error_code ec, size_t bytes);
  void exchange_done(bool keep_alive);
  void after_response();

  void watch_disconnect();
  void on_client_gone();
  void linger_close();
  void on_linger_read(beast::error_code ec);

  beast::tcp_stream stream_;
  SessionEnv env_;
  ConnectionSlotPtr slot_;  // null once a WebSocket took the connection over
  bool awaiting_header_ = false;  // idle: evictable
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  // The request being answered. Weak: the route holds the exchange (and so
  // this session) while it works; a strong pointer here would be a cycle.
  std::weak_ptr<HttpExchange> exchange_;
  bool in_exchange_ = false;
  std::deque<std::string> outbox_, writing_;
  size_t pending_ = 0;          // bytes in outbox_ and writing_
  bool response_done_ = false;  // the whole response is queued
  bool keep_alive_ = false;
  uint64_t watch_id_ = 0;       // invalidates stale disconnect watches
  bool closed_ = false;
};

class HttpExchange : public Exchange {
 public:
  HttpExchange(std::shared_ptr<HttpSession> session, HttpRequest request, unsigned version, bool keep_alive)
      : session_(std::move(session)), request_(std::move(request)), version_(version), keep_alive_(keep_alive) {
    set_request_id(request_id_for(request_.header("x-request-id")));
  }

  const HttpRequest& request() const override { return request_; }
  void respond(HttpResponse r) override;
  void begin_stream(HttpResponse head) override;
  void send_chunk(std::string data) override;
  void end_stream() override;
  void post(std::function<void()> f) override { net::post(session_->stream_.get_executor(), std::move(f)); }
  void on_disconnect(std::function<void()> f) override { on_disconnect_ = std::move(f); }
  size_t pending_bytes() const override { return session_->pending_; }

  void client_gone() {
    gone_ = true;
    if (!done_ && on_disconnect_) on_disconnect_();
    on_disconnect_ = nullptr;
    finish();
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::string head(const HttpResponse& r, bool streaming);
  bool chunked() const { return version_ >= 11; }
  void count(int status);
  double ms_since_start() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - started_).count();
  }
  void finish();  // reports the response once (access log, metrics)

  std::shared_ptr<HttpSession> session_;
  HttpRequest request_;
  unsigned version_;
  bool keep_alive_;
  bool streaming_ = false, done_ = false, gone_ = false, reported_ = false;
  std::function<void()> on_disconnect_;
  Clock::time_point started_ = Clock::now();
  ResponseRecord record_;
};

// --- HttpExchange ---

std::string HttpExchange::head(const HttpResponse& r, bool streaming) {
  // While draining, and for streams to HTTP/1.0 clients (no chunking: the end
  // of the body is the end of the connection), the connection closes after.
  keep_alive_ = keep_alive_ && !session_->env_.state.draining && (!streaming || chunked());
  std::string h = "HTTP/1.1 " + std::to_string(r.status) + " " +
                  std::string(http::obsolete_reason(http::int_to_status(unsigned(r.status)))) + "\r\n";
  h += "Server: parley\r\nContent-Type: " + r.content_type + "\r\n";
  if (!streaming) h += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  else if (chunked()) h += "Transfer-Encoding: chunked\r\n";
  h += keep_alive_ ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  h += "X-Request-Id: " + request_id() + "\r\n";
  for (const auto& [k, v] : r.headers) h += k + ": " + v + "\r\n";
  for (const auto& [k, v] : extra_headers()) h += k + ": " + v + "\r\n";
  return h + "\r\n";
}

void HttpExchange::count(int status) {
  record_.status = status;
  ++session_->env_.state.http_requests;
  if (status >= 400) ++session_->env_.state.http_errors;
}

void HttpExchange::finish() {
  if (reported_ || !answered_) return;
  reported_ = true;
  record_.duration_ms = ms_since_start();
  record_.client_gone = gone_ && !done_;
  if (session_->env_.observer) session_->env_.observer(*this, record_);
}

void HttpExchange::respond(HttpResponse r) {
  if (answered_) return;
  answered_ = done_ = true;
  count(r.status);
  if (!gone_) {
    std::string out = head(r, false);
    if (request_.method != "HEAD") out += r.body;
    record_.bytes = request_.method != "HEAD" ? r.body.size() : 0;
    session_->write(std::move(out));
    session_->exchange_done(keep_alive_);
  }
  finish();
}

void HttpExchange::begin_stream(HttpResponse head_only) {
  if (answered_) return;
  answered_ = streaming_ = true;
  count(head_only.status);
  if (!gone_) session_->write(head(head_only, true));
}

void HttpExchange::send_chunk(std::string data) {
  if (!streaming_ || done_ || gone_ || data.empty()) return;
  if (record_.first_byte_ms < 0) record_.first_byte_ms = ms_since_start();
  record_.bytes += data.size();
  if (!chunked()) return session_->write(std::move(data));
  char size[20];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  session_->write(size + std::move(data) + "\r\n");
}

void HttpExchange::end_stream() {
  if (!streaming_ || done_) return;
  done_ = true;
  if (!gone_) {
    if (chunked()) session_->write("0\r\n\r\n");
    session_->exchange_done(keep_alive_);
  }
  finish();
}

// --- HttpSession: reading ---

void HttpSession::read_header() {
  auto evict = [weak = weak_from_this(), executor = stream_.get_executor()] {
    net::post(executor, [weak] {
      if (auto self = weak.lock()) self->evict();
    });
  };
  if (!slot_->idle(std::move(evict))) return linger_close();
  awaiting_header_ = true;
  parser_.emplace();
  parser_->header_limit(kHeaderLimit);
  parser_->body_limit(env_.options.max_body_bytes);
  stream_.expires_after(env_.options.idle_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
}

void HttpSession::on_header(beast::error_code ec) {
  if (closed_) return;
  awaiting_header_ = false;
  slot_->busy();
  if (ec == http::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
      ec == net::error::connection_reset || ec == net::error::eof)
    return linger_close();
  if (ec == http::error::header_limit) return refuse_http(431, "The request headers are too large");
  // A Content-Length over the limit fails here, before the body is sent.
  if (ec == http::error::body_limit) return refuse_too_large();
  if (ec) return refuse_http(400, "Malformed HTTP request: " + ec.message());
  if (!framing_is_plain(parser_->get()))
    return refuse_http(400, "Transfer-Encoding must be exactly 'chunked' (HTTP/1.1, without Content-Length)");
  if (beast::iequals(parser_->get()[http::field::expect], "100-continue") && !parser_->is_done())
    write("HTTP/1.1 100 Continue\r\n\r\n");
  read_body();
}

void HttpSession::read_body() {
  if (parser_->is_done()) return on_body({});
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->on_body(ec); });
}

void HttpSession::on_body(beast::error_code ec) {
  if (ec == http::error::body_limit) return refuse_too_large();
  if (ec == beast::error::timeout || ec == net::error::eof || ec == net::error::connection_reset ||
      ec == http::error::partial_message)
    return linger_close();
  if (ec) return refuse_http(400, "Malformed HTTP request: " + ec.message());
  stream_.expires_never();
  handle(parser_->release());
}

// A new connection needs the place: closed at once (no lingering, which would
// keep the descriptor), unless a request header arrived in the meantime.
void HttpSession::evict() {
  if (!awaiting_header_ || closed_) return;
  closed_ = true;
  stream_.close();
}

void HttpSession::handle(http::request<http::string_body> req) {
  if (env_.upgrade && beast::websocket::is_upgrade(req) && req.target().starts_with("/v1/ws") &&
      (req.target().size() == 6 || req.target()[6] == '?')) {
    if (env_.gate) {
      HttpRequest request = to_request(req, stream_.socket());
      if (auto refused = env_.gate(request)) {
        auto exchange = std::make_shared<HttpExchange>(shared_from_this(), std::move(request), req.version(), false);
        begin_exchange(exchange);
        return exchange->respond(std::move(*refused));
      }
    }
    // The WebSocket session takes the connection over; this one ends here.
    return env_.upgrade(std::move(stream_), std::move(req), std::move(slot_));
  }
  auto exchange = std::make_shared<HttpExchange>(shared_from_this(), to_request(req, stream_.socket()), req.version(),
                                                req.keep_alive());
  begin_exchange(exchange);
  if (buffer_.size() == 0) watch_disconnect();  // else a pipelined request is waiting: no EOF to see
  env_.router.dispatch(exchange);
}

void HttpSession::refuse(HttpResponse response) {
  HttpRequest r;
  r.method = "?";
  auto exchange = std::make_shared<HttpExchange>(shared_from_this(), std::move(r), 11, false);
  begin_exchange(exchange);
  exchange->respond(std::move(response));
}

// --- HttpSession: writing ---

void HttpSession::write(std::string data) {
  if (closed_) return;
  pending_ += data.size();
  outbox_.push_back(std::move(data));
  if (writing_.empty()) do_write();
}

void HttpSession::do_write() {
  // Everything queued goes out in one gather write (tokens that arrived
  // while the previous write was in flight are coalesced).
  writing_.swap(outbox_);
  std::vector<net::const_buffer> buffers;
  for (const std::string& s : writing_) buffers.emplace_back(net::buffer(s));
  stream_.expires_after(env_.options.idle_timeout);
  net::async_write(stream_, buffers, [self = shared_from_this()](beast::error_code ec, size_t n) {
    self->on_write(ec, n);
  });
}

void HttpSession::on_write(beast::error_code ec, size_t bytes) {
  pending_ -= std::min(pending_, bytes);
  writing_.clear();
  if (ec) return on_client_gone();
  if (!outbox_.empty()) return do_write();
  if (response_done_) after_response();
}

void HttpSession::exchange_done(bool keep_alive) {
  response_done_ = true;
  keep_alive_ = keep_alive;
  if (writing_.empty() && outbox_.empty()) after_response();
}

void HttpSession::after_response() {
  response_done_ = false;
  in_exchange_ = false;
  exchange_.reset();
  --env_.state.busy;
  ++watch_id_;
  beast::error_code ignored;
  stream_.socket().cancel(ignored);  // the disconnect watch; nothing else is pending now
  if (keep_alive_ && !env_.state.draining) return read_header();
  linger_close();
}

// --- HttpSession: disconnects and closing ---

// A readable socket while a response is being produced means the client sent
// EOF (it went away) or data (a pipelined request, read later).
// Readiness alone is no proof of EOF: the reactor may report a socket whose
// request was just read as readable again. Only a peek that returns 0 bytes
// (or an error) means the client left; "would block" re-arms the watch.
void HttpSession::watch_disconnect() {
  stream_.socket().async_wait(tcp::socket::wait_read,
                              [self = shared_from_this(), id = watch_id_](beast::error_code ec) {
                                if (id != self->watch_id_ || !self->in_exchange_) return;
                                if (ec) return self->on_client_gone();
                                char byte;
                                const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1,
                                                         MSG_PEEK | MSG_DONTWAIT);
                                if (n > 0) return;  // a pipelined request, read after this response
                                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
                                  return self->watch_disconnect();
                                self->on_client_gone();
                              });
}

void HttpSession::on_client_gone() {
  if (closed_) return;
  closed_ = true;
  ++watch_id_;
  if (in_exchange_) {
    in_exchange_ = false;
    --env_.state.busy;
    if (auto ex = exchange_.lock()) ex->client_gone();
  }
  outbox_.clear();
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

// Half-closes and reads what the client still sends for a moment, so that it
// gets our last response instead of a reset (e.g. after a 413 mid-upload).
void HttpSession::linger_close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream_.expires_after(kLingerTimeout);
  buffer_.clear();
  on_linger_read({});
}

void HttpSession::on_linger_read(beast::error_code ec) {
  if (ec) {
    stream_.close();
    return;
  }
  buffer_.clear();
  stream_.async_read_some(buffer_.prepare(16 * 1024), [self = shared_from_this()](beast::error_code e, size_t) {
    self->on_linger_read(e);
  });
}

}  // namespace

HttpRequest to_request(const http::request<http::string_body>& req, const tcp::socket& socket) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  for (const auto& f : req) {
    std::string name(f.name_string());
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    r.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  r.body = req.body();
  beast::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  if (!ec) r.remote_address = ep.address().to_string();
  return r;
}

void start_http_session(tcp::socket socket, ConnectionSlotPtr slot, const SessionEnv& env) {
  std::make_shared<HttpSession>(std::move(socket), std::move(slot), env)->run();
}

}  // namespace parley::serve
