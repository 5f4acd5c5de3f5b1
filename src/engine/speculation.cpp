#include "engine/speculation.h"

#include <algorithm>
#include <span>

#include "engine/draft_model_drafter.h"
#include "engine/ngram_drafter.h"
#include "engine/sequence.h"
#include "engine/step_cost.h"
#include "util/error.h"

namespace parley {
namespace {

// Weight of the newest verification in the acceptance estimate.
constexpr double kAcceptanceRate = 0.25;
// A sequence that does not speculate drifts back toward the prior this much
// a step, so that one bad stretch does not turn it off for good.
constexpr double kPrior = 0.5, kDrift = 0.02;
// A probe drafts with a draft model only for sequences whose draft lacks at
// most this many tokens (the last token, and the one drawn after a run of
// drafts that were all kept).
constexpr int32_t kProbeLag = 2;

}  // namespace

const char* spec_mode_name(SpecMode m) {
  switch (m) {
    case SpecMode::Off: return "off";
    case SpecMode::Ngram: return "ngram";
    case SpecMode::Oracle: return "oracle";
    case SpecMode::Draft: return "draft";
  }
  return "?";
}

Speculator::Speculator(SpecConfig config) : config_(std::move(config)) {
  if (config_.mode == SpecMode::Draft && !config_.draft) throw Error("speculation with a draft model needs the draft model");
  if (config_.max_tokens < 1 || config_.max_tokens > kMaxSpecTokens)
    throw Error("speculative tokens must be in [1, " + std::to_string(kMaxSpecTokens) + "], got " +
                std::to_string(config_.max_tokens));
}

// The drafts j = 1.. for which acceptance^j > theta, within room.
int32_t Speculator::worth(const Sequence& seq, double theta, int32_t room) const {
  const int32_t cap = std::min(config_.max_tokens, room);
  if (!config_.adaptive) return cap;
  double p = seq.spec.acceptance;
  int32_t k = 0;
  while (k < cap && p > theta) {
    ++k;
    p *= seq.spec.acceptance;
  }
  return k;
}

int32_t Speculator::draft(Sequence& seq, double theta, int32_t room) const {
  SpecState& s = seq.spec;
  s.input.clear();
  const int32_t k = worth(seq, theta, room);
  if (k == 0) {
    s.acceptance += kDrift * (kPrior - s.acceptance);
    return 0;
  }
  s.input.push_back(seq.tokens.back());
  int32_t n = 0;
  if (config_.mode == SpecMode::Draft) {
    s.want = k;  // DraftModelDrafter::draft draws them
    return k;
  }
  if (config_.mode == SpecMode::Ngram) {
    n = ngram_draft(std::span<const int32_t>(seq.tokens), k, s.input);
  } else if (config_.mode == SpecMode::Oracle) {
    const auto& o = config_.oracle;
    const auto g = size_t(seq.generated());
    if (g <= o.size() && std::equal(o.begin(), o.begin() + ptrdiff_t(g), seq.tokens.begin() + seq.prompt_len)) {
      n = int32_t(std::min(size_t(k), o.size() - g));
      s.input.insert(s.input.end(), o.begin() + ptrdiff_t(g), o.begin() + ptrdiff_t(g) + n);
    }
  }
  if (n == 0) s.input.clear();
  return n;
}

bool Speculator::probes(const Sequence& seq) const {
  if (config_.mode != SpecMode::Draft) return true;
  return seq.spec.draft && int32_t(seq.tokens.size()) - seq.spec.draft->computed <= kProbeLag;
}

bool Speculator::catch_up_pays(const Sequence& seq, double theta, double token_s, double share_s) const {
  if (config_.mode != SpecMode::Draft || !config_.adaptive) return true;
  const int32_t lag = int32_t(seq.tokens.size()) - (seq.spec.draft ? seq.spec.draft->computed : 0);
  if (lag <= kProbeLag) return true;
  if (share_s <= 0.0) return false;  // the price of a step is not known yet
  const double a = seq.spec.acceptance;
  const double saved = std::max(0.0, a - theta) / (1.0 + a);  // of each token's time, drafting one a step
  const double remaining = double(std::max(0, seq.req.max_tokens - seq.generated()));
  // Per token: the target's price scaled by size, or what the draft's own
  // catch-ups took, whichever is more (the target's fit may not have seen
  // prefill lately).
  double per_token = token_s * draft_size_;
  if (draft_cost_ && draft_cost_->known())
    per_token = std::max(per_token, draft_cost_->predict(1, 1) - draft_cost_->predict(1, 0));
  return remaining * share_s * saved > double(lag) * per_token;
}

double Speculator::draft_seconds(int32_t rows) const {
  return draft_cost_ && draft_cost_->known() ? std::max(0.0, draft_cost_->predict(rows, 0)) : 0.0;
}

void Speculator::observe(Sequence& seq, int32_t drafted, int32_t accepted) {
  // Drafts looked at: the accepted ones and the first rejected one.
  const int32_t seen = accepted + (accepted < drafted ? 1 : 0);
  if (seen == 0) return;
  double& a = seq.spec.acceptance;
  a += kAcceptanceRate * (double(accepted) / double(seen) - a);
}

}  // namespace parley
