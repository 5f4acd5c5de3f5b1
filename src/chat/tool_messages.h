#pragma once
// The messages of a conversation with tools, prepared for the template:
// tool-call arguments as JSON objects for templates that know tools, and for
// those that do not, the Generic format written into plain messages.
#include <nlohmann/json.hpp>

namespace parley::chat {

// Each assistant tool call's `arguments` JSON text parsed into the object
// templates expect (text that is not JSON stays text).
nlohmann::ordered_json with_parsed_arguments(const nlohmann::ordered_json& messages);

// For a template without tools: generic_tool_instructions(tools) opens the
// system message (or a new one), assistant tool calls become their Generic
// JSON text after the message's content, and each run of tool results becomes
// one user message of {"tool_response": {...}} lines.
nlohmann::ordered_json with_generic_tools(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools);

}  // namespace parley::chat
