#pragma once
// An on/off switch with hysteresis: it turns on when the signal goes above
// `enter`, and off only after the signal stayed below `leave` for `hold`
// (so that a load hovering around the threshold does not flap). Used for
// degraded mode and for the memory watchdog's shedding.
#include <chrono>
#include <optional>

namespace parley::obs {

class Hysteresis {
 public:
  using Clock = std::chrono::steady_clock;
  Hysteresis(double enter, double leave, std::chrono::milliseconds hold) : enter_(enter), leave_(leave), hold_(hold) {}
  // Feeds one observation; returns the state after it.
  bool update(double value, Clock::time_point now = Clock::now());
  bool on() const { return on_; }

 private:
  double enter_, leave_;
  std::chrono::milliseconds hold_;
  bool on_ = false;
  std::optional<Clock::time_point> below_since_;
};

}  // namespace parley::obs
