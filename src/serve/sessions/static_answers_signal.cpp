#include "serve/sessions/static_answers_signal.h"

#include <csignal>
#include <iostream>

#include "util/error.h"

namespace parley::serve {

StaticAnswersSignal::StaticAnswersSignal(state::StaticAnswers* answers)
    : answers_(answers), signals_(io_, SIGHUP) {
  wait();
  thread_ = std::thread([this] { io_.run(); });
}

StaticAnswersSignal::~StaticAnswersSignal() {
  io_.stop();
  thread_.join();
}

void StaticAnswersSignal::wait() {
  signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    if (answers_) {
      try {
        answers_->reload();
        std::cerr << "parley: SIGHUP, reloaded " << answers_->size() << " static answers from " << answers_->path() << "\n";
      } catch (const Error& e) {
        std::cerr << "parley: SIGHUP, static answers not reloaded (the previous ones stay): " << e.what() << "\n";
      }
    }
    wait();
  });
}

}  // namespace parley::serve
