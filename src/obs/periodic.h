#pragma once
// A thread that runs a function every `interval` until stopped (the memory
// watchdog and the degradation controller use it). stop() is prompt: it
// does not wait out the interval.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace parley::obs {

class Periodic {
 public:
  Periodic(std::chrono::milliseconds interval, std::function<void()> tick);
  ~Periodic();  // stop()
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;
  void stop();

 private:
  void loop();
  std::chrono::milliseconds interval_;
  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace parley::obs
