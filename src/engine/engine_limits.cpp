#include "engine/engine_limits.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "kernels/thread_pool.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "util/error.h"

namespace parley {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw Error("engine configuration: " + what);
}

uint64_t draft_block_bytes(const EngineConfig& c) {
  if (c.spec.mode != SpecMode::Draft || !c.spec.draft) return 0;
  return KvCache::block_bytes(c.spec.draft->config(), c.kv_type, c.block_size);
}

// The pool's blocks; `extra_block_bytes`: a draft model's block, which takes its
// share of the memory, block for block.
KvLayout pool_layout(const ModelConfig& model, const EngineConfig& c, uint64_t extra_block_bytes) {
  KvLayout k;
  k.block_bytes = KvCache::block_bytes(model, c.kv_type, c.block_size) + extra_block_bytes;
  const int64_t per_sequence = (c.max_context + c.block_size - 1) / c.block_size + 1;
  if (c.kv_memory_bytes == 0) {
    // A pool is never given back while it serves, so the default stays modest:
    // paged blocks let many sequences share what few full contexts would take.
    const int64_t cap = std::max(int64_t(kDefaultKvCapBytes / k.block_bytes), per_sequence);
    k.n_blocks = std::min({int64_t(physical_memory() / 4 / k.block_bytes), int64_t(c.max_running) * per_sequence, cap});
  } else
    k.n_blocks = int64_t(c.kv_memory_bytes / k.block_bytes);
  if (k.n_blocks < 2)
    throw Error("engine configuration: KV memory of " + std::to_string(c.kv_memory_bytes) +
                " bytes holds fewer than 2 blocks of " + std::to_string(k.block_bytes) + " bytes");
  k.context_limit = int32_t(std::min<int64_t>(c.max_context, (k.n_blocks - 1) * c.block_size));
  return k;
}

}  // namespace

uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (uint64_t(1) << 32);
}

uint64_t parse_memory_size(std::string_view text) {
  const std::string s(text);
  const auto bad = [&](const std::string& why) { return Error("memory size '" + s + "': " + why); };
  size_t used = 0;
  double value = -1;
  try {
    value = std::stod(s, &used);
  } catch (const std::exception&) {
  }
  if (!(value >= 0) || !std::isfinite(value)) throw bad("expected bytes, 512M, 2G or 25%");
  std::string unit = s.substr(used);
  if (unit == "%") {
    if (value > 100) throw bad("more than 100% of memory");
    return uint64_t(double(physical_memory()) * value / 100.0);
  }
  for (char& ch : unit) ch = char(std::tolower(unsigned(ch)));
  if (unit.size() > 2 && unit.ends_with("ib")) unit.resize(unit.size() - 2);
  else if (unit.size() == 2 && unit.back() == 'b') unit.pop_back();
  static const std::string kUnits = "kmgt";
  const size_t found = unit.size() == 1 ? kUnits.find(unit[0]) : 0;
  if (unit.size() > 1 || found == std::string::npos) throw bad("unknown unit (use K, M, G, T or %)");
  const double power = unit.empty() ? 0 : double(found + 1);
  return uint64_t(value * std::pow(1024.0, power));
}

EngineConfig resolve_config(const ModelConfig& model, EngineConfig c) {
  require(c.threads >= 0, "threads must be >= 0 (0 = physical cores)");
  require(c.max_running >= 1, "max_running must be >= 1");
  require(c.max_batch_tokens >= 1, "max_batch_tokens must be >= 1");
  require(c.max_step_ms >= 0, "max_step_ms must be >= 0 (0 = no step-time target)");
  require(c.block_size >= 1 && c.block_size <= 4096, "block_size must be in [1, 4096]");
  require(c.max_context >= 0, "max_context must be >= 0 (0 = the model's context length)");
  KvCache::check_type(model, c.kv_type);
  if (c.spec.mode == SpecMode::Draft) {
    require(c.spec.draft != nullptr, "speculation with a draft model needs the draft model");
    KvCache::check_type(c.spec.draft->config(), c.kv_type);
  }
  if (c.threads == 0) c.threads = physical_cores();
  if (c.max_context == 0) c.max_context = model.context_length;
  return c;
}

KvLayout kv_layout(const ModelConfig& model, const EngineConfig& c) {
  KvLayout k = pool_layout(model, c, draft_block_bytes(c));
  k.block_bytes = KvCache::block_bytes(model, c.kv_type, c.block_size);
  return k;
}

}  // namespace parley
