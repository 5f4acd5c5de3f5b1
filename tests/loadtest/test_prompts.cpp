#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "loadtest/prompts.h"
#include "util/error.h"

using namespace parley::loadtest;

namespace {

size_t word_count(const std::string& s) {
  std::istringstream in(s);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

std::string content(const nlohmann::json& messages) { return messages[0]["content"].get<std::string>(); }

}  // namespace

TEST(LengthRange, FixedAndUniform) {
  const auto fixed = LengthRange::parse("128", "--x");
  EXPECT_EQ(fixed.lo, 128);
  EXPECT_EQ(fixed.hi, 128);
  const auto range = LengthRange::parse("10:20", "--x");
  std::mt19937_64 rng(1);
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int32_t n = range.sample(rng);
    ASSERT_GE(n, 10);
    ASSERT_LE(n, 20);
    seen.insert(n);
  }
  EXPECT_EQ(seen.size(), 11u);  // every value in [10, 20]
  EXPECT_THROW(LengthRange::parse("20:10", "--x"), parley::Error);
  EXPECT_THROW(LengthRange::parse("abc", "--x"), parley::Error);
  EXPECT_THROW(LengthRange::parse("5:", "--x"), parley::Error);
  EXPECT_THROW(LengthRange::parse("-3", "--x"), parley::Error);
}

TEST(Prompts, WordCountsAndDeterminism) {
  std::mt19937_64 a(5), b(5), c(6);
  const std::string x = random_words(100, a);
  EXPECT_EQ(word_count(x), 100u);
  EXPECT_EQ(x, random_words(100, b));
  EXPECT_NE(x, random_words(100, c));
  EXPECT_EQ(random_words(0, a), "");
}

TEST(Prompts, SharedPrefixOnEveryPromptAndDistinctBodies) {
  PromptSource src(LengthRange{20, 20}, 50, 9);
  EXPECT_EQ(word_count(src.prefix()), 50u);
  std::mt19937_64 rng(1);
  std::set<std::string> bodies;
  for (uint64_t i = 0; i < 20; ++i) {
    const std::string p = content(src.opening(i, rng));
    ASSERT_EQ(p.rfind(src.prefix() + " ", 0), 0u) << p;
    EXPECT_EQ(word_count(p), 70u);
    bodies.insert(p.substr(src.prefix().size()));
  }
  EXPECT_EQ(bodies.size(), 20u);
  EXPECT_EQ(word_count(src.follow_up(0, rng)), 20u);  // later turns have no prefix
  EXPECT_EQ(PromptSource(LengthRange{1, 1}, 50, 9).prefix(), src.prefix());  // the prefix depends on the seed only
}

TEST(Prompts, File) {
  const std::string path = ::testing::TempDir() + "/loadtest_prompts.txt";
  {
    std::ofstream out(path);
    out << "plain text prompt\r\n\n"
        << R"({"prompt": "from json"})" << "\n"
        << R"({"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]})" << "\n";
  }
  const auto file = load_prompts_file(path);
  ASSERT_EQ(file.size(), 3u);
  EXPECT_EQ(content(file[0]), "plain text prompt");
  EXPECT_EQ(content(file[1]), "from json");
  EXPECT_EQ(file[2].size(), 2u);
  EXPECT_EQ(messages_text(file[2]), "be brief\nhi");

  PromptSource src(LengthRange{1, 1}, 2, 1, file);
  std::mt19937_64 rng(1);
  EXPECT_EQ(content(src.opening(4, rng)), src.prefix() + " from json");  // entries cycle
  EXPECT_EQ(src.follow_up(2, rng), "be brief\nhi");

  {
    std::ofstream out(path);
    out << R"({"text": "no prompt field"})" << "\n";
  }
  EXPECT_THROW(load_prompts_file(path), parley::Error);
  std::remove(path.c_str());
  EXPECT_THROW(load_prompts_file(path), parley::Error);
}
