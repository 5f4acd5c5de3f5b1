#pragma once
// An exchange with no HTTP response behind it: the WebSocket upgrade request
// before the upgrade, and each WebSocket message afterwards. It lets the same
// checks (API key, rate limits, validation, admission) run on them; the
// headers those checks set have nowhere to go and are dropped.
#include "serve/transport/exchange.h"

namespace parley::serve {

class DetachedExchange : public Exchange {
 public:
  explicit DetachedExchange(HttpRequest r) : request_(std::move(r)) {}
  const HttpRequest& request() const override { return request_; }
  void respond(HttpResponse) override {}
  void begin_stream(HttpResponse) override {}
  void send_chunk(std::string) override {}
  void end_stream() override {}
  void post(std::function<void()>) override {}
  void on_disconnect(std::function<void()>) override {}
  size_t pending_bytes() const override { return 0; }

 private:
  HttpRequest request_;
};

}  // namespace parley::serve
