#include "cli/kv_options.h"

#include "util/error.h"

namespace parley {

void add_kv_retention_options(CLI::App& cmd, std::string& policy, KvRetention& r) {
  cmd.add_option("--kv-policy", policy, "KV retention: full, window, sink or heavy-hitter (requests may set their own)")
      ->capture_default_str();
  cmd.add_option("--kv-window", r.window, "window/sink/heavy-hitter: recent tokens kept")->capture_default_str();
  cmd.add_option("--kv-sink", r.sink, "sink/heavy-hitter: first tokens kept")->capture_default_str();
  cmd.add_option("--kv-heavy", r.heavy, "heavy-hitter: most-attended tokens kept")->capture_default_str();
}

KvPolicy parse_kv_policy(const std::string& name) {
  const auto p = kv_policy_from_name(name);
  if (!p) throw Error("--kv-policy: '" + name + "' is not full, window, sink or heavy-hitter");
  return *p;
}

}  // namespace parley
