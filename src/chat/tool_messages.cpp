#include "chat/tool_messages.h"

#include <string>

#include "chat/tool_call_format.h"

namespace parley::chat {
namespace {

using ojson = nlohmann::ordered_json;

std::string content_string(const ojson& m) {
  const auto it = m.find("content");
  return it != m.end() && it->is_string() ? it->get<std::string>() : "";
}

ojson tool_response_line(const ojson& m) {
  ojson response = ojson::object();
  if (m.contains("name")) response["name"] = m["name"];
  if (m.contains("tool_call_id")) response["tool_call_id"] = m["tool_call_id"];
  response["content"] = m.contains("content") ? m["content"] : ojson();
  return {{"tool_response", response}};
}

// The messages with the instructions for `tools` in the (first) system message.
ojson with_tool_instructions(const ojson& messages, const ojson& tools) {
  const std::string instructions = generic_tool_instructions(tools);
  ojson out = messages;
  if (!out.empty() && out[0].value("role", "") == "system" && out[0]["content"].is_string()) {
    out[0]["content"] = out[0]["content"].get<std::string>() + "\n\n" + instructions;
  } else {
    out.insert(out.begin(), ojson{{"role", "system"}, {"content", instructions}});
  }
  return out;
}

}  // namespace

ojson with_parsed_arguments(const ojson& messages) {
  ojson out = messages;
  for (ojson& m : out) {
    if (!m.is_object() || !m.contains("tool_calls") || !m["tool_calls"].is_array()) continue;
    for (ojson& call : m["tool_calls"]) {
      ojson* f = call.contains("function") ? &call["function"] : &call;
      if (!f->is_object() || !f->contains("arguments") || !(*f)["arguments"].is_string()) continue;
      ojson parsed = ojson::parse((*f)["arguments"].get<std::string>(), nullptr, false);
      if (!parsed.is_discarded()) (*f)["arguments"] = std::move(parsed);
    }
  }
  return out;
}

ojson with_generic_tools(const ojson& messages, const ojson& tools) {
  const ojson source = tools.is_array() && !tools.empty() ? with_tool_instructions(messages, tools) : messages;
  ojson out = ojson::array();
  for (const ojson& m : source) {
    const std::string role = m.value("role", "");
    if (role == "tool") {
      const std::string line = tool_response_line(m).dump();
      const bool joins = !out.empty() && out.back().value("role", "") == "user" && out.back().contains("tool_responses");
      if (joins) {
        out.back()["content"] = out.back()["content"].get<std::string>() + "\n" + line;
      } else {
        out.push_back({{"role", "user"}, {"content", line}, {"tool_responses", true}});
      }
    } else if (role == "assistant" && m.contains("tool_calls") && m["tool_calls"].is_array()) {
      const std::string text = content_string(m);
      ojson converted = m;
      converted.erase("tool_calls");
      converted["content"] = (text.empty() ? "" : text + "\n") + generic_tool_calls_text(m["tool_calls"]);
      out.push_back(std::move(converted));
    } else {
      out.push_back(m);
    }
  }
  for (ojson& m : out) m.erase("tool_responses");  // only marked runs of tool results above
  return out;
}

}  // namespace parley::chat
