#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "loadtest/sse_parser.h"

using parley::loadtest::SseParser;

namespace {

std::vector<std::string> parse_in_pieces(const std::string& stream, const std::vector<size_t>& cuts) {
  std::vector<std::string> events;
  SseParser p([&](std::string_view d) { events.emplace_back(d); });
  size_t at = 0;
  for (size_t cut : cuts) {
    p.feed(std::string_view(stream).substr(at, cut - at));
    at = cut;
  }
  p.feed(std::string_view(stream).substr(at));
  return events;
}

const std::string kStream =
    ": a comment\r\n"
    "data: {\"a\":1}\n\n"
    "event: ignored\r\ndata: line one\r\ndata:line two\r\n\r\n"
    "id: 7\rdata: cr only\r\r"
    "data: {\"é\":\"ü\"}\n\n"
    "data\n\n"  // a field without a colon: empty data
    "retry: 10\n\n"  // no data: no event
    "data: [DONE]\n\n"
    "data: unfinished";  // no blank line yet: not an event
const std::vector<std::string> kEvents = {"{\"a\":1}", "line one\nline two", "cr only", "{\"é\":\"ü\"}", "",
                                          "[DONE]"};

}  // namespace

TEST(SseParser, WholeStream) { EXPECT_EQ(parse_in_pieces(kStream, {}), kEvents); }

TEST(SseParser, EverySingleSplitPoint) {
  for (size_t cut = 0; cut <= kStream.size(); ++cut) EXPECT_EQ(parse_in_pieces(kStream, {cut}), kEvents) << cut;
}

TEST(SseParser, ByteAtATime) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < kStream.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(parse_in_pieces(kStream, cuts), kEvents);
}

TEST(SseParser, RandomSplits) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<size_t> cuts;
    for (size_t at = 0;;) {
      at += std::uniform_int_distribution<size_t>(0, 7)(rng);
      if (at >= kStream.size()) break;
      cuts.push_back(at);
    }
    EXPECT_EQ(parse_in_pieces(kStream, cuts), kEvents) << trial;
  }
}

TEST(SseParser, EventDispatchedWhenItsBlankLineArrives) {
  std::vector<std::string> events;
  SseParser p([&](std::string_view d) { events.emplace_back(d); });
  p.feed("data: x\n");
  EXPECT_TRUE(events.empty());
  p.feed("\n");
  ASSERT_EQ(events.size(), 1u);
  p.feed("data: y\r");
  p.feed("\r");  // "\r\r": CR line end, then a blank line
  EXPECT_EQ(events, (std::vector<std::string>{"x", "y"}));
}
