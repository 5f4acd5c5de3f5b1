#pragma once
// The engine's configuration made concrete: defaults resolved, values
// checked, and the KV pool sized (blocks, and the context a sequence may use).
#include <cstdint>
#include <string_view>

#include "engine/llm_engine.h"
#include "model/config.h"

namespace parley {

// Fills defaults (threads 0 = physical cores, max_context 0 = the model's);
// throws parley::Error for values out of range or an unusable KV type.
EngineConfig resolve_config(const ModelConfig& model, EngineConfig config);

struct KvLayout {
  uint64_t block_bytes = 0;  // one block: every layer's K and V for block_size tokens
  int64_t n_blocks = 0;
  // Tokens one sequence may hold under the Full policy: the context, or less
  // when the pool is smaller, so that one sequence always fits the pool
  // (with a block to spare for copy-on-write) and never deadlocks.
  int32_t context_limit = 0;
};

// kv_memory_bytes 0: what max_running sequences at full context need, at
// most kDefaultKvCapBytes (but one full context) and a quarter of physical memory.
constexpr uint64_t kDefaultKvCapBytes = uint64_t(2) << 30;
// With a draft model (SpecMode::Draft) the memory holds its pool too, of as
// many blocks (n_blocks is both pools'; block_bytes the target's).
KvLayout kv_layout(const ModelConfig& model, const EngineConfig& config);

// A memory size as flags give it: bytes ("1048576"), with a binary suffix
// ("512K", "256M", "2G", optionally followed by "iB" or "B"), or a share of
// physical memory ("25%"). Throws parley::Error for anything else.
uint64_t parse_memory_size(std::string_view text);
uint64_t physical_memory();

}  // namespace parley
