#pragma once
// Structured logs: one JSON object per line ({"ts", "level", "event", ...})
// on stderr (or any stream), below a level dropped. Thread-safe.
#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace parley::obs {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };
std::optional<LogLevel> log_level_from_name(const std::string& name);  // debug, info, warn, error, off
const char* log_level_name(LogLevel level);

class Logger {
 public:
  explicit Logger(std::ostream& out, LogLevel level = LogLevel::Info) : out_(out), level_(level) {}
  bool enabled(LogLevel level) const { return level >= level_ && level_ != LogLevel::Off; }
  void set_level(LogLevel level) { level_ = level; }  // before other threads log
  LogLevel level() const { return level_; }
  // Writes `fields` with "ts" (UTC, milliseconds), "level" and "event" added in front.
  void log(LogLevel level, const std::string& event, const nlohmann::json& fields = nlohmann::json::object());

 private:
  std::ostream& out_;
  LogLevel level_;
  std::mutex mu_;
};

std::string iso_time_now();  // 2026-01-31T12:34:56.789Z

}  // namespace parley::obs
