#pragma once
// SIGHUP reloads the static answers file (as POST /admin/static-answers/reload
// does), on a thread of its own; a bad file is logged and the old table stays.
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <thread>

#include "state/static_answers.h"

namespace parley::serve {

class StaticAnswersSignal {
 public:
  explicit StaticAnswersSignal(state::StaticAnswers* answers);  // null: SIGHUP is only absorbed
  ~StaticAnswersSignal();
  StaticAnswersSignal(const StaticAnswersSignal&) = delete;
  StaticAnswersSignal& operator=(const StaticAnswersSignal&) = delete;

 private:
  void wait();

  state::StaticAnswers* answers_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  std::thread thread_;
};

}  // namespace parley::serve
