#pragma once
// The engine flags shared by `serve` and `bench-serve`: the step's size
// (--max-running, --max-batch-tokens, --max-step-ms), the KV retention policy
// (the server's default: --kv-policy, --kv-window, --kv-sink, --kv-heavy),
// --kv-type and --kv-prefault's help; and the engine of the commands that
// generate for one user (`generate`, `chat`).
#include <CLI/CLI.hpp>
#include <string>

#include "engine/kv_retention.h"
#include "engine/llm_engine.h"

namespace parley {

void add_step_options(CLI::App& cmd, EngineConfig& c);

void add_kv_retention_options(CLI::App& cmd, std::string& policy, KvRetention& r);
// The policy named by --kv-policy; throws parley::Error for another name.
KvPolicy parse_kv_policy(const std::string& name);

// --kv-type: f32, f16 or q8_0.
void add_kv_type_option(CLI::App& cmd, std::string& type);
// Throws parley::Error for another name.
DType parse_kv_type(const std::string& name);

// Speculative decoding: --spec off|ngram|draft, --spec-tokens K,
// --draft-model FILE (alone it implies --spec draft), and the hidden
// --spec-oracle FILE (token ids, as `generate --ids` prints them: every
// output is proposed to continue as that one, to measure the ceiling).
struct SpecOptions {
  std::string mode;  // empty: off, or draft when --draft-model is given
  int32_t tokens = SpecConfig{}.max_tokens;
  bool fixed = false;
  std::string oracle;
  std::string draft_model;
  void add_to(CLI::App& cmd);
  // Loads the draft model. Throws parley::Error for an unknown mode, an
  // unreadable oracle or draft model file, or a mode the flags contradict.
  void apply(EngineConfig& c) const;
};

// `generate` and `chat`: one user's engine (--ctx, --kv-type; threads from --threads).
struct LocalEngineOptions {
  int32_t context = 0;
  std::string kv_type = "f16";
  SpecOptions spec;
  void add_to(CLI::App& cmd);
  EngineConfig config(int threads) const;
};

inline constexpr const char* kKvPrefaultHelp =
    "write the whole KV pool at start (huge pages where the kernel gives them): no page faults while serving, "
    "a slower start and the pool's full size in RSS from the start";

}  // namespace parley
