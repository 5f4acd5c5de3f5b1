#include "model/sequence_forward.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "util/error.h"

namespace parley {
namespace {

constexpr int32_t kBlock = 16;
// Tokens per step during prefill, as the engine's default step: the tile
// kernels dequantize each weight once per call.
constexpr int32_t kStepTokens = 512;

int32_t context_of(const Model& m, int32_t max_context) {
  return max_context > 0 ? max_context : m.config().context_length;
}

}  // namespace

SequenceForward::SequenceForward(const Model& model, ThreadPool& pool, int32_t max_context, DType kv_type)
    : max_context_(context_of(model, max_context)),
      cache_(model.config(), kv_type, kBlock, (max_context_ + kBlock - 1) / kBlock),
      blocks_(size_t(cache_.n_blocks())),
      forward_(model, pool, cache_, std::min(kStepTokens, max_context_), 1, max_context_),
      vocab_(model.config().vocab_size) {
  std::iota(blocks_.begin(), blocks_.end(), 0);
  for (int32_t b : blocks_) cache_.commit_block(b);
}

const float* SequenceForward::eval(const int32_t* tokens, int32_t n, float* all_logits) {
  if (n <= 0) throw Error("eval: no tokens");
  if (pos_ + n > max_context_)
    throw Error("context length exceeded: " + std::to_string(pos_ + n) + " positions, limit " +
                std::to_string(max_context_));
  const float* last = nullptr;
  for (int32_t done = 0; done < n; done += forward_.max_tokens()) {
    BatchChunk c;
    c.tokens = tokens + done;
    c.n = std::min(forward_.max_tokens(), n - done);
    c.pos = pos_;
    c.blocks = blocks_.data();
    c.logits = true;
    c.all_logits = all_logits != nullptr;
    c.lora = lora_;
    c.lora_scale = lora_scale_;
    const float* out = forward_.step(&c, 1);
    if (all_logits) std::copy_n(out, size_t(c.n) * size_t(vocab_), all_logits + size_t(done) * size_t(vocab_));
    last = all_logits ? out + size_t(c.n - 1) * size_t(vocab_) : out;
    pos_ += c.n;
  }
  return last;
}

}  // namespace parley
