#include "model/moe_config.h"

#include "gguf/gguf.h"
#include "util/error.h"

namespace parley {

MoeConfig moe_config_from_gguf(const gguf::File& f, const std::string& arch, bool norm_top_k, int32_t ffn_dim) {
  const std::string a = arch + ".", src = f.path() + ": ";
  auto get = [&](const std::string& key, uint64_t dflt) {
    const uint64_t v = f.get_uint(a + key, dflt);
    if (v > (1u << 30)) throw Error(src + a + key + " = " + std::to_string(v) + " is out of range");
    return int32_t(v);
  };
  MoeConfig m;
  m.n_experts = get("expert_count", 0);
  if (m.n_experts == 0) return m;
  m.n_used = get("expert_used_count", 0);
  m.expert_ffn_dim = get("expert_feed_forward_length", uint64_t(ffn_dim));
  m.shared_ffn_dim = get("expert_shared_feed_forward_length", 0);
  m.norm_top_k = f.get_bool(a + "expert_weights_norm", norm_top_k);
  if (m.n_used < 1 || m.n_used > m.n_experts)
    throw Error(src + a + "expert_used_count " + std::to_string(m.n_used) + " must be between 1 and " + a +
                "expert_count " + std::to_string(m.n_experts));
  if (m.expert_ffn_dim < 1)
    throw Error(src + a + "expert_feed_forward_length must be positive");
  return m;
}

}  // namespace parley
