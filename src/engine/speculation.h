#pragma once
// Speculative decoding (docs/performance.md, "Speculative decoding"): a
// drafter proposes a decoding sequence's next few tokens; one engine step
// evaluates its last token and the k drafts together (k + 1 positions, about
// the price of one while the step is bound by reading the weights), and the
// sequence keeps the drafts its own sampler draws from those rows, up to the
// first that differs, plus the token drawn there. Output is token for token
// what decoding without speculation gives (same seed, same tokens).
//
// How many drafts pay: an extra position costs `theta` (the step-cost fit's
// price of one more token, in units of one sequence's share of a decode
// step); the j-th draft is kept with probability about acceptance^j, so a
// sequence drafts the j for which acceptance^j > theta. Its acceptance is a
// running estimate of its recent verifications. Under load (a compute-bound
// step) theta nears or passes 1 and speculation stops by itself. The fit
// learns what a drafted position costs only from steps that carry some, so
// every kProbeEvery-th step with decodes drafts one token wherever it can.
//
// Drafters: prompt lookup (ngram_drafter.h), a draft model
// (draft_model_drafter.h: its forwards' time is added to theta; its sampled
// drafts use the target's uniforms, draft_draw.h), and an oracle for
// measurements.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace parley {

class Model;
class StepCost;
struct Sequence;
struct DraftState;

constexpr int32_t kProbeEvery = 16;
constexpr int32_t kMaxSpecTokens = 16;  // SpecConfig::max_tokens at most

enum class SpecMode {
  Off,
  Ngram,   // prompt lookup (ngram_drafter.h)
  Oracle,  // SpecConfig::oracle: a known continuation, for measuring the ceiling
  Draft,   // SpecConfig::draft: a smaller model of the same vocabulary (draft_model_drafter.h)
};
const char* spec_mode_name(SpecMode m);  // "off", "ngram", "oracle", "draft"

struct SpecConfig {
  SpecMode mode = SpecMode::Off;
  int32_t max_tokens = 8;  // drafts per sequence and step at most (--spec-tokens)
  // False: every decode drafts max_tokens whenever the drafter has them,
  // whatever they cost (for measurements and tests).
  bool adaptive = true;
  // Oracle: the tokens every sequence's output is proposed to continue with
  // (the target's own greedy output of the prompt, from a first run).
  std::vector<int32_t> oracle;
  // Draft: the draft model (its vocabulary must be the target's).
  std::shared_ptr<const Model> draft;
};

// A sequence's speculation state.
struct SpecState {
  // This step's verification input: the last token, then the drafts (empty:
  // not speculating this step).
  std::vector<int32_t> input;
  double acceptance = 0.5;  // running estimate of one draft's acceptance
  // Draft model: the drafts planned this step (input holds the last token
  // until the draft model draws them), and the sequence's state there.
  int32_t want = 0;
  std::unique_ptr<DraftState> draft;
  int32_t drafts() const { return input.empty() ? 0 : int32_t(input.size()) - 1; }
};

class Speculator {
 public:
  explicit Speculator(SpecConfig config);  // throws parley::Error for a bad max_tokens

  bool enabled() const { return config_.mode != SpecMode::Off; }
  const SpecConfig& config() const { return config_; }
  // Fills seq.spec.input with at most `room` drafts worth verifying at
  // `theta` (see above); returns how many (0: input left empty).
  int32_t draft(Sequence& seq, double theta, int32_t room) const;
  // After a verification of `drafted` drafts of which `accepted` were kept.
  static void observe(Sequence& seq, int32_t drafted, int32_t accepted);
  // Whether a probe step may draft for the sequence: with a draft model only
  // when the draft has seen all but its newest tokens, so that a probe costs
  // one draft forward, not a catch-up of everything since its last draft.
  bool probes(const Sequence& seq) const;
  // Draft model: the fit of its forwards' times (DraftModelDrafter::cost),
  // and the seconds it predicts for one draft forward over `rows` sequences
  // (0 without a draft model or before the fit knows anything).
  // `relative_size`: the draft's parameters over the target's.
  void set_draft_cost(const StepCost* cost, double relative_size) {
    draft_cost_ = cost;
    draft_size_ = relative_size;
  }
  double draft_seconds(int32_t rows) const;
  // Whether the draft model may catch up with a sequence it lags far behind
  // (its prompt, or the tokens since it last drafted) to draft for it: when
  // the catch-up, priced as `token_s` (one more token of the target's step)
  // times the draft's relative size per token, costs less than drafting is
  // expected to save over the tokens the sequence may still produce (each
  // worth `share_s`, one decode's share of a step, less the fraction a
  // drafted position at `theta` saves). Under load it does not, and a
  // sequence the draft has not followed stays plain, as it does before the
  // fit knows the step (share_s 0). Without adaptive drafting it may always.
  bool catch_up_pays(const Sequence& seq, double theta, double token_s, double share_s) const;

 private:
  int32_t worth(const Sequence& seq, double theta, int32_t room) const;
  SpecConfig config_;
  const StepCost* draft_cost_ = nullptr;
  double draft_size_ = 1.0;
};

}  // namespace parley
