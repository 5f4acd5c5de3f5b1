#include "obs/hysteresis.h"

namespace parley::obs {

bool Hysteresis::update(double value, Clock::time_point now) {
  if (!on_) {
    on_ = value > enter_;
    below_since_.reset();
    return on_;
  }
  if (value >= leave_) {
    below_since_.reset();
    return on_;
  }
  if (!below_since_) below_since_ = now;
  if (now - *below_since_ >= hold_) {
    on_ = false;
    below_since_.reset();
  }
  return on_;
}

}  // namespace parley::obs
