#include "engine/model_runner.h"

namespace parley {

ModelRunner::ModelRunner(const Model& model, const EngineConfig& config, int64_t n_blocks, int32_t context_limit)
    : pool_(config.threads),
      cache_(model.config(), config.kv_type, config.block_size, n_blocks,
             config.kv_prefault ? KvCache::Commit::Now : KvCache::Commit::OnFirstUse),
      forward_(model, pool_, cache_, config.max_batch_tokens, config.max_running, context_limit) {
  chunks_.reserve(size_t(config.max_running));
}

float* ModelRunner::run(const std::vector<ScheduledSeq>& batch) {
  chunks_.clear();
  for (const auto& [seq, n] : batch) {
    BatchChunk c;
    c.tokens = seq->tokens.data() + seq->computed;
    c.n = n;
    c.blocks = seq->table.blocks.data();
    c.lora = seq->req.lora.get();
    c.lora_scale = seq->req.lora_scale;
    c.logits = !seq->embedding() && seq->computed + n == int32_t(seq->tokens.size());
    if (!seq->spec.input.empty()) {  // the last token and its drafts, all verified
      c.tokens = seq->spec.input.data();
      c.logits = c.all_logits = true;
    }
    if (seq->embedding()) {
      c.pooled = seq->pooled.data();
      c.pooling = seq->req.pooling;
    }
    if (seq->full_kv()) {
      c.pos = seq->computed;
    } else {  // the scheduler has placed the n tokens: they are the newest kept
      c.pos = seq->kept.live() - n;
      c.slot_pos = seq->kept.slot_pos();
      c.slots = seq->kept.slots();
      c.n_slots = seq->kept.n_slots();
      c.attention_sums = seq->kept.attention_sums();
    }
    chunks_.push_back(c);
  }
  // BatchForward's logits buffer is ours until the next step: samplers may edit it.
  return const_cast<float*>(forward_.step(chunks_.data(), int32_t(chunks_.size())));
}

}  // namespace parley
