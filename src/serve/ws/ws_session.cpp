#include "serve/ws/ws_session.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>
#include <optional>

#include "serve/transport/api_error.h"
#include "serve/transport/http_session.h"
#include "serve/ws/ws_conversation.h"

namespace parley::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;

class WsSession : public WsChannel, public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(ApiContext& ctx, ModelDirectory* models, const HttpOptions& options, beast::tcp_stream stream,
            ConnectionSlotPtr slot)
      : ctx_(ctx), models_(models), options_(options), ws_(std::move(stream)), slot_(std::move(slot)), idle_timer_(ws_.get_executor()) {
    ++ctx_.state.connections;
    ++ctx_.state.websockets;
    slot_->leave_on_drain();
  }
  ~WsSession() override {
    --ctx_.state.connections;
    --ctx_.state.websockets;
  }

  void run(http::request<http::string_body> req) {
    websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = options_.idle_timeout;  // a ping after half of it, closed after all of it
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(0);  // read() enforces --max-body-bytes, to answer with an error before closing
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "parley"); }));
    upgrade_ = to_request(req, ws_.next_layer().socket());
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->conversation_ = std::make_shared<WsConversation>(self->ctx_, self->models_, self, std::move(self->upgrade_));
      self->wait_for_request();
      self->read();
    });
  }

  void send(std::string text) override {
    if (closed_ || closing_) return;  // the close frame goes last
    pending_ += text.size();
    outbox_.push_back(std::move(text));
    if (outbox_.size() == 1) write();
  }
  void post(std::function<void()> f) override { net::post(ws_.get_executor(), std::move(f)); }
  size_t pending_bytes() const override { return pending_; }
  void answering(bool running) override {
    answering_ = running;
    if (!running) return wait_for_request();
    slot_->busy();
    idle_timer_.cancel();
  }

 private:
  void read() {
    ws_.async_read_some(buffer_, options_.max_body_bytes + 1 - buffer_.size(),
                        [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return close();
    if (buffer_.size() > options_.max_body_bytes) return refuse_too_large();
    if (ws_.is_message_done()) on_message();
    read();
  }

  void on_message() {
    const std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    if (closing_) return;  // no new answer once the close frame is due
    conversation_->on_message(text, !ws_.got_text());
    if (!answering_) wait_for_request();  // any message restarts the idle time
  }

  // No more reading: the close handshake discards the rest of the message.
  void refuse_too_large() {
    buffer_.consume(buffer_.size());
    send(dump_json(request_too_large(options_.max_body_bytes).to_json()));
    shut(websocket::close_code::too_big, "message too big");
  }

  // No answer runs: the idle timeout starts, and a new connection may take the place.
  void wait_for_request() {
    if (closed_ || closing_) return;
    if (!slot_->idle(evict_callback())) return shut(websocket::close_code::going_away, leave_reason());
    idle_timer_.expires_after(options_.ws_idle_timeout);
    idle_timer_.async_wait([weak = weak_from_this()](beast::error_code ec) {
      if (auto self = weak.lock(); self && !ec) self->on_idle_timer();
    });
  }

  void on_idle_timer() {
    if (answering_ || idle_timer_.expiry() > net::steady_timer::clock_type::now()) return;  // re-armed since
    shut(websocket::close_code::going_away, "idle timeout");
  }

  std::function<void()> evict_callback() {
    return [weak = weak_from_this(), executor = ws_.get_executor()] {
      net::post(executor, [weak] {
        if (auto self = weak.lock(); self && !self->answering_) self->shut(websocket::close_code::going_away, self->leave_reason());
      });
    };
  }

  std::string leave_reason() const { return ctx_.state.draining ? "server shutting down" : "connection limit reached"; }

  // Sends a close frame once the queued messages are out.
  void shut(websocket::close_code code, std::string reason) {
    if (closed_ || closing_) return;
    closing_.emplace(code, reason);
    idle_timer_.cancel();
    if (outbox_.empty()) send_close();
  }

  void send_close() {
    ws_.async_close(*closing_, [self = shared_from_this()](beast::error_code) { self->close(); });
  }

  void write() {
    ws_.text(true);
    ws_.async_write(net::buffer(outbox_.front()), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->pending_ -= std::min(self->pending_, n);
      self->outbox_.pop_front();
      if (ec) return self->close();
      if (self->closed_) return self->outbox_.clear();
      if (!self->outbox_.empty()) return self->write();
      if (self->closing_) self->send_close();
    });
  }

  // The conversation holds this session (to post and send) until closed.
  void close() {
    if (closed_) return;
    closed_ = true;  // a write in flight still owns outbox_.front()
    idle_timer_.cancel();
    if (conversation_) conversation_->on_close();
    conversation_.reset();
  }

  ApiContext& ctx_;
  ModelDirectory* models_;
  const HttpOptions& options_;
  websocket::stream<beast::tcp_stream> ws_;
  ConnectionSlotPtr slot_;
  net::steady_timer idle_timer_;  // --ws-idle-timeout
  beast::flat_buffer buffer_;     // the message being read
  std::shared_ptr<WsConversation> conversation_;
  HttpRequest upgrade_;  // until the conversation takes it
  std::deque<std::string> outbox_;
  size_t pending_ = 0;
  bool answering_ = false;
  std::optional<websocket::close_reason> closing_;  // the close frame to send after the outbox
  bool closed_ = false;
};

}  // namespace

void start_ws_session(ApiContext& ctx, ModelDirectory* models, const HttpOptions& options, beast::tcp_stream stream,
                      http::request<http::string_body> req, ConnectionSlotPtr slot) {
  std::make_shared<WsSession>(ctx, models, options, std::move(stream), std::move(slot))->run(std::move(req));
}

}  // namespace parley::serve
