#include "serve/ws_session.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>
#include <deque>

#include "serve/http_session.h"
#include "serve/ws_conversation.h"

namespace parley::serve {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;

class WsSession : public WsChannel, public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(ApiContext& ctx, const HttpOptions& options, beast::tcp_stream stream)
      : ctx_(ctx), options_(options), ws_(std::move(stream)) {
    ++ctx_.state.connections;
  }
  ~WsSession() override { --ctx_.state.connections; }

  void run(http::request<http::string_body> req) {
    websocket::stream_base::timeout t = websocket::stream_base::timeout::suggested(beast::role_type::server);
    t.idle_timeout = options_.idle_timeout;  // a ping after half of it, closed after all of it
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.read_message_max(options_.max_body_bytes);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "parley"); }));
    upgrade_ = to_request(req, ws_.next_layer().socket());
    ws_.async_accept(req, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->conversation_ = std::make_shared<WsConversation>(self->ctx_, self, std::move(self->upgrade_));
      self->read();
    });
  }

  void send(std::string text) override {
    if (closed_) return;
    pending_ += text.size();
    outbox_.push_back(std::move(text));
    if (outbox_.size() == 1) write();
  }
  void post(std::function<void()> f) override { net::post(ws_.get_executor(), std::move(f)); }
  size_t pending_bytes() const override { return pending_; }

 private:
  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec) return close();
    const std::string text = beast::buffers_to_string(buffer_.data());
    buffer_.consume(buffer_.size());
    conversation_->on_message(text, !ws_.got_text());
    read();
  }

  void write() {
    ws_.text(true);
    ws_.async_write(net::buffer(outbox_.front()), [self = shared_from_this()](beast::error_code ec, size_t n) {
      self->pending_ -= std::min(self->pending_, n);
      self->outbox_.pop_front();
      if (ec) return self->close();
      if (self->closed_) return self->outbox_.clear();
      if (!self->outbox_.empty()) self->write();
    });
  }

  // The conversation holds this session (to post and send) until closed.
  void close() {
    if (closed_) return;
    closed_ = true;  // a write in flight still owns outbox_.front()
    if (conversation_) conversation_->on_close();
    conversation_.reset();
  }

  ApiContext& ctx_;
  const HttpOptions& options_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer buffer_;
  std::shared_ptr<WsConversation> conversation_;
  HttpRequest upgrade_;  // until the conversation takes it
  std::deque<std::string> outbox_;
  size_t pending_ = 0;
  bool closed_ = false;
};

}  // namespace

void start_ws_session(ApiContext& ctx, const HttpOptions& options, beast::tcp_stream stream,
                      http::request<http::string_body> req) {
  std::make_shared<WsSession>(ctx, options, std::move(stream))->run(std::move(req));
}

}  // namespace parley::serve
