// Logger, RateWindow, Hysteresis, Periodic, resident_bytes.
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>

#include "obs/hysteresis.h"
#include "obs/logger.h"
#include "obs/periodic.h"
#include "obs/process_memory.h"
#include "obs/rate_window.h"

namespace parley::obs {
namespace {

using namespace std::chrono_literals;

TEST(Logger, WritesOneJsonObjectPerLineAboveItsLevel) {
  std::ostringstream out;
  Logger log(out, LogLevel::Info);
  log.log(LogLevel::Debug, "hidden");
  log.log(LogLevel::Info, "access", {{"status", 200}, {"path", "/v1/x\n\"y"}});
  log.log(LogLevel::Error, "boom");
  std::istringstream in(out.str());
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["event"], "access");
  EXPECT_EQ(lines[0]["level"], "info");
  EXPECT_EQ(lines[0]["status"], 200);
  EXPECT_EQ(lines[0]["path"], "/v1/x\n\"y");
  EXPECT_EQ(lines[0]["ts"].get<std::string>().size(), 24u);
  EXPECT_EQ(lines[1]["level"], "error");
  EXPECT_EQ(log_level_from_name("warn"), LogLevel::Warn);
  EXPECT_FALSE(log_level_from_name("loud"));
}

TEST(RateWindow, AveragesCompleteSeconds) {
  RateWindow w(4);
  const auto t0 = RateWindow::Clock::time_point(std::chrono::seconds(1000));
  w.add(40, t0);
  w.add(40, t0 + 1s);
  w.add(999, t0 + 4s);  // the current second does not count yet
  EXPECT_DOUBLE_EQ(w.rate(t0 + 4s), 20.0);  // 80 over seconds 1000..1003
  EXPECT_DOUBLE_EQ(w.rate(t0 + 6s), 999.0 / 4);
  EXPECT_DOUBLE_EQ(w.rate(t0 + 60s), 0.0);
}

TEST(Hysteresis, EntersAboveAndLeavesAfterHoldBelow) {
  Hysteresis h(100, 50, 2000ms);
  const auto t = Hysteresis::Clock::now();
  EXPECT_FALSE(h.update(90, t));
  EXPECT_TRUE(h.update(150, t));
  EXPECT_TRUE(h.update(80, t + 100ms));    // below enter, above leave: stays
  EXPECT_TRUE(h.update(10, t + 200ms));    // below leave: the hold starts
  EXPECT_TRUE(h.update(60, t + 1000ms));   // back above leave: hold reset
  EXPECT_TRUE(h.update(10, t + 1100ms));
  EXPECT_TRUE(h.update(10, t + 3000ms));
  EXPECT_FALSE(h.update(10, t + 3100ms));  // 2 s below leave
}

TEST(Periodic, TicksAndStopsPromptly) {
  std::atomic<int> ticks{0};
  const auto start = std::chrono::steady_clock::now();
  {
    Periodic p(5ms, [&] { ++ticks; });
    while (ticks < 3) std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(ticks, 3);
  Periodic slow(1h, [] {});
  slow.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ProcessMemory, ResidentBytesGrowWithTouchedMemory) {
  const uint64_t before = resident_bytes();
  ASSERT_GT(before, 0u);
  std::vector<char> block(64 << 20, 1);
  EXPECT_GT(resident_bytes(), before + (32 << 20));
  EXPECT_EQ(block[12345], 1);
}

}  // namespace
}  // namespace parley::obs
