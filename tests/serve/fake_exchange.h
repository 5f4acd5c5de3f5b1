#pragma once
// An Exchange that records what a route answered, for tests without sockets.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "serve/transport/exchange.h"

namespace parley::serve::test {

class FakeExchange : public Exchange {
 public:
  explicit FakeExchange(HttpRequest r) : request_(std::move(r)) {}
  const HttpRequest& request() const override { return request_; }
  void respond(HttpResponse r) override {
    answered_ = true;
    response = std::move(r);
  }
  void begin_stream(HttpResponse head) override {
    answered_ = true;
    response = std::move(head);
  }
  void send_chunk(std::string data) override { chunks.push_back(std::move(data)); }
  void end_stream() override { ended = true; }
  void post(std::function<void()> f) override { f(); }
  void on_disconnect(std::function<void()> f) override { disconnect = std::move(f); }
  size_t pending_bytes() const override { return 0; }

  HttpResponse response;
  std::vector<std::string> chunks;
  bool ended = false;
  std::function<void()> disconnect;

 private:
  HttpRequest request_;
};

inline std::shared_ptr<FakeExchange> fake(std::string method, std::string target, std::string body = "",
                                          Headers headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  r.headers = std::move(headers);
  return std::make_shared<FakeExchange>(std::move(r));
}

}  // namespace parley::serve::test
