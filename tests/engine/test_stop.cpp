#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "engine/stop.h"

namespace parley {
namespace {

struct Outcome {
  std::string emitted;
  bool stopped = false;
};

bool is_proper_prefix_of_a_stop(const std::string& s, const std::vector<std::string>& stops) {
  for (const auto& stop : stops) {
    if (s.size() < stop.size() && stop.compare(0, s.size(), s) == 0) return true;
  }
  return false;
}

// Pushes the pieces in order, then flushes. After every push checks that
// what was emitted is a prefix of what was pushed and that whatever is held
// back is empty or a proper prefix of some stop string.
Outcome run(const std::vector<std::string>& stops, const std::vector<std::string>& pieces) {
  StopStringMatcher matcher(stops);
  Outcome out;
  std::string pushed;
  for (const auto& piece : pieces) {
    const bool was_stopped = matcher.stopped();
    const std::string emitted = matcher.push(piece);
    if (was_stopped) {
      EXPECT_EQ(emitted, "") << "text emitted after the stop";
    }
    out.emitted += emitted;
    pushed += piece;
    EXPECT_EQ(pushed.compare(0, out.emitted.size(), out.emitted), 0) << "emitted text not pushed";
    if (!matcher.stopped()) {
      const std::string held = pushed.substr(out.emitted.size());
      EXPECT_TRUE(held.empty() || is_proper_prefix_of_a_stop(held, stops))
          << "held back \"" << held << "\", which cannot begin a stop string";
    }
  }
  out.stopped = matcher.stopped();
  out.emitted += matcher.flush();
  return out;
}

// Calls `visit` with every split of `text` into `parts` non-empty pieces.
void for_each_split(const std::string& text, size_t parts,
                    const std::function<void(const std::vector<std::string>&)>& visit) {
  std::vector<std::string> pieces;
  std::function<void(size_t)> recurse = [&](size_t begin) {
    if (pieces.size() + 1 == parts) {
      pieces.push_back(text.substr(begin));
      visit(pieces);
      pieces.pop_back();
      return;
    }
    const size_t remaining_parts = parts - pieces.size();
    for (size_t end = begin + 1; end + remaining_parts - 1 <= text.size(); ++end) {
      pieces.push_back(text.substr(begin, end - begin));
      recurse(end);
      pieces.pop_back();
    }
  };
  if (text.size() >= parts) recurse(0);
}

struct Case {
  const char* name;
  std::vector<std::string> stops;
  std::string text;
  std::string expected;
  bool stopped;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

const std::vector<Case> kCases = {
    {"simple", {"STOP"}, "The end. STOP here", "The end. ", true},
    {"at_beginning", {"<|end|>"}, "<|end|>trailing text", "", true},
    {"whole_text", {"END"}, "END", "", true},
    {"near_miss_then_match", {"abc"}, "aab abx ababc!", "aab abx ab", true},
    {"repeated_first_byte", {"aab"}, "aaaab", "aa", true},
    {"shorter_overlapping_wins", {"abc", "ab"}, "xxabcyy", "xx", true},
    {"first_completed_wins", {"abcd", "bc"}, "zabcd", "za", true},
    {"multiple_stops", {"\n\n", "User:", "###"}, "Sure.\nUser: hi\n\n", "Sure.\n", true},
    {"no_stop_prefix_at_end", {"STOP"}, "all good ST", "all good ST", false},
    {"no_stop", {"STOP", "END"}, "nothing to see", "nothing to see", false},
    {"empty_stop_ignored", {""}, "abc", "abc", false},
    {"unicode_cjk", {"。"}, "日本語。終わり", "日本語", true},
    // 🙂 and 🛑 share their first two UTF-8 bytes.
    {"unicode_emoji", {"🛑"}, "a🙂b🛑c", "a🙂b", true},
    {"unicode_unfinished", {"🛑"}, "a🙂b", "a🙂b", false},
};

class StopCases : public ::testing::TestWithParam<Case> {};

TEST_P(StopCases, SinglePush) {
  const Case& c = GetParam();
  const Outcome out = run(c.stops, {c.text});
  EXPECT_EQ(out.emitted, c.expected);
  EXPECT_EQ(out.stopped, c.stopped);
}

TEST_P(StopCases, EverySplitIntoTwoToFivePieces) {
  const Case& c = GetParam();
  for (size_t parts = 2; parts <= 5; ++parts) {
    for_each_split(c.text, parts, [&](const std::vector<std::string>& pieces) {
      const Outcome out = run(c.stops, pieces);
      std::string joined;
      for (const auto& p : pieces) joined += "[" + p + "]";
      ASSERT_EQ(out.emitted, c.expected) << "pieces " << joined;
      ASSERT_EQ(out.stopped, c.stopped) << "pieces " << joined;
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Stop, StopCases, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(StopStringMatcher, HoldsBackOnlyTheLongestPossibleStart) {
  StopStringMatcher m({"world"});
  EXPECT_EQ(m.push("hello wor"), "hello ");
  EXPECT_EQ(m.push("k"), "work");  // "work" cannot begin "world": released
  EXPECT_EQ(m.push(" and w"), " and ");
  EXPECT_EQ(m.flush(), "w");
  EXPECT_FALSE(m.stopped());
}

TEST(StopStringMatcher, EmitsAtOnceWhenNothingCanBeginAStop) {
  StopStringMatcher m({"</s>"});
  EXPECT_EQ(m.push("plain text"), "plain text");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcher, NothingAfterStop) {
  StopStringMatcher m({"STOP"});
  EXPECT_EQ(m.push("abST"), "ab");
  EXPECT_EQ(m.push("OP and more"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("even more"), "");
  EXPECT_EQ(m.flush(), "");
}

TEST(StopStringMatcher, TellsWhichStopStringWasFound) {
  StopStringMatcher m({"xyz", "END", "EN"});
  EXPECT_EQ(m.push("the E"), "the ");
  EXPECT_EQ(m.matched(), "");
  EXPECT_EQ(m.push("ND"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.matched(), "EN");  // completes first, one byte before END
  StopStringMatcher longer({"EN", "XEN"});
  longer.push("aXEN");
  EXPECT_EQ(longer.matched(), "XEN");  // both end on the same byte: the longer
}

// The outcome must not depend on how the text is chunked: compare random
// chunkings of random texts with a byte-at-a-time reference, where the
// first stop string to complete wins (the longest if several end together).
TEST(StopStringMatcher, RandomChunkingMatchesByteByByteReference) {
  const std::vector<std::string> stops = {"ab", "abc", "bca", "cc"};
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 2000; ++iter) {
    std::string text;
    const size_t len = rng() % 14;
    for (size_t i = 0; i < len; ++i) text += "abcx"[rng() % 4];

    Outcome expected{text, false};
    for (size_t end = 1; end <= text.size() && !expected.stopped; ++end) {
      size_t longest = 0;
      for (const auto& s : stops) {
        if (s.size() <= end && text.compare(end - s.size(), s.size(), s) == 0) {
          longest = std::max(longest, s.size());
        }
      }
      if (longest > 0) expected = {text.substr(0, end - longest), true};
    }

    std::vector<std::string> pieces;
    for (size_t pos = 0; pos < text.size();) {
      const size_t n = 1 + rng() % 4;
      pieces.push_back(text.substr(pos, n));
      pos += n;
    }
    const Outcome out = run(stops, pieces);
    ASSERT_EQ(out.emitted, expected.emitted) << "text " << text;
    ASSERT_EQ(out.stopped, expected.stopped) << "text " << text;
  }
}

}  // namespace
}  // namespace parley
