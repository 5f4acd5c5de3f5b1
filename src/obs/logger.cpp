#include "obs/logger.h"

#include <chrono>
#include <ctime>
#include <ostream>

namespace parley::obs {

std::optional<LogLevel> log_level_from_name(const std::string& name) {
  for (LogLevel l : {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error, LogLevel::Off})
    if (name == log_level_name(l)) return l;
  return std::nullopt;
}

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::Debug: return "debug";
    case LogLevel::Info: return "info";
    case LogLevel::Warn: return "warn";
    case LogLevel::Error: return "error";
    case LogLevel::Off: break;
  }
  return "off";
}

std::string iso_time_now() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return buf;
}

void Logger::log(LogLevel level, const std::string& event, const nlohmann::json& fields) {
  if (!enabled(level)) return;
  nlohmann::ordered_json line = {{"ts", iso_time_now()}, {"level", log_level_name(level)}, {"event", event}};
  for (const auto& [k, v] : fields.items()) line[k] = v;
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(mu_);
  out_ << text << '\n';
  out_.flush();
}

}  // namespace parley::obs
