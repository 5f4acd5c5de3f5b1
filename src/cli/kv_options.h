#pragma once
// The KV retention flags shared by `serve` (the server's default policy) and
// `bench-serve`: --kv-policy, --kv-window, --kv-sink, --kv-heavy.
#include <CLI/CLI.hpp>
#include <string>

#include "engine/kv_retention.h"

namespace parley {

void add_kv_retention_options(CLI::App& cmd, std::string& policy, KvRetention& r);
// The policy named by --kv-policy; throws parley::Error for another name.
KvPolicy parse_kv_policy(const std::string& name);

}  // namespace parley
