#include "serve/api/request_fields.h"

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string_view>

#include "serve/transport/api_error.h"

namespace parley::serve {
namespace {

// Read by select_model: every route that generates takes them.
constexpr std::string_view kModelChoice[] = {"model", "lora_scale"};
// Read by parse_generation_params, the response cache ("cache"), admission ("timeout")
// and parse_output_format ("response_format", "grammar").
constexpr std::string_view kGeneration[] = {"temperature", "top_p", "top_k", "min_p", "presence_penalty",
                           "frequency_penalty", "repetition_penalty", "logit_bias", "seed", "max_tokens",
                           "max_completion_tokens", "stop", "ignore_eos", "n", "logprobs", "top_logprobs",
                           "stream", "stream_options", "user", "kv_retention", "priority",
                           "truncate_prompt_tokens", "cache", "timeout", "response_format", "grammar",
                           "speculative"};
constexpr std::string_view kChat[] = {"messages", "session_id", "chat_template_kwargs"};
constexpr std::string_view kCompletions[] = {"prompt", "echo", "suffix", "best_of"};

// A list written in place (`listed({"a", "b"}, name)`) is a constant array: nothing is allocated per check.
bool listed(std::span<const std::string_view> names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
bool listed(std::initializer_list<std::string_view> names, std::string_view name) {
  return listed(std::span<const std::string_view>(names.begin(), names.size()), name);
}

bool generation(std::string_view name) { return listed(kModelChoice, name) || listed(kGeneration, name); }

bool known(std::string_view name, RouteFields route) {
  switch (route) {
    case RouteFields::Chat:
      return generation(name) || listed(kChat, name) || listed({"tools", "tool_choice", "parallel_tool_calls"}, name);
    case RouteFields::Completions: return generation(name) || listed(kCompletions, name);
    case RouteFields::Batch: return generation(name) || name == "prompts";
    case RouteFields::WebSocket:
      return generation(name) || listed(kChat, name) || name == "prompt" || name == "id" || name == "cancel";
    case RouteFields::Embeddings:
      return listed({"model", "input", "encoding_format", "dimensions", "priority", "timeout", "user"}, name);
    case RouteFields::Messages:
      return listed(kModelChoice, name) ||
             listed({"messages", "system", "max_tokens", "temperature", "top_p", "top_k", "stop_sequences", "stream",
                     "metadata"},
                    name);
    case RouteFields::Responses:
      return listed(kModelChoice, name) ||
             listed({"input", "instructions", "max_output_tokens", "temperature", "top_p", "stream", "store",
                     "previous_response_id", "metadata", "text", "truncation", "user"},
                    name);
    case RouteFields::Session: return listed({"model", "user", "system_prompt", "max_turns", "ttl_s"}, name);
    case RouteFields::TokenizeContent: return listed({"model", "content", "add_special", "parse_special", "with_pieces"}, name);
    case RouteFields::TokenizePrompt: return listed({"model", "prompt", "add_special_tokens", "return_token_strs"}, name);
    case RouteFields::TokenizeMessages:
      return listed({"model", "messages", "add_generation_prompt", "return_token_strs"}, name);
    case RouteFields::Detokenize: return listed({"model", "tokens"}, name);
    case RouteFields::ApplyTemplate: return listed({"model", "messages", "add_generation_prompt"}, name);
  }
  return false;
}

// OpenAI request fields for features Parley does not have, with the values
// that ask for nothing (those pass).
bool asks_for_nothing(std::string_view name, const json& v) {
  if (v.is_null()) return true;
  if (name == "tools" || name == "functions") return v.is_array() && v.empty();
  if (name == "tool_choice" || name == "function_call") return v == "none";
  if (name == "parallel_tool_calls") return v.is_boolean();
  if (name == "response_format") return v.is_object() && v.size() == 1 && v.value("type", "") == "text";
  if (name == "modalities") return v == json::array({"text"});
  if (name == "service_tier") return v == "auto" || v == "default";
  if (name == "store") return v == false;
  return false;
}

constexpr std::string_view kUnsupported[] = {
    "tools", "tool_choice", "functions", "function_call", "parallel_tool_calls", "response_format", "modalities",
    "audio", "prediction", "reasoning_effort", "web_search_options", "service_tier", "store", "metadata",
    "verbosity", "prompt_cache_key", "safety_identifier",
    // Anthropic's Messages and OpenAI's Responses.
    "thinking", "container", "mcp_servers", "reasoning", "include", "background", "conversation",
    "max_tool_calls"};

}  // namespace

void check_fields(const json& body, RouteFields route) {
  for (const auto& [name, value] : body.items()) {
    if (known(name, route)) continue;
    const bool openai = std::find(std::begin(kUnsupported), std::end(kUnsupported), name) != std::end(kUnsupported);
    const bool chat = route == RouteFields::Chat || route == RouteFields::WebSocket || route == RouteFields::Messages ||
                      route == RouteFields::Responses;
    if (openai && chat && asks_for_nothing(name, value)) continue;
    if (openai) throw invalid_request("'" + name + "' is not supported by this server", name, "unsupported_parameter");
    throw invalid_request("Unrecognized request argument supplied: " + name, name, "unknown_parameter");
  }
}

}  // namespace parley::serve
