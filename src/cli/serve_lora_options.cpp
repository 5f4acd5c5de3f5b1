// parley serve --lora NAME=PATH[:SCALE], --lora-dir DIR, --lora-memory BYTES.
#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "engine/engine_limits.h"
#include "serve/adapters/lora_registry.h"
#include "util/error.h"

namespace parley {

void ServeLoraOptions::add_to(CLI::App& cmd) {
  cmd.add_option("--lora", adapters,
                 "LoRA adapter served as NAME=PATH[:SCALE] (repeatable; loaded at start): requests pick it with "
                 "\"model\": \"NAME\"");
  cmd.add_option("--lora-dir", dir, "directory of LoRA adapter GGUFs, each served under its file stem, loaded on first use");
  cmd.add_option("--lora-memory", memory,
                 "memory of the LoRA adapters kept loaded (bytes, 512M, 2G; least recently used idle ones are "
                 "evicted above it; default: no limit)");
}

std::unique_ptr<serve::LoraRegistry> ServeLoraOptions::registry(const Model& model) const {
  auto registry = std::make_unique<serve::LoraRegistry>(model, memory.empty() ? 0 : parse_memory_size(memory));
  for (const std::string& spec : adapters) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw Error("--lora: expected NAME=PATH[:SCALE], got '" + spec + "'");
    const auto [path, scale] = split_lora_spec(spec.substr(eq + 1));
    const auto t0 = std::chrono::steady_clock::now();
    registry->add(spec.substr(0, eq), path, scale, true);
    std::cerr << "loaded LoRA adapter " << spec.substr(0, eq) << " from " << path << " in "
              << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() << " ms\n";
  }
  if (!dir.empty())
    std::cerr << "offering " << registry->add_dir(dir) << " LoRA adapters from " << dir << " (loaded on first use)\n";
  return registry;
}

}  // namespace parley
