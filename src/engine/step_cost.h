#pragma once
// Predicts an engine step's wall time from its shape, for the step-time
// target (EngineConfig::max_step_ms): a least-squares fit of
//   seconds = a + b_d * decodes + b_p * prefill tokens
// over the steps seen so far, older ones forgotten geometrically, so the fit
// follows the machine as contexts grow or other work slows it down.
#include <array>
#include <cstdint>

namespace parley {

class StepCost {
 public:
  // Each new step weighs 1 and every older one `forget` times its last
  // weight (0.95: about the last 20 steps count).
  explicit StepCost(double forget = 0.95) : forget_(forget) {}

  void observe(int32_t decodes, int32_t prefill, double seconds);
  bool known() const { return xx_[0][0] > 0; }  // the steps' total weight
  double predict(int32_t decodes, int32_t prefill) const;
  // The root mean square of the recent steps' prediction errors (each step
  // predicted before it was observed, weighted as the fit is), from about
  // the fifth step on; 0 before.
  double error() const;
  // The most prefill tokens a step with `decodes` decodes may carry and be
  // predicted, plus twice error(), to take at most `seconds` (0
  // when even the decodes alone take longer; `cap` when prefill looks free).
  // Before any step: `cap`.
  int32_t prefill_within(double seconds, int32_t decodes, int32_t cap) const;

 private:
  // (a, b_d, b_p): the ridge solution of the weighted normal equations. The
  // small ridge makes it defined before the steps vary (one step: its time is
  // put mostly on its tokens, the cautious reading for a budget).
  std::array<double, 3> fit() const;

  double forget_;
  std::array<std::array<double, 3>, 3> xx_{};  // weighted sums of x x^T, x = (1, decodes, prefill)
  std::array<double, 3> xt_{};                 // weighted sums of x * seconds
  double err2_ = 0, err_weight_ = 0;           // weighted sums of squared errors and of their weights
};

}  // namespace parley
